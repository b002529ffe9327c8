//! Hot certificate reload through the real binary: SIGHUP reloads the configuration and with it
//! re-reads the certificate files; new connections get the new certificate while a keep-alive
//! connection opened before gets its next answer (then closes, its generation draining); a
//! broken file on the next SIGHUP keeps everything as it was, and the log names the file and the
//! reason. The exit counters count both reloads. OCSP responses and the ticket key
//! file are read again with the certificates.

#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::*;
use support::*;

use std::path::Path;
use std::time::{Duration, Instant};

use rustls::pki_types::CertificateDer;
use rustls::version::{TLS12, TLS13};
use rustls::HandshakeKind;
use tern_tls::KeyKind;

/// Waits (bounded) until tern's log holds `nth` lines (from 1) containing `needle`; returns the
/// last of them.
fn wait_log(tern: &Tern, needle: &str, nth: usize) -> String {
    let deadline = Instant::now() + TLS_WAIT;
    loop {
        let text = tern.proc.stderr_text();
        if let Some(line) = text.lines().filter(|l| l.contains(needle)).nth(nth - 1) {
            return line.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no log line containing {needle:?}; stderr:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes a new certificate for `site.test` and moves it over `pem`, as a deployment would.
fn replace_cert(dir: &Path, pem: &Path) -> CertificateDer<'static> {
    let staging = dir.join("staging");
    std::fs::create_dir_all(&staging).unwrap();
    let leaf = write_named_cert(&staging, "site", &["site.test"], KeyKind::EcdsaP256);
    std::fs::rename(staging.join("site.pem"), pem).unwrap();
    leaf
}

#[tokio::test]
async fn sighup_swaps_certificates_and_a_broken_file_keeps_them() {
    sighup_swaps_certificates(false).await;
}

/// The same with the handshakes on the workers' offload threads, which hold the listeners.
#[tokio::test]
async fn sighup_swaps_certificates_and_a_broken_file_keeps_them_offloaded() {
    sighup_swaps_certificates(true).await;
}

async fn sighup_swaps_certificates(offload: bool) {
    let dir = temp_dir("reload");
    let a = write_named_cert(&dir, "site", &["site.test"], KeyKind::EcdsaP256);
    let pem = dir.join("site.pem");
    let mut config = Config::new().frontend(&format!("tls = {{ certs = [{}] }}", toml_path(&pem)));
    // Two workers: each has its own copy of the configuration, and both must swap.
    config.global = vec![
        "workers = 2".into(),
        format!("handshake_offload = {offload}"),
    ];
    let tern = Tern::run_in(dir.clone(), &config.toml());
    let client = rustls_client(&[&TLS13, &TLS12], false);
    let addr = tern.addr();

    let (mut kept, n) = tls_connect(addr, client.clone(), "site.test").await;
    assert_eq!(n.leaf.as_ref(), Some(&a));
    assert_eq!(bounded_get(&mut kept, "/test").await.status, 200);

    // Certificate B for the same name replaces A on disk; SIGHUP swaps it in.
    let b = replace_cert(&dir, &pem);
    assert_ne!(a, b);
    tern.proc.signal("HUP");
    wait_log(&tern, "new generation serving", 1);
    for _ in 0..6 {
        let n = handshake_and_get(addr, client.clone(), "site.test").await;
        assert_eq!(n.leaf.as_ref(), Some(&b), "a connection after the reload");
    }
    // The connection from before the reload belongs to the old generation, which drains: its
    // next request is served (on A's session) and the answer says the connection closes.
    let last = bounded_get(&mut kept, "/test").await;
    assert_eq!(last.status, 200);
    assert_eq!(last.header("connection"), Some("close"));
    let (mut kept, _) = tls_connect(addr, client.clone(), "site.test").await;

    // A broken file: the reload is refused, the log says which file and why, B stays, and the
    // running generation (with its connections) is left alone.
    std::fs::write(&pem, "not a certificate\n").unwrap();
    tern.proc.signal("HUP");
    let line = wait_log(&tern, "reload refused", 1);
    assert!(line.contains(pem.to_str().unwrap()), "{line}");
    assert!(line.contains("no certificate found"), "{line}");
    for _ in 0..4 {
        let n = handshake_and_get(addr, client.clone(), "site.test").await;
        assert_eq!(n.leaf.as_ref(), Some(&b), "the certificate in use is kept");
    }
    assert_eq!(bounded_get(&mut kept, "/test").await.status, 200);
    drop(kept);

    let counters = tern.stop_clean();
    assert_eq!(counters.get("reload config", "reloads"), 1);
    assert_eq!(counters.get("reload config", "failed"), 1);
}

/// Ticket keys in the 48-byte form (16-byte name, 32-byte key), base64.
const KEY_ONE: &str = "dGVybi10ZXN0LWtleS0wMQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";
const KEY_TWO: &str = "dGVybi10ZXN0LWtleS0wMmRlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKD";

/// The OCSP response stapled on a new connection (stapled as is, so any bytes do).
async fn stapled(addr: std::net::SocketAddr) -> Option<Vec<u8>> {
    let (client, recorder) = ocsp_client();
    handshake_and_get(addr, client, "site.test").await;
    let response = recorder.stapled.lock().unwrap().clone();
    response
}

#[tokio::test]
async fn sighup_rereads_ocsp_responses_and_the_ticket_key_file() {
    let dir = temp_dir("reload-files");
    write_named_cert(&dir, "site", &["site.test"], KeyKind::EcdsaP256);
    let pem = dir.join("site.pem");
    std::fs::write(dir.join("site.pem.ocsp"), b"first response").unwrap();
    std::fs::write(dir.join("tickets.key"), format!("{KEY_ONE}\n")).unwrap();
    let tls = format!(
        "tls = {{ certs = [{}], resumption = {{ ticket_key_file = \"tickets.key\" }} }}",
        toml_path(&pem)
    );
    let tern = Tern::run_in(dir.clone(), &Config::new().frontend(&tls).toml());
    let addr = tern.addr();
    assert_eq!(stapled(addr).await.as_deref(), Some(&b"first response"[..]));
    let resuming = rustls_client(&[&TLS13], true);
    let n = handshake_and_get(addr, resuming.clone(), "site.test").await;
    assert_eq!(n.kind, Some(HandshakeKind::Full));

    // A refreshed OCSP response is stapled after the reload; the unchanged key file still
    // opens the tickets issued before it.
    std::fs::write(dir.join("site.pem.ocsp"), b"second response").unwrap();
    tern.proc.signal("HUP");
    wait_log(&tern, "new generation serving", 1);
    assert_eq!(
        stapled(addr).await.as_deref(),
        Some(&b"second response"[..])
    );
    let n = handshake_and_get(addr, resuming.clone(), "site.test").await;
    assert_eq!(
        n.kind,
        Some(HandshakeKind::Resumed),
        "same keys across a reload"
    );

    // A key file holding only a new key: tickets of the old one no longer open.
    let before = rustls_client(&[&TLS13], true);
    handshake_and_get(addr, before.clone(), "site.test").await;
    std::fs::write(dir.join("tickets.key"), format!("{KEY_TWO}\n")).unwrap();
    tern.proc.signal("HUP");
    wait_log(&tern, "new generation serving", 2);
    let n = handshake_and_get(addr, before.clone(), "site.test").await;
    assert_eq!(n.kind, Some(HandshakeKind::Full), "the old key is gone");
    let n = handshake_and_get(addr, before, "site.test").await;
    assert_eq!(n.kind, Some(HandshakeKind::Resumed), "the new key works");

    let counters = tern.stop_clean();
    assert_eq!(counters.get("reload config", "reloads"), 2);
    assert_eq!(counters.get("reload config", "failed"), 0);
}
