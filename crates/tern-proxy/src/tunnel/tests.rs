#![allow(clippy::unwrap_used)]

use std::time::Duration;

use tokio::io::{duplex, AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::net::TcpStream;

use super::*;

const TIMEOUT: Duration = Duration::from_secs(10);

/// The tunnel's side of both connections, with what is already in their buffers.
struct Ends {
    client: DuplexStream,
    server: DuplexStream,
    client_buf: Buffer,
    server_buf: Buffer,
}

/// Pipes of `pipe` bytes, buffers of 16 bytes holding `pending` (client's, server's); the
/// client's and the server's own streams.
fn setup(pipe: usize, pending: (&[u8], &[u8])) -> (Ends, DuplexStream, DuplexStream) {
    let (client, client_peer) = duplex(pipe);
    let (server, server_peer) = duplex(pipe);
    let ends = Ends {
        client,
        server,
        client_buf: buffer_with(pending.0),
        server_buf: buffer_with(pending.1),
    };
    (ends, client_peer, server_peer)
}

fn buffer_with(mut bytes: &[u8]) -> Buffer {
    let mut buf = Buffer::new(16, 16);
    if !bytes.is_empty() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let expected = bytes.len();
        let Poll::Ready(Ok(n)) = buf.poll_read_from(&mut bytes, &mut cx) else {
            unreachable!("a slice reads at once")
        };
        assert_eq!(n, expected);
    }
    buf
}

/// What a test tunnel did.
struct Run {
    report: Report,
    /// When the tunnel ended.
    ended: Instant,
    /// Whether the peers finished (by 5 s after the tunnel's end).
    finished: bool,
}

/// Runs the tunnel over `ends` with timeouts `(client, server)` while `peers` plays both
/// peers.
async fn tunnel(
    ends: Ends,
    timeouts: (Duration, Duration),
    peers: impl std::future::Future<Output = ()>,
) -> Run {
    tunnel_with_fin(ends, timeouts, (None, None), peers).await
}

/// As [`tunnel`], with `fin` timeouts `(client, server)`.
async fn tunnel_with_fin(
    mut ends: Ends,
    timeouts: (Duration, Duration),
    fin: (Option<Duration>, Option<Duration>),
    peers: impl std::future::Future<Output = ()>,
) -> Run {
    let mut timer = Timer::default();
    let mut peers = Box::pin(peers);
    let mut finished = false;
    let report = {
        let run = Tunnel::new(
            End {
                io: &mut ends.client,
                buf: &mut ends.client_buf,
                timeout: timeouts.0,
                fin: fin.0,
            },
            End {
                io: &mut ends.server,
                buf: &mut ends.server_buf,
                timeout: timeouts.1,
                fin: fin.1,
            },
            &mut timer,
        )
        .run();
        tokio::pin!(run);
        loop {
            tokio::select! {
                report = &mut run => break report,
                () = &mut peers, if !finished => finished = true,
            }
        }
    };
    let ended = Instant::now();
    drop(ends);
    if !finished {
        finished = tokio::time::timeout(Duration::from_secs(5), peers)
            .await
            .is_ok();
    }
    Run {
        report,
        ended,
        finished,
    }
}

#[tokio::test]
async fn buffered_bytes_leave_first_then_both_ways_until_both_close() {
    let (ends, mut client, mut server) = setup(64, (b"early-up", b"early-down"));
    let Run {
        report, finished, ..
    } = tunnel(ends, (TIMEOUT, TIMEOUT), async {
        let mut got = [0u8; 8];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"early-up");
        let mut got = [0u8; 10];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"early-down");
        // Larger than a buffer and than the pipes: it crosses in pieces.
        let big: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let echo = async {
            let mut back = vec![0u8; big.len()];
            server.read_exact(&mut back).await.unwrap();
            server.write_all(&back).await.unwrap();
        };
        let send = async {
            client.write_all(&big).await.unwrap();
            let mut back = vec![0u8; big.len()];
            client.read_exact(&mut back).await.unwrap();
            assert_eq!(back, big);
        };
        tokio::join!(echo, send);
        client.shutdown().await.unwrap();
        server.shutdown().await.unwrap();
        // Each side sees the other's close.
        assert_eq!(server.read(&mut [0u8; 1]).await.unwrap(), 0);
        assert_eq!(client.read(&mut [0u8; 1]).await.unwrap(), 0);
    })
    .await;
    assert!(finished);
    assert!(matches!(report.ending, Ending::Closed), "{report:?}");
    assert_eq!((report.up, report.down), (1008, 1010));
}

