//! The TLS counters of the exit summary (`stats: tls web ...`, `stats: tls_suites web ...`,
//! `stats: tls_latency web ...`): handshakes counted by protocol version, cipher suite,
//! key-exchange group and certificate type, as the clients negotiated them; failures counted by
//! reason (no shared cipher, plain HTTP on a TLS port, a handshake timeout).

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rustls::crypto::aws_lc_rs::{cipher_suite, kx_group};
use rustls::pki_types::ServerName;
use rustls::version::{TLS12, TLS13};
use tern_tls::{ClientOptions, KeyKind, Verify};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;

const WAIT: Duration = Duration::from_secs(10);

/// A client offering only these versions, groups and suites (resumption as asked).
fn client(
    versions: &[&'static rustls::SupportedProtocolVersion],
    groups: &[&'static dyn rustls::crypto::SupportedKxGroup],
    suites: &[rustls::SupportedCipherSuite],
    resumption: bool,
) -> Arc<rustls::ClientConfig> {
    let mut provider = (*tern_tls::provider()).clone();
    if !groups.is_empty() {
        provider.kx_groups = groups.to_vec();
    }
    if !suites.is_empty() {
        provider.cipher_suites = suites.to_vec();
    }
    let opts = ClientOptions {
        verify: Verify::Insecure,
        resumption,
        versions: Some(versions.to_vec()),
        ..ClientOptions::default()
    };
    tern_tls::client_config_with_provider(&opts, Arc::new(provider)).unwrap()
}

/// One TLS connection with one `GET /test` (answered by tern's monitor URI), then close.
async fn one_request(addr: SocketAddr, config: Arc<rustls::ClientConfig>, sni: &str) -> String {
    tokio::time::timeout(WAIT, async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let name = ServerName::try_from(sni.to_owned()).unwrap();
        let mut tls = TlsConnector::from(config).connect(name, tcp).await.unwrap();
        tls.write_all(b"GET /test HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut out = Vec::new();
        let _ = tls.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out).into_owned()
    })
    .await
    .expect("request timed out")
}

#[tokio::test]
async fn handshakes_are_counted_by_version_suite_group_and_certificate() {
    counted_by_version_suite_group_and_certificate(false).await;
}

/// The same handshakes with their crypto on the workers' offload threads: the certificate type
/// is still noted (the resolver runs on the offload thread) and nothing else changes.
#[tokio::test]
async fn offloaded_handshakes_are_counted_the_same() {
    counted_by_version_suite_group_and_certificate(true).await;
}

/// `handshake_offload = true` when `offload`.
fn offload_line(offload: bool) -> &'static str {
    if offload {
        "handshake_offload = true"
    } else {
        ""
    }
}

