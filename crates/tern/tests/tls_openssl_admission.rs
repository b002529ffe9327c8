//! OpenSSL binds (`tls.engine = "openssl"`) under the handshake caps and handshake offload,
//! through the real binary, as rustls binds are (overload.rs, offload.rs): legacy clients
//! (`openssl s_client -cipher AES128-SHA`, curl over HTTP/2) are spread by
//! `max_tls_handshake_rate`, refused past `max_tls_handshakes_per_source`, resumptions pass
//! the cap, and with `handshake_offload` the handshakes run on the offload thread (where the
//! rate cap lives) and the worker serves the requests. Skipped (with a message) where openssl
//! is not installed.

// The engine exists in the default build only (`openssl-engine`).
#![cfg(feature = "openssl-engine")]
#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::*;
use support::*;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// A static-RSA, CBC suite: a client rustls could not serve.
const LEGACY: &[&str] = &["-tls1_2", "-cipher", "AES128-SHA"];

fn tools() -> bool {
    if have("openssl") {
        return true;
    }
    println!("skipped: openssl not installed");
    false
}

/// tern with one worker, an RSA certificate on one OpenSSL bind that serves `AES128-SHA`, and
/// these global lines.
fn tern_legacy(tag: &str, global: &str) -> Tern {
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let bind = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}], engine = \"openssl\", \
         ciphers = [\"AES128-SHA\", \"ECDHE-RSA-AES128-GCM-SHA256\"] }} }}"
    );
    let toml = Config::new()
        .global(global)
        .binds(&[&bind])
        .frontend("timeouts = { handshake = \"10s\" }")
        .toml();
    Tern::run_in(dir, &toml)
}

/// One legacy handshake and a `GET /test` (answered by tern's monitor URI).
fn legacy_request(addr: SocketAddr) -> SClient {
    s_client(addr, Some("localhost"), LEGACY, Some(CLOSE_REQUEST))
}

/// A full handshake on `AES128-SHA` (s_client names the suite's protocol, `SSLv3`, not the
/// version), and the monitor's 200.
fn assert_served(s: &SClient) {
    let full = s.out.contains("\nNew, SSLv3, Cipher is AES128-SHA");
    assert!(s.ok && full, "s_client failed:\n{}", s.out);
    assert!(s.out.contains("HTTP/1.1 200"), "no 200:\n{}", s.out);
}

/// `n` legacy clients at once; returns how long they all took.
fn burst(tern: &Tern, n: usize) -> Duration {
    let addr = tern.addr();
    let start = Instant::now();
    std::thread::scope(|scope| {
        let clients: Vec<_> = (0..n)
            .map(|_| scope.spawn(move || legacy_request(addr)))
            .collect();
        for client in clients {
            assert_served(&client.join().unwrap());
        }
    });
    start.elapsed()
}

/// With a rate of 4/s (a burst of one), 9 full handshakes at once take two seconds: each
/// waits for its token, none fails, and the counters say so.
#[test]
fn the_rate_cap_spreads_legacy_handshakes() {
    if !tools() {
        return;
    }
    let tern = tern_legacy("ossl-rate", "max_tls_handshake_rate = 4");
    let took = burst(&tern, 9);
    assert!(took >= Duration::from_millis(1500), "not spread: {took:?}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 9);
    assert_eq!(c.get("frontend web", "tls_failures"), 0);
    assert_eq!(c.get("tls web", "rate_expired"), 0);
    assert!(c.get("tls web", "rate_delayed") >= 6, "{c:?}");
}

/// A source over its budget (2/s, a burst of 2) is refused at once, not delayed.
#[test]
fn a_source_over_its_budget_is_refused() {
    if !tools() {
        return;
    }
    let tern = tern_legacy("ossl-source", "max_tls_handshakes_per_source = 2");
    let served = (0..6).filter(|_| legacy_request(tern.addr()).ok).count();
    assert!((2..=4).contains(&served), "{served} of 6 served");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), served as u64);
    assert_eq!(c.get("tls web", "source_refused"), 6 - served as u64);
    assert_eq!(c.get("tls web", "rate_delayed"), 0);
}

/// A TLS 1.2 ticket resumption passes a cap whose token is spent (counted as an offer), where
/// a full handshake would wait a second.
#[test]
fn a_resumption_passes_the_cap() {
    if !tools() {
        return;
    }
    let tern = tern_legacy("ossl-resume", "max_tls_handshake_rate = 1");
    let session = temp_dir("ossl-resume-session").join("session.pem");
    let session = session.to_str().unwrap();
    let mut args = LEGACY.to_vec();
    args.extend(["-sess_out", session]);
    let first = s_client(tern.addr(), Some("localhost"), &args, Some(CLOSE_REQUEST));
    assert_served(&first);
    let mut args = LEGACY.to_vec();
    args.extend(["-sess_in", session]);
    let start = Instant::now();
    let again = s_client(tern.addr(), Some("localhost"), &args, Some(CLOSE_REQUEST));
    let reused = again.out.contains("\nReused, SSLv3, Cipher is AES128-SHA");
    assert!(again.ok && reused, "not resumed:\n{}", again.out);
    assert!(again.out.contains("HTTP/1.1 200"), "{}", again.out);
    assert!(start.elapsed() < Duration::from_millis(800), "it waited");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_resumed"), 1);
    assert_eq!(c.get("tls web", "resume_offers"), 1);
    assert_eq!(c.get("tls web", "resume_fallbacks"), 0);
    assert_eq!(c.get("tls web", "rate_delayed"), 0);
}

/// With offload, the OpenSSL bind's listener is on the offload thread: legacy handshakes
/// succeed there and requests are served by the worker. The rate cap applies only where the
/// handshakes run (the worker has none with offload on), so handshakes delayed by it show they
/// ran on the offload thread.
#[test]
fn offloaded_legacy_handshakes_are_capped_and_served() {
    if !tools() {
        return;
    }
    let global = "handshake_offload = true\nmax_tls_handshake_rate = 4\nprofiling = true";
    let tern = tern_legacy("ossl-offload", global);
    assert_eq!(tern.proc.threads_named("tern-offload"), 1);
    let took = burst(&tern, 6);
    assert!(took >= Duration::from_millis(900), "not spread: {took:?}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 6);
    assert_eq!(c.get("frontend web", "requests"), 6);
    assert!(c.get("tls web", "rate_delayed") >= 3, "{c:?}");
    assert!(c.get("profile tls_handshake", "calls") >= 6, "{c:?}");
}

/// HTTP/2 over a CBC suite on an offloaded OpenSSL bind: the session handed to the worker
/// carries ALPN, and the worker serves HTTP/2 on it.
#[test]
fn offloaded_http2_over_a_legacy_suite() {
    if !tools() || !have("curl") {
        println!("skipped: curl not installed");
        return;
    }
    let tern = tern_legacy("ossl-offload-h2", "handshake_offload = true");
    let port = tern.addr().port();
    let out = std::process::Command::new("curl")
        .args(["-sk", "--max-time", "10", "--http2", "--tls-max", "1.2"])
        .args(["--ciphers", "AES128-SHA"])
        .args(["-w", "%{http_code} %{http_version}", "-o", "/dev/null"])
        .arg(format!("https://localhost:{port}/test"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "200 2", "{out:?}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 1);
}