#[tokio::test]
async fn a_half_close_keeps_the_other_direction_open() {
    let (ends, mut client, mut server) = setup(64, (b"", b""));
    let Run {
        report, finished, ..
    } = tunnel(ends, (TIMEOUT, TIMEOUT), async {
        client.write_all(b"bye").await.unwrap();
        client.shutdown().await.unwrap();
        let mut got = Vec::new();
        server.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"bye");
        // The server still talks after the client's end of stream, and the client hears it.
        server.write_all(b"late reply").await.unwrap();
        let mut got = [0u8; 10];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"late reply");
        server.shutdown().await.unwrap();
        assert_eq!(client.read(&mut [0u8; 1]).await.unwrap(), 0);
    })
    .await;
    assert!(finished);
    assert!(matches!(report.ending, Ending::Closed), "{report:?}");
    assert_eq!((report.up, report.down), (3, 10));
}

#[tokio::test]
async fn a_failed_end_ends_the_tunnel_and_names_it() {
    let (ends, client, mut server) = setup(64, (b"", b""));
    let Run {
        report, finished, ..
    } = tunnel(ends, (TIMEOUT, TIMEOUT), async {
        // The client is gone: the server's bytes cannot be written to it.
        drop(client);
        server.write_all(b"anyone?").await.unwrap();
        // The client's end of stream was passed on.
        assert_eq!(server.read(&mut [0u8; 1]).await.unwrap(), 0);
    })
    .await;
    assert!(finished);
    assert!(
        matches!(report.ending, Ending::Failed(Side::Client, _)),
        "{report:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_idle_tunnel_expires_after_the_shorter_timeout() {
    let (ends, client, server) = setup(64, (b"", b""));
    let started = Instant::now();
    let Run { report, ended, .. } = tunnel(
        ends,
        (Duration::from_secs(30), Duration::from_secs(5)),
        async {
            // Both peers stay, silent.
            let _keep = (&client, &server);
            std::future::pending::<()>().await;
        },
    )
    .await;
    assert!(
        matches!(report.ending, Ending::Timeout(Side::Server)),
        "{report:?}"
    );
    assert_eq!((ended - started).as_secs(), 5);
}

#[tokio::test(start_paused = true)]
async fn traffic_one_way_keeps_both_ends_alive() {
    let (ends, mut client, server) = setup(64, (b"", b""));
    let started = Instant::now();
    let Run { report, ended, .. } = tunnel(
        ends,
        (Duration::from_secs(5), Duration::from_secs(5)),
        async {
            let _keep = &server;
            // The client sends every 2 s for 20 s (the server reads nothing: the bytes wait in
            // the pipe, which has room); the server side never sends.
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_secs(2)).await;
                client.write_all(b"x").await.unwrap();
            }
            std::future::pending::<()>().await;
        },
    )
    .await;
    assert!(matches!(report.ending, Ending::Timeout(_)), "{report:?}");
    assert_eq!((ended - started).as_secs(), 25);
    assert_eq!(report.up, 10);
}

#[tokio::test(start_paused = true)]
async fn a_receiver_that_takes_nothing_expires_while_the_other_way_moves() {
    // Small pipes: the client's reads stop, the server's bytes fill the way down.
    let (ends, mut client, mut server) = setup(8, (b"", b""));
    let started = Instant::now();
    let Run { report, ended, .. } = tunnel(
        ends,
        (Duration::from_secs(5), Duration::from_secs(60)),
        async {
            let flood = async {
                // Blocks once the pipe and the tunnel's buffer are full.
                let _ = server.write_all(&[7u8; 4096]).await;
                std::future::pending::<()>().await;
            };
            let chatter = async {
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    if client.write_all(b"p").await.is_err() {
                        break;
                    }
                }
                std::future::pending::<()>().await;
            };
            tokio::join!(flood, chatter);
        },
    )
    .await;
    assert!(
        matches!(report.ending, Ending::Timeout(Side::Client)),
        "{report:?}"
    );
    assert_eq!((ended - started).as_secs(), 5);
}

