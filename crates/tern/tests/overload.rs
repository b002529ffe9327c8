//! Handshake-aware overload control through the binary (`global.max_tls_handshake_rate`): with a
//! low cap, a burst of full handshakes is spread over time and none fails, while a keep-alive
//! connection's requests keep being answered promptly; resumptions pass the cap without waiting.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::HandshakeKind;
use tern_tls::KeyKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;

const WAIT: Duration = Duration::from_secs(15);

/// tern with one ECDSA certificate, one worker and this handshake cap.
fn tern_with_cap(rate: u32) -> Tern {
    tern_with_cap_and(rate, "")
}

/// The same, with another global line.
fn tern_with_cap_and(rate: u32, global: &str) -> Tern {
    let dir = temp_dir("overload");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let toml = Config::new()
        .global(&format!("max_tls_handshake_rate = {rate}\n{global}"))
        .tls(&[&format!("{cert:?}")])
        .frontend("timeouts = { handshake = \"10s\" }")
        .toml();
    Tern::run_in(dir, &toml)
}

/// One TLS connection with one `GET /test`; returns the handshake kind.
async fn one_request(addr: SocketAddr, config: Arc<rustls::ClientConfig>) -> Option<HandshakeKind> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = TlsConnector::from(config).connect(name, tcp).await.unwrap();
    let kind = tls.get_ref().1.handshake_kind();
    tls.write_all(b"GET /test HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out).await;
    assert!(
        out.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    kind
}

#[tokio::test]
async fn a_burst_is_spread_while_keepalive_stays_prompt() {
    burst_spread_keepalive_prompt(tern_with_cap(20)).await;
}

/// The same with the cap applied on the worker's handshake offload thread.
#[tokio::test]
async fn a_burst_is_spread_while_keepalive_stays_prompt_offloaded() {
    burst_spread_keepalive_prompt(tern_with_cap_and(20, "handshake_offload = true")).await;
}

async fn burst_spread_keepalive_prompt(tern: Tern) {
    let addr = tern.addr();
    let mut keepalive = connect(addr, true).await;
    assert_eq!(send(&mut keepalive, get_req("/test")).await.status, 200);

    let burst = 40;
    let start = Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..burst {
        let done = Arc::clone(&done);
        tasks.push(tokio::spawn(async move {
            let kind = tokio::time::timeout(WAIT, one_request(addr, tls_client(false)))
                .await
                .expect("a full handshake waited too long");
            assert_eq!(kind, Some(HandshakeKind::Full));
            done.fetch_add(1, Ordering::Relaxed);
        }));
    }
    // While the burst waits for the cap, the established connection is served at once. Bounded
    // by the burst: at most 200 requests.
    let mut slowest = Duration::ZERO;
    let mut served = 0;
    while done.load(Ordering::Relaxed) < burst && served < 200 {
        let t = Instant::now();
        let got = tokio::time::timeout(WAIT, send(&mut keepalive, get_req("/test")))
            .await
            .expect("keep-alive request stuck behind the handshake cap");
        assert_eq!(got.status, 200);
        slowest = slowest.max(t.elapsed());
        served += 1;
        tokio::task::yield_now().await;
    }
    for t in tasks {
        t.await.unwrap();
    }
    let took = start.elapsed();
    // 40 handshakes at 20/s with a burst of 2 take about 1.9 s; an uncapped tern takes a few ms.
    assert!(
        took >= Duration::from_millis(1500),
        "burst not spread: {took:?}"
    );
    assert!(
        slowest < Duration::from_secs(1),
        "keep-alive slowed: {slowest:?}"
    );
    drop(keepalive);

    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), burst as u64 + 1);
    assert_eq!(c.get("frontend web", "tls_failures"), 0);
    assert_eq!(c.get("frontend web", "tls_timeouts"), 0);
    assert_eq!(c.get("tls web", "rate_expired"), 0);
    assert!(c.get("tls web", "rate_delayed") >= 30, "{c:?}");
}

#[tokio::test]
async fn resumptions_do_not_wait_for_the_cap() {
    let tern = tern_with_cap(2);
    let addr = tern.addr();
    // A session to resume (it takes the one token of the burst).
    let resuming = tls_client(true);
    assert_eq!(
        one_request(addr, Arc::clone(&resuming)).await,
        Some(HandshakeKind::Full)
    );
    // Six full handshakes now need three seconds of the cap.
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let done = Arc::clone(&done);
        tasks.push(tokio::spawn(async move {
            tokio::time::timeout(WAIT, one_request(addr, tls_client(false)))
                .await
                .expect("a full handshake waited too long");
            done.fetch_add(1, Ordering::Relaxed);
        }));
    }
    let t = Instant::now();
    let kind = tokio::time::timeout(WAIT, one_request(addr, resuming))
        .await
        .unwrap();
    assert_eq!(kind, Some(HandshakeKind::Resumed));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(
        done.load(Ordering::Relaxed) < 6,
        "the resumption waited behind the full handshakes"
    );
    for t in tasks {
        t.await.unwrap();
    }

    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_resumed"), 1);
    assert_eq!(c.get("frontend web", "tls_full"), 7);
    assert_eq!(c.get("tls web", "resume_offers"), 1);
    assert_eq!(c.get("tls web", "resume_fallbacks"), 0);
    assert!(c.get("tls web", "rate_delayed") >= 5, "{c:?}");
}
