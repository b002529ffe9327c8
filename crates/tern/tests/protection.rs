//! Backend protection through the real `tern` binary: per-server `maxconn` (over all workers),
//! the backend queue (`max`, `timeout` → 503 exactly when exceeded; a freed slot goes to the
//! queued request), and `retries` with and without `redispatch`.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

/// A backend that holds every request until the test releases it, and remembers how many
/// arrived and how many were in flight at most.
struct Held {
    addr: std::net::SocketAddr,
    arrived: Arc<AtomicUsize>,
    inflight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    release: Arc<Semaphore>,
}

impl Held {
    async fn start() -> Held {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let held = Held {
            addr,
            arrived: Arc::default(),
            inflight: Arc::default(),
            most: Arc::default(),
            release: Arc::new(Semaphore::new(0)),
        };
        let (arrived, inflight, most, release) = (
            Arc::clone(&held.arrived),
            Arc::clone(&held.inflight),
            Arc::clone(&held.most),
            Arc::clone(&held.release),
        );
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let (arrived, inflight, most, release) = (
                    Arc::clone(&arrived),
                    Arc::clone(&inflight),
                    Arc::clone(&most),
                    Arc::clone(&release),
                );
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let mut have = Vec::new();
                    // One request per connection: read its head, hold it, answer and close.
                    while !have.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => have.extend_from_slice(&buf[..n]),
                        }
                    }
                    let now = inflight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    arrived.fetch_add(1, Ordering::SeqCst);
                    let permit = release.acquire().await.unwrap();
                    permit.forget();
                    inflight.fetch_sub(1, Ordering::SeqCst);
                    let _ = s
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                        )
                        .await;
                });
            }
        });
        held
    }

    /// Waits (bounded) until `n` requests have arrived.
    async fn arrived(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.arrived.load(Ordering::SeqCst) < n {
            assert!(
                Instant::now() < deadline,
                "only {} arrived",
                self.arrived.load(Ordering::SeqCst)
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn release(&self, n: usize) {
        self.release.add_permits(n);
    }
}

/// One held server with `maxconn = 1`, and these backend lines.
fn config(held: &Held, backend: &[&str]) -> String {
    Config::new()
        .raw_server(&format!(
            "{{ name = \"h\", address = \"{}\", maxconn = 1 }}",
            held.addr
        ))
        .with_lines(&[], backend)
        .toml()
}

fn spawn_get(addr: std::net::SocketAddr) -> tokio::task::JoinHandle<Got> {
    tokio::spawn(async move { get(addr, false, "/").await })
}

#[tokio::test]
async fn with_no_queue_a_request_beyond_maxconn_gets_503_at_once() {
    let held = Held::start().await;
    let tern = Tern::run(&config(&held, &["queue = { max = 0 }"]));
    let first = spawn_get(tern.addr());
    held.arrived(1).await;
    let start = Instant::now();
    let refused = get(tern.addr(), false, "/").await;
    assert_eq!(refused.status, 503);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    held.release(1);
    assert_eq!(first.await.unwrap().status, 200);
    // The slot is free again.
    let again = spawn_get(tern.addr());
    held.arrived(2).await;
    held.release(1);
    assert_eq!(again.await.unwrap().status, 200);
    assert_eq!(held.most.load(Ordering::SeqCst), 1);
    let counters = tern.stop_clean();
    assert_eq!(counters.get("backend app", "queue_full"), 1);
    assert_eq!(counters.get("backend app", "no_server"), 1);
}

#[tokio::test]
async fn a_queued_request_gets_503_when_the_queue_timeout_passes() {
    let held = Held::start().await;
    let tern = Tern::run(&config(&held, &["queue = { timeout = \"300ms\" }"]));
    let first = spawn_get(tern.addr());
    held.arrived(1).await;
    let start = Instant::now();
    let waited = get(tern.addr(), false, "/").await;
    assert_eq!(waited.status, 503);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(250),
        "answered after {took:?}, before the timeout"
    );
    assert_eq!(
        held.arrived.load(Ordering::SeqCst),
        1,
        "the queued request reached the server"
    );
    held.release(1);
    assert_eq!(first.await.unwrap().status, 200);
    let counters = tern.stop_clean();
    assert_eq!(counters.get("backend app", "queue_timeouts"), 1);
    assert_eq!(counters.get("backend app", "queued"), 1);
}

#[tokio::test]
async fn maxconn_holds_over_all_workers_and_the_queue_drains_in_turn() {
    let held = Held::start().await;
    let tern = Tern::run(
        &Config::new()
            .global("workers = 2")
            .raw_server(&format!(
                "{{ name = \"h\", address = \"{}\", maxconn = 2 }}",
                held.addr
            ))
            .backend("queue = { max = 100, timeout = \"20s\" }")
            .toml()
            .replacen("workers = 1\n", "", 1),
    );
    let requests: Vec<_> = (0..8).map(|_| spawn_get(tern.addr())).collect();
    held.arrived(2).await;
    // Free one slot at a time: each goes to a queued request, never past maxconn.
    for n in 3..=8 {
        held.release(1);
        held.arrived(n).await;
    }
    held.release(2);
    for r in requests {
        assert_eq!(r.await.unwrap().status, 200);
    }
    assert_eq!(held.most.load(Ordering::SeqCst), 2);
    let counters = tern.stop_clean();
    assert_eq!(counters.get("backend app", "no_server"), 0);
    assert!(counters.get("backend app", "queued") >= 1);
}

#[tokio::test]
async fn without_redispatch_retries_stay_on_the_failed_server() {
    let b = Term::start("b");
    let run = |redispatch: bool| {
        Tern::run(
            &Config::new()
                .server("dead", "127.0.0.1:1", 1)
                .terms(&[&b])
                .backend("retries = 2")
                .backend(&format!("redispatch = {redispatch}"))
                .toml(),
        )
    };
    for redispatch in [false, true] {
        let tern = run(redispatch);
        let mut statuses = Vec::new();
        for _ in 0..6 {
            statuses.push(get(tern.addr(), false, "/").await.status);
        }
        let failed = statuses.iter().filter(|&&s| s == 503).count();
        let counters = tern.stop_clean();
        if redispatch {
            assert_eq!(failed, 0, "{statuses:?}");
            // At least every other request met the dead server first (an avoided server keeps
            // its round-robin turn, so it may be met more often).
            assert!(counters.get("backend app", "redispatches") >= 3);
        } else {
            // Round-robin sends every other request to the dead server: 1 try + 2 retries.
            assert_eq!(failed, 3, "{statuses:?}");
            assert_eq!(counters.get("server app/dead", "connect_errors"), 9);
            assert_eq!(counters.get("backend app", "redispatches"), 0);
        }
    }
}