/// One peer half-closes, then both stay silent: the end towards which the direction closed
/// gets its `fin` timeout.
#[tokio::test(start_paused = true)]
async fn after_a_half_close_the_other_end_gets_its_fin_timeout() {
    let long = Duration::from_secs(30);
    // The client finished: the way to the server is closed, the server end gets `server_fin`.
    let (ends, mut client, mut server) = setup(64, (b"", b""));
    let started = Instant::now();
    let Run { report, ended, .. } = tunnel_with_fin(
        ends,
        (long, long),
        (Some(Duration::from_secs(3)), Some(Duration::from_secs(2))),
        async {
            client.shutdown().await.unwrap();
            assert_eq!(server.read(&mut [0u8; 1]).await.unwrap(), 0);
            let _keep = (&client, &server);
            std::future::pending::<()>().await;
        },
    )
    .await;
    assert!(
        matches!(report.ending, Ending::Timeout(Side::Server)),
        "{report:?}"
    );
    assert_eq!((ended - started).as_secs(), 2);
    // The server finished: the client end gets `client_fin`.
    let (ends, mut client, mut server) = setup(64, (b"", b""));
    let started = Instant::now();
    let Run { report, ended, .. } = tunnel_with_fin(
        ends,
        (long, long),
        (Some(Duration::from_secs(3)), Some(Duration::from_secs(2))),
        async {
            server.shutdown().await.unwrap();
            assert_eq!(client.read(&mut [0u8; 1]).await.unwrap(), 0);
            let _keep = (&client, &server);
            std::future::pending::<()>().await;
        },
    )
    .await;
    assert!(
        matches!(report.ending, Ending::Timeout(Side::Client)),
        "{report:?}"
    );
    assert_eq!((ended - started).as_secs(), 3);
    // Without `fin` timeouts a half-closed tunnel keeps its own.
    let (ends, mut client, mut server) = setup(64, (b"", b""));
    let started = Instant::now();
    let Run { ended, .. } = tunnel(ends, (long, long), async {
        server.shutdown().await.unwrap();
        assert_eq!(client.read(&mut [0u8; 1]).await.unwrap(), 0);
        let _keep = (&client, &server);
        std::future::pending::<()>().await;
    })
    .await;
    assert_eq!((ended - started).as_secs(), 30);
}

/// A connected pair of loopback sockets: (the connecting side, the accepted side).
async fn socket_pair() -> (TcpStream, TcpStream) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (connected, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
    (connected.unwrap(), accepted.unwrap().0)
}

fn itself(tcp: &TcpStream) -> Option<&TcpStream> {
    Some(tcp)
}

/// Runs a tunnel between two loopback connections, allowed to splice, while `peers` plays
/// the client (first argument) and the server; `client_pending` is already in the client's
/// buffer. The tunnel's sockets close when it ends, as the relay's do.
async fn spliced_tunnel<F>(
    client_pending: &[u8],
    peers: impl FnOnce(TcpStream, TcpStream) -> F,
) -> Report
where
    F: std::future::Future<Output = ()>,
{
    let (client, mut client_end) = socket_pair().await;
    let (mut server_end, server) = socket_pair().await;
    let (mut client_buf, mut server_buf) = (buffer_with(client_pending), Buffer::new(16, 16));
    let mut timer = Timer::default();
    let mut peers = Box::pin(peers(client, server));
    let mut finished = false;
    let report = {
        let tunnel = Tunnel::new(
            End {
                io: &mut client_end,
                buf: &mut client_buf,
                timeout: TIMEOUT,
                fin: None,
            },
            End {
                io: &mut server_end,
                buf: &mut server_buf,
                timeout: TIMEOUT,
                fin: None,
            },
            &mut timer,
        )
        .spliced(itself, itself);
        assert!(tunnel.sockets.is_some());
        let run = tunnel.run();
        tokio::pin!(run);
        loop {
            tokio::select! {
                report = &mut run => break report,
                () = &mut peers, if !finished => finished = true,
            }
        }
    };
    drop((client_end, server_end));
    if !finished {
        tokio::time::timeout(Duration::from_secs(5), peers)
            .await
            .unwrap();
    }
    report
}

#[tokio::test]
async fn spliced_buffered_bytes_first_then_both_ways_and_half_closes() {
    // More than a pipe holds, in both directions.
    let big: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let sent = big.clone();
    let report = spliced_tunnel(b"early", |mut client, mut server| async move {
        let echo = async {
            let mut got = Vec::new();
            // Until the client's FIN came through.
            server.read_to_end(&mut got).await.unwrap();
            server.write_all(&got).await.unwrap();
            server.shutdown().await.unwrap();
        };
        let send = async {
            client.write_all(&sent).await.unwrap();
            client.shutdown().await.unwrap();
            let mut back = Vec::new();
            client.read_to_end(&mut back).await.unwrap();
            back
        };
        let ((), back) = tokio::join!(echo, send);
        assert_eq!(&back[..5], b"early");
        assert!(back[5..] == sent[..], "the bytes came back changed");
    })
    .await;
    assert!(matches!(report.ending, Ending::Closed), "{report:?}");
    let total = big.len() as u64 + 5;
    assert_eq!((report.up, report.down), (total, total));
}

#[tokio::test]
async fn spliced_server_reset_fails_the_server_side() {
    let report = spliced_tunnel(b"", |mut client, mut server| async move {
        // Larger than the buffer: the direction splices.
        client.write_all(&[1u8; 1000]).await.unwrap();
        let mut got = [0u8; 1000];
        server.read_exact(&mut got).await.unwrap();
        reset(&server);
        drop(server);
        // The client stays until the tunnel saw the reset.
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(client);
    })
    .await;
    assert!(
        matches!(report.ending, Ending::Failed(Side::Server, _)),
        "{report:?}"
    );
}