async fn counted_by_version_suite_group_and_certificate(offload: bool) {
    let dir = temp_dir("tlscount");
    let ecdsa = write_cert(&dir, "ecdsa", KeyKind::EcdsaP256);
    // A second, RSA, certificate for the name `rsa.test`, chosen by SNI.
    let rsa = tern_tls::self_signed(&["rsa.test".to_owned()], KeyKind::Rsa2048).unwrap();
    let rsa_path = dir.join("rsa.pem");
    std::fs::write(&rsa_path, format!("{}{}", rsa.cert_pem, rsa.key_pem)).unwrap();
    let toml = Config::new()
        .global(offload_line(offload))
        .tls(&[&format!("{ecdsa:?}"), &format!("{rsa_path:?}")])
        .toml();
    let tern = Tern::run_in(dir, &toml);
    let addr = tern.addr();
    // One offload thread per worker (the tests run one).
    assert_eq!(
        tern.proc.threads_named("tern-offload"),
        usize::from(offload)
    );

    // Full TLS 1.3: X25519 + AES-128 (tern's preference), P-384 + ChaCha20, and one with RSA.
    let plain13 = client(&[&TLS13], &[], &[], false);
    assert!(one_request(addr, plain13.clone(), "localhost")
        .await
        .contains("200"));
    let p384 = client(
        &[&TLS13],
        &[kx_group::SECP384R1],
        &[cipher_suite::TLS13_CHACHA20_POLY1305_SHA256],
        false,
    );
    assert!(one_request(addr, p384, "localhost").await.contains("200"));
    assert!(one_request(addr, plain13, "rsa.test").await.contains("200"));
    // Full TLS 1.2 with P-256.
    let tls12 = client(&[&TLS12], &[kx_group::SECP256R1], &[], false);
    assert!(one_request(addr, tls12, "localhost").await.contains("200"));
    // A TLS 1.3 session, then its resumption.
    let resuming = client(&[&TLS13], &[], &[], true);
    assert!(one_request(addr, resuming.clone(), "localhost")
        .await
        .contains("200"));
    assert!(one_request(addr, resuming, "localhost")
        .await
        .contains("200"));

    let c = tern.stop_clean();
    let tls = |k: &str| c.get("tls web", k);
    let suites = |k: &str| c.get("tls_suites web", k);
    assert_eq!(c.get("frontend web", "tls_full"), 5);
    assert_eq!(c.get("frontend web", "tls_resumed"), 1);
    assert_eq!(tls("full_tls13"), 4);
    assert_eq!(tls("full_tls12"), 1);
    assert_eq!(tls("resumed_tls13"), 1);
    assert_eq!(tls("full_x25519"), 3);
    assert_eq!(tls("full_p384"), 1);
    assert_eq!(tls("full_p256"), 1);
    // A TLS 1.3 resumption still exchanges a key (psk_dhe_ke).
    assert_eq!(tls("resumed_x25519"), 1);
    assert_eq!(tls("cert_ecdsa"), 4);
    assert_eq!(tls("cert_rsa"), 1);
    assert_eq!(suites("full_TLS13_AES_128_GCM_SHA256"), 3);
    assert_eq!(suites("full_TLS13_CHACHA20_POLY1305_SHA256"), 1);
    assert_eq!(
        suites("full_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
        1,
        "{c:?}"
    );
    assert_eq!(suites("resumed_TLS13_AES_128_GCM_SHA256"), 1);
    let latency: u64 = c.0["tls_latency web"].values().sum();
    assert_eq!(latency, 6);
    for reason in [
        "no_shared_cipher",
        "version",
        "bad_certificate",
        "unknown_sni",
        "timeout",
        "protocol",
        "other",
    ] {
        assert_eq!(tls(&format!("fail_{reason}")), 0, "{reason}");
    }
}

/// `openssl s_client` offering only a CBC suite tern does not have; true if it ran.
fn openssl_cbc_only(addr: SocketAddr) -> bool {
    if !have("openssl") {
        return false;
    }
    let mut child = Command::new("openssl")
        .args(["s_client", "-connect", &addr.to_string(), "-tls1_2"])
        .args(["-cipher", "AES128-SHA"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    // Bounded poll for the exit: s_client quits once the handshake fails.
    while child.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "s_client hung");
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn failures_are_counted_by_reason() {
    failures_counted_by_reason(false);
}

#[test]
fn offloaded_failures_are_counted_by_reason() {
    failures_counted_by_reason(true);
}

fn failures_counted_by_reason(offload: bool) {
    let dir = temp_dir("tlsfail");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let toml = Config::new()
        .global(offload_line(offload))
        .tls(&[&format!("{cert:?}")])
        .frontend("timeouts = { handshake = \"300ms\" }")
        .toml();
    let tern = Tern::run_in(dir, &toml);
    let addr = tern.addr();

    // Plain HTTP on the TLS port: an alert or a close, never an HTTP answer.
    let raw = raw_exchange(addr, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n", WAIT);
    assert!(raw.closed);
    assert!(!raw.text().contains("HTTP/1.1"), "{}", raw.text());
    // A client that says nothing is closed after the handshake timeout.
    let mut silent = std::net::TcpStream::connect(addr).unwrap();
    assert!(read_until_closed(&mut silent, WAIT).closed);
    let cbc = openssl_cbc_only(addr);

    let c = tern.stop_clean();
    let tls = |k: &str| c.get("tls web", k);
    assert_eq!(tls("fail_protocol"), 1);
    assert_eq!(tls("fail_timeout"), 1);
    assert_eq!(c.get("frontend web", "tls_timeouts"), 1);
    assert_eq!(tls("fail_no_shared_cipher"), u64::from(cbc));
    assert_eq!(c.get("frontend web", "tls_failures"), 1 + u64::from(cbc));
    assert_eq!(c.get("frontend web", "tls_full"), 0);
}
