#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::time::Duration;

use tern_config::PoolSettings;
use tokio::net::TcpListener;

use super::*;
use crate::exchange::upstream;

const SETTINGS: PoolSettings = PoolSettings {
    max_idle_per_server: 2,
    idle_timeout: Duration::from_secs(30),
};

/// A server connection from tern's side, and the server's side of it.
async fn pair(listener: &TcpListener) -> (ServerConn, std::net::TcpStream) {
    let addr = listener.local_addr().unwrap();
    let conn = upstream::connect(addr, Duration::from_secs(5), None, None)
        .await
        .unwrap();
    let (server, _) = listener.accept().await.unwrap();
    (conn, server.into_std().unwrap())
}

fn local_port(c: &ServerConn) -> u16 {
    c.stream.tcp().unwrap().local_addr().unwrap().port()
}

#[tokio::test]
async fn most_recent_first_and_capped_per_server() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let pools = Pools::new(&[(1, SETTINGS)]);
    let mut held = Vec::new();
    let mut ports = Vec::new();
    for _ in 0..3 {
        let (conn, server) = pair(&listener).await;
        ports.push(local_port(&conn));
        held.push(server);
        pools.checkin(0, 0, conn);
    }
    // The third went over the cap of two and was closed.
    assert_eq!(
        local_port(
            &pools
                .checkout(0, 0, None, None, listener.local_addr().unwrap())
                .unwrap()
        ),
        ports[1]
    );
    assert_eq!(
        local_port(
            &pools
                .checkout(0, 0, None, None, listener.local_addr().unwrap())
                .unwrap()
        ),
        ports[0]
    );
    assert!(pools
        .checkout(0, 0, None, None, listener.local_addr().unwrap())
        .is_none());
}

#[tokio::test]
async fn connections_the_server_closed_or_wrote_to_are_not_reused() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let pools = Pools::new(&[(1, SETTINGS)]);

    let (closed, server) = pair(&listener).await;
    drop(server);
    // Wait until the event loop has seen the close (readiness is what the pool looks at).
    closed.stream.tcp().unwrap().readable().await.unwrap();
    pools.checkin(0, 0, closed);

    let (stray, mut server) = pair(&listener).await;
    server.write_all(b"HTTP/1.1 200 OK\r\n").unwrap();
    stray.stream.tcp().unwrap().readable().await.unwrap();
    pools.checkin(0, 0, stray);
    assert!(
        pools
            .checkout(0, 0, None, None, listener.local_addr().unwrap())
            .is_none(),
        "stray bytes or a close: discarded"
    );

    let (quiet, _server) = pair(&listener).await;
    let port = local_port(&quiet);
    pools.checkin(0, 0, quiet);
    assert_eq!(pools.sweep(), 1, "a quiet connection stays");
    assert_eq!(
        local_port(
            &pools
                .checkout(0, 0, None, None, listener.local_addr().unwrap())
                .unwrap()
        ),
        port
    );
}

#[tokio::test]
async fn idle_connections_expire_at_checkout_and_in_the_sweep() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    // An idle timeout of zero: every idle connection is already too old.
    let expired = PoolSettings {
        idle_timeout: Duration::ZERO,
        ..SETTINGS
    };
    let pools = Pools::new(&[(2, expired)]);
    let (a, _sa) = pair(&listener).await;
    let (b, _sb) = pair(&listener).await;
    pools.checkin(0, 0, a);
    pools.checkin(0, 1, b);
    assert!(
        pools
            .checkout(0, 0, None, None, listener.local_addr().unwrap())
            .is_none(),
        "expired at checkout"
    );
    assert_eq!(pools.sweep(), 0, "expired in the sweep");
}

#[tokio::test]
async fn unknown_backends_and_servers_are_ignored() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let pools = Pools::new(&[(1, SETTINGS)]);
    let (conn, _server) = pair(&listener).await;
    pools.checkin(3, 0, conn);
    assert!(pools
        .checkout(3, 0, None, None, listener.local_addr().unwrap())
        .is_none());
    assert!(pools
        .checkout(0, 7, None, None, listener.local_addr().unwrap())
        .is_none());
    assert_eq!(pools.sweep(), 0);
}

#[tokio::test]
async fn proxy_protocol_connections_serve_only_their_own_client_connection() {
    use std::io::Read;

    use tern_config::ProxyProtocol;

    use crate::exchange::proxy_header::Origin;

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let pools = Pools::new(&[(1, SETTINGS)]);
    let alice = Origin::Client {
        source: "192.0.2.1:40000".parse().unwrap(),
        destination: "127.0.0.1:443".parse().unwrap(),
    };
    let alice_again = Origin::Client {
        source: "192.0.2.1:40001".parse().unwrap(),
        destination: "127.0.0.1:443".parse().unwrap(),
    };
    let conn = upstream::connect(
        addr,
        Duration::from_secs(5),
        None,
        Some(crate::exchange::proxy_header::Proxied {
            version: ProxyProtocol::V1,
            origin: alice,
            tls: None,
            crc32c: false,
            custom: None,
        }),
    )
    .await
    .unwrap();
    let (server, _) = listener.accept().await.unwrap();
    let mut server = server.into_std().unwrap();
    server.set_nonblocking(false).unwrap();
    let line = b"PROXY TCP4 192.0.2.1 127.0.0.1 40000 443\r\n";
    let mut got = vec![0u8; line.len()];
    server.read_exact(&mut got).unwrap();
    assert_eq!(got, line, "the header is the first thing sent");

    pools.checkin(0, 0, conn);
    for other in [None, Some(alice_again), Some(Origin::Unknown)] {
        assert!(
            pools.checkout(0, 0, None, other, addr).is_none(),
            "{other:?} must not take alice's connection"
        );
    }
    // The failed lookups above left it in place.
    assert!(pools.checkout(0, 0, None, Some(alice), addr).is_some());
}
