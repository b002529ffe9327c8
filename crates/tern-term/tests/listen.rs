//! Binding, threads, several addresses, counters and shutdown.
#![allow(clippy::unwrap_used)]

mod support;

use std::net::{SocketAddr, TcpListener};

use http::StatusCode;
use support::*;
use tern_term::{TermError, TermOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[test]
fn port_in_use_is_an_error_naming_the_address() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap();
    let err = tern_term::start(TermOptions::new(addr)).unwrap_err();
    assert!(
        matches!(err, TermError::Bind { addr: a, .. } if a == addr),
        "{err:?}"
    );
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
}

#[test]
fn a_second_term_cannot_share_the_port() {
    let (_first, addr) = start(2);
    let err = tern_term::start(TermOptions::new(addr)).unwrap_err();
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
}

#[test]
fn invalid_options_are_refused() {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let no_listen = TermOptions {
        listen: vec![],
        ..TermOptions::new(addr)
    };
    assert!(matches!(
        tern_term::start(no_listen),
        Err(TermError::NoListen)
    ));
    assert!(matches!(
        tern_term::start(options(0)),
        Err(TermError::NoThreads)
    ));
    let bad_name = TermOptions {
        name: Some("a\nb".into()),
        ..options(1)
    };
    assert!(matches!(
        tern_term::start(bad_name),
        Err(TermError::InvalidName(_))
    ));
    let no_cpus = TermOptions {
        cpus: Some(vec![]),
        ..options(1)
    };
    assert!(matches!(tern_term::start(no_cpus), Err(TermError::NoCpus)));
}

#[tokio::test]
async fn two_threads_serve_many_connections() {
    let (term, addr) = start(2);
    for i in 0..20 {
        let (parts, body) = get(addr, &format!("/?s={i}")).await;
        assert_eq!(parts.status, StatusCode::OK);
        assert_eq!(body.len(), i);
    }
    let stats = term.stats();
    assert_eq!((stats.connections, stats.requests), (20, 20));
    assert_eq!(stats.bytes_sent, (0..20).sum::<u64>());
}

#[tokio::test]
async fn pinned_threads_serve() {
    let cpus = (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
    let opts = TermOptions {
        cpus: Some(cpus),
        ..options(2)
    };
    let term = tern_term::start(opts).unwrap();
    let (parts, _) = get(term.local_addrs()[0], "/").await;
    assert_eq!(parts.status, StatusCode::OK);
}

#[tokio::test]
async fn every_listen_address_is_served() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let opts = TermOptions {
        listen: vec![any, any],
        ..options(2)
    };
    let term = tern_term::start(opts).unwrap();
    let addrs = term.local_addrs().to_vec();
    assert_eq!(addrs.len(), 2);
    assert_ne!(addrs[0], addrs[1]);
    for addr in addrs {
        let (parts, _) = get(addr, "/").await;
        assert_eq!(parts.status, StatusCode::OK);
    }
}

#[tokio::test]
async fn shutdown_closes_the_listeners_and_idle_connections() {
    let (term, addr) = start(2);
    let mut idle = bounded(tokio::net::TcpStream::connect(addr)).await.unwrap();
    idle.write_all(b"GET /?s=3 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    read_until(&mut idle, &mut buf, b"\r\n\r\n012").await;
    term.shutdown();
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    // The idle keep-alive connection was closed by the server: EOF, nothing more.
    let mut rest = Vec::new();
    bounded(idle.read_to_end(&mut rest)).await.unwrap();
    assert!(rest.is_empty());
}

#[tokio::test]
async fn shutdown_is_bounded_with_a_response_in_flight() {
    let (term, addr) = start(1);
    let mut slow = bounded(tokio::net::TcpStream::connect(addr)).await.unwrap();
    slow.write_all(b"GET /?t=60000 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    bounded(async {
        while term.stats().requests == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    let t0 = std::time::Instant::now();
    term.shutdown();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(4),
        "{:?}",
        t0.elapsed()
    );
    let mut rest = Vec::new();
    // Cut without a response: EOF or reset, never a 200.
    let _ = bounded(slow.read_to_end(&mut rest)).await;
    assert!(rest.is_empty());
}
