//! TLS termination by the real `tern` binary: RSA-2048 and ECDSA P-256 certificates, in the
//! combined-file and the split `{ cert, key }` forms, negotiate TLS 1.3 and TLS 1.2 with an AEAD
//! suite, X25519 and ALPN `http/1.1`, and requests go through; TLS 1.1 and CBC-only clients are
//! refused (checked with `openssl s_client` when installed); a plain bind next to a TLS bind
//! serves HTTP; SNI picks the certificate (the first one for unknown or absent names); a client
//! with resumption on gets resumed handshakes across workers (counted as `tls_resumed`), one
//! with resumption off only full ones.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::HandshakeKind;
use rustls::{NamedGroup, ProtocolVersion};
use tern_tls::{ClientOptions, KeyKind, Verify};
use tokio_rustls::TlsConnector;

/// Bound on every network step; generous, only there so a broken tern fails instead of hanging.
const WAIT: Duration = Duration::from_secs(10);

/// What the client saw of one handshake.
#[derive(Debug)]
struct Negotiated {
    version: Option<ProtocolVersion>,
    suite: String,
    group: Option<NamedGroup>,
    alpn: Option<Vec<u8>>,
    kind: Option<HandshakeKind>,
    /// The leaf certificate the server sent.
    leaf: Option<CertificateDer<'static>>,
}

/// A client configuration with tern's policy and these protocol versions.
fn client(
    versions: &[&'static rustls::SupportedProtocolVersion],
    resumption: bool,
) -> Arc<rustls::ClientConfig> {
    tern_tls::client_config(&ClientOptions {
        verify: Verify::Insecure,
        resumption,
        versions: Some(versions.to_vec()),
        ..ClientOptions::default()
    })
}

/// Connects over TLS with `config`, sending `sni` (an IP address sends no SNI), and starts an
/// HTTP/1.1 client connection on top.
async fn tls_connect(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    sni: &str,
) -> (SendRequest<Body>, Negotiated) {
    let name = ServerName::try_from(sni.to_owned()).unwrap();
    let stream = tokio::time::timeout(WAIT, async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        TlsConnector::from(config).connect(name, tcp).await
    })
    .await
    .expect("TLS handshake timed out")
    .expect("TLS handshake failed");
    let (_, conn) = stream.get_ref();
    let negotiated = Negotiated {
        version: conn.protocol_version(),
        suite: conn
            .negotiated_cipher_suite()
            .and_then(|s| s.suite().as_str())
            .unwrap_or("-")
            .to_owned(),
        group: conn.negotiated_key_exchange_group().map(|g| g.name()),
        alpn: conn.alpn_protocol().map(<[u8]>::to_vec),
        kind: conn.handshake_kind(),
        leaf: conn
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|c| c.clone().into_owned()),
    };
    let (sender, http) = http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(async move {
        let _ = http.await;
    });
    (sender, negotiated)
}

/// One GET on `conn`, bounded.
async fn bounded_get(conn: &mut SendRequest<Body>, path: &str) -> Got {
    tokio::time::timeout(WAIT, send(conn, get_req(path)))
        .await
        .expect("request timed out")
}

/// The DER of the (first) certificate in a PEM file.
fn leaf_of(pem: &Path) -> CertificateDer<'static> {
    CertificateDer::from_pem_file(pem).unwrap()
}

fn is_aead(suite: &str) -> bool {
    suite.contains("_GCM_") || suite.contains("CHACHA20_POLY1305")
}

/// The scenario of the four key/form tests: tern with one certificate of `kind` given in the
/// combined or the split form; a TLS 1.3 and a TLS 1.2 client each negotiate what tern's policy
/// promises and get a proxied response.
async fn terminates_tls(kind: KeyKind, split: bool) {
    let term = Term::start("s1");
    let dir = temp_dir("tls");
    let combined = write_cert(&dir, "site", kind);
    let item = if split {
        format!(
            "{{ cert = {:?}, key = {:?} }}",
            dir.join("site.crt"),
            dir.join("site.key")
        )
    } else {
        format!("{combined:?}")
    };
    let tern = Tern::run_in(
        dir.clone(),
        &Config::new().terms(&[&term]).tls(&[&item]).toml(),
    );
    assert!(tern.is_tls(0));
    let leaf = leaf_of(&dir.join("site.crt"));
    let key_word = match kind {
        KeyKind::EcdsaP256 => "ECDSA",
        KeyKind::Rsa2048 => "RSA",
    };

    for (version, expected) in [
        (&rustls::version::TLS13, ProtocolVersion::TLSv1_3),
        (&rustls::version::TLS12, ProtocolVersion::TLSv1_2),
    ] {
        let (mut conn, n) = tls_connect(tern.addr(), client(&[version], false), "localhost").await;
        assert_eq!(n.version, Some(expected), "{n:?}");
        assert!(is_aead(&n.suite), "not an AEAD suite: {n:?}");
        if expected == ProtocolVersion::TLSv1_2 {
            assert!(
                n.suite.starts_with(&format!("TLS_ECDHE_{key_word}_WITH_")),
                "{n:?}"
            );
        } else {
            // tern's order wins over the client's: AES-128-GCM first.
            assert_eq!(n.suite, "TLS13_AES_128_GCM_SHA256", "{n:?}");
        }
        assert_eq!(n.group, Some(NamedGroup::X25519), "{n:?}");
        assert_eq!(n.alpn.as_deref(), Some(&b"http/1.1"[..]), "{n:?}");
        assert_eq!(n.kind, Some(HandshakeKind::Full), "{n:?}");
        assert_eq!(
            n.leaf.as_ref(),
            Some(&leaf),
            "served another certificate: {n:?}"
        );
        let got = bounded_get(&mut conn, "/?s=10k").await;
        assert_eq!(got.status, 200, "{expected:?}");
        assert_eq!(got.header("x-term-server"), Some("s1"));
        assert_eq!(got.body.len(), 10 * 1024);
        // Keep-alive over TLS: a second request on the same connection.
        assert_eq!(bounded_get(&mut conn, "/test").await.status, 200);
    }

    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 2);
    assert_eq!(c.get("frontend web", "tls_failures"), 0);
    assert_eq!(c.get("frontend web", "requests"), 4);
    assert_eq!(c.get("frontend web", "resp_2xx"), 4);
}

#[tokio::test]
async fn ecdsa_combined_file_terminates_tls13_and_tls12() {
    terminates_tls(KeyKind::EcdsaP256, false).await;
}

#[tokio::test]
async fn ecdsa_split_files_terminate_tls13_and_tls12() {
    terminates_tls(KeyKind::EcdsaP256, true).await;
}

#[tokio::test]
async fn rsa_combined_file_terminates_tls13_and_tls12() {
    terminates_tls(KeyKind::Rsa2048, false).await;
}

#[tokio::test]
async fn rsa_split_files_terminate_tls13_and_tls12() {
    terminates_tls(KeyKind::Rsa2048, true).await;
}

/// Runs `openssl s_client -connect ADDR ARGS` with stdin closed (so it quits right after the
/// handshake), bounded; returns (exit success, stdout + stderr).
fn s_client(addr: SocketAddr, args: &[&str]) -> (bool, String) {
    let dir = temp_dir("openssl");
    let out_path = dir.join("out");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = Command::new("openssl")
        .args([
            "s_client",
            "-connect",
            &addr.to_string(),
            "-servername",
            "localhost",
        ])
        .args(args)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("openssl s_client {args:?} did not finish");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.success(),
        std::fs::read_to_string(&out_path).unwrap_or_default(),
    )
}

#[test]
fn openssl_old_protocols_and_cbc_are_refused_tls13_uses_x25519() {
    if !have("openssl") {
        println!("skipped: openssl not installed");
        return;
    }
    let dir = temp_dir("tls-openssl");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let tern = Tern::run_in(dir, &Config::new().tls(&[&format!("{cert:?}")]).toml());
    let addr = tern.addr();

    // SECLEVEL=0 so that the client itself is willing to offer TLS 1.1: the refusal must come
    // from tern (a handshake_failure alert), not from the local OpenSSL policy.
    let (ok, out) = s_client(addr, &["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]);
    assert!(!ok, "TLS 1.1 accepted:\n{out}");
    assert!(out.contains("CONNECTED("), "{out}");
    assert!(out.contains("Cipher is (NONE)"), "{out}");
    assert!(out.contains("alert"), "{out}");

    let (ok, out) = s_client(addr, &["-tls1_2", "-cipher", "AES128-SHA"]);
    assert!(!ok, "CBC suite accepted:\n{out}");
    assert!(out.contains("Cipher is (NONE)"), "{out}");

    let (ok, out) = s_client(addr, &["-tls1_3", "-alpn", "http/1.1"]);
    assert!(ok, "TLS 1.3 refused:\n{out}");
    assert!(
        out.contains("New, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256"),
        "{out}"
    );
    assert!(out.contains("Server Temp Key: X25519"), "{out}");
    assert!(out.contains("ALPN protocol: http/1.1"), "{out}");

    let (ok, out) = s_client(addr, &["-tls1_2"]);
    assert!(ok, "TLS 1.2 refused:\n{out}");
    assert!(
        out.contains("New, TLSv1.2, Cipher is ECDHE-ECDSA-AES128-GCM-SHA256"),
        "{out}"
    );
    assert!(out.contains("Server Temp Key: X25519"), "{out}");

    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_failures"), 2, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_full"), 2, "{c:?}");
}

/// Whether the request head echoed by the backend (`?h=1`) has this exact header line.
fn head_has(echo: &Got, line: &str) -> bool {
    echo.text().lines().any(|l| l.eq_ignore_ascii_case(line))
}

#[tokio::test]
async fn plain_bind_next_to_tls_bind_serves_http() {
    let term = Term::start("s1");
    let dir = temp_dir("tls-mixed");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg = Config::new()
        .terms(&[&term])
        .binds(&[
            "\"127.0.0.1:0\"",
            "{ address = \"127.0.0.1:0\", tls = false }",
        ])
        .tls(&[&format!("{cert:?}")]);
    let tern = Tern::run_in(dir, &cfg.toml());
    assert!(tern.is_tls(0) && !tern.is_tls(1), "{:?}", tern.binds);
    let (tls_addr, plain_addr) = (tern.binds[0].1, tern.binds[1].1);

    // `?h=1`: the backend answers with the request head it received.
    let (mut conn, _) = tls_connect(
        tls_addr,
        client(&[&rustls::version::TLS13], false),
        "localhost",
    )
    .await;
    let over_tls = bounded_get(&mut conn, "/?h=1").await;
    assert_eq!(over_tls.status, 200);
    assert!(
        head_has(&over_tls, "x-forwarded-proto: https"),
        "{}",
        over_tls.text()
    );

    let plain = tokio::time::timeout(WAIT, get(plain_addr, false, "/?h=1"))
        .await
        .unwrap();
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("x-term-server"), Some("s1"));
    assert!(
        head_has(&plain, "x-forwarded-proto: http"),
        "{}",
        plain.text()
    );

    // Plain HTTP sent to the TLS bind gets no HTTP answer, and the connection is closed.
    let wrong = raw_exchange(
        tls_addr,
        b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
        Duration::from_secs(5),
    );
    assert!(
        wrong.closed,
        "TLS bind kept a plain-HTTP connection open: {wrong:?}"
    );
    assert!(!wrong.text().contains("HTTP/1.1"), "{wrong:?}");
    // A TLS handshake on the plain bind fails instead of hanging.
    let tcp = tokio::net::TcpStream::connect(plain_addr).await.unwrap();
    let attempt = tokio::time::timeout(
        WAIT,
        TlsConnector::from(client(&[&rustls::version::TLS13], false))
            .connect(ServerName::try_from("localhost").unwrap(), tcp),
    )
    .await
    .expect("TLS handshake on the plain bind hung");
    assert!(attempt.is_err(), "TLS handshake succeeded on a plain bind");

    drop(conn);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 1);
    assert_eq!(c.get("frontend web", "tls_failures"), 1);
    assert_eq!(c.get("server app/s1", "requests"), 2);
}

/// Writes a self-signed certificate for `names` as `<file>.pem` (combined), `.crt` and `.key`.
fn write_named_cert(
    dir: &Path,
    file: &str,
    names: &[&str],
    kind: KeyKind,
) -> CertificateDer<'static> {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let cert = tern_tls::self_signed(&names, kind).unwrap();
    std::fs::write(dir.join(format!("{file}.crt")), &cert.cert_pem).unwrap();
    std::fs::write(dir.join(format!("{file}.key")), &cert.key_pem).unwrap();
    std::fs::write(
        dir.join(format!("{file}.pem")),
        format!("{}{}", cert.cert_pem, cert.key_pem),
    )
    .unwrap();
    leaf_of(&dir.join(format!("{file}.crt")))
}

#[tokio::test]
async fn sni_picks_the_matching_certificate_and_unknown_names_get_the_first() {
    let dir = temp_dir("tls-sni");
    let a = write_named_cert(&dir, "a", &["a.test"], KeyKind::EcdsaP256);
    let b = write_named_cert(&dir, "b", &["b.test", "*.b.test"], KeyKind::Rsa2048);
    let items = [
        format!("{:?}", dir.join("a.pem")),
        format!(
            "{{ cert = {:?}, key = {:?} }}",
            dir.join("b.crt"),
            dir.join("b.key")
        ),
    ];
    let tern = Tern::run_in(
        dir.clone(),
        &Config::new().tls(&[&items[0], &items[1]]).toml(),
    );
    let cfg = client(&[&rustls::version::TLS13, &rustls::version::TLS12], false);
    let cases = [
        ("a.test", &a),
        ("b.test", &b),
        ("B.Test", &b),
        ("www.b.test", &b),
        ("x.y.b.test", &a),
        ("c.test", &a),
        ("localhost", &a),
        // An IP address: the client sends no SNI at all.
        ("127.0.0.1", &a),
    ];
    for (sni, expected) in cases {
        let (mut conn, n) = tls_connect(tern.addr(), cfg.clone(), sni).await;
        assert_eq!(
            n.leaf.as_ref(),
            Some(expected),
            "SNI {sni:?} got the wrong certificate"
        );
        // The monitor URI needs no backend.
        assert_eq!(
            bounded_get(&mut conn, "/test").await.status,
            200,
            "SNI {sni:?}"
        );
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), cases.len() as u64);

    // The default is the first in configuration order, not the first by name.
    let tern = Tern::run_in(dir, &Config::new().tls(&[&items[1], &items[0]]).toml());
    for (sni, expected) in [("c.test", &b), ("127.0.0.1", &b), ("a.test", &a)] {
        let (_, n) = tls_connect(tern.addr(), cfg.clone(), sni).await;
        assert_eq!(n.leaf.as_ref(), Some(expected), "reordered: SNI {sni:?}");
    }
    tern.stop_clean();
}

/// Connects `count` times in a row with one client configuration, one request each (which also
/// makes the client read the session ticket sent after the handshake); returns the handshake
/// kinds.
async fn reconnect(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    count: usize,
) -> Vec<Option<HandshakeKind>> {
    let mut kinds = Vec::new();
    for _ in 0..count {
        let (mut conn, n) = tls_connect(addr, config.clone(), "localhost").await;
        assert_eq!(bounded_get(&mut conn, "/test").await.status, 200);
        kinds.push(n.kind);
    }
    kinds
}

#[tokio::test]
async fn resumption_on_resumes_and_is_counted() {
    let dir = temp_dir("tls-resume");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    // Two workers: SO_REUSEPORT spreads the reconnections, and a ticket from one worker must
    // resume on the other.
    let mut cfg = Config::new().tls(&[&format!("{cert:?}")]);
    cfg.global = vec!["workers = 2".into()];
    let tern = Tern::run_in(dir, &cfg.toml());

    let kinds = reconnect(tern.addr(), client(&[&rustls::version::TLS13], true), 6).await;
    let mut expected = vec![Some(HandshakeKind::Resumed); 6];
    expected[0] = Some(HandshakeKind::Full);
    assert_eq!(kinds, expected, "TLS 1.3");

    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 1, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_resumed"), 5, "{c:?}");
}

#[tokio::test]
async fn tls12_resumption_uses_tickets() {
    let dir = temp_dir("tls-resume12");
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let tern = Tern::run_in(dir, &Config::new().tls(&[&format!("{cert:?}")]).toml());
    let kinds = reconnect(tern.addr(), client(&[&rustls::version::TLS12], true), 3).await;
    assert_eq!(
        kinds,
        vec![
            Some(HandshakeKind::Full),
            Some(HandshakeKind::Resumed),
            Some(HandshakeKind::Resumed)
        ],
        "TLS 1.2"
    );
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 1, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_resumed"), 2, "{c:?}");
}

#[tokio::test]
async fn resumption_off_means_only_full_handshakes() {
    let dir = temp_dir("tls-noresume");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let tern = Tern::run_in(dir, &Config::new().tls(&[&format!("{cert:?}")]).toml());
    let all = [&rustls::version::TLS13, &rustls::version::TLS12];
    let kinds = reconnect(tern.addr(), client(&all, false), 3).await;
    assert_eq!(kinds, vec![Some(HandshakeKind::Full); 3]);
    // The harness's own client (resumption off) agrees.
    let via_harness = tokio::time::timeout(WAIT, get(tern.addr(), true, "/test"))
        .await
        .unwrap();
    assert_eq!(via_harness.status, 200);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 4, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_resumed"), 0, "{c:?}");
}

#[tokio::test]
async fn a_bind_with_its_own_certificate_overrides_the_frontend() {
    let dir = temp_dir("tls-bindcert");
    let front = write_named_cert(&dir, "front", &["localhost"], KeyKind::EcdsaP256);
    let own = write_named_cert(&dir, "own", &["localhost"], KeyKind::EcdsaP256);
    let bind_tls = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{:?}] }} }}",
        dir.join("own.pem")
    );
    let cfg = Config::new()
        .binds(&["\"127.0.0.1:0\"", &bind_tls])
        .tls(&[&format!("{:?}", dir.join("front.pem"))]);
    let tern = Tern::run_in(dir, &cfg.toml());
    assert!(tern.is_tls(0) && tern.is_tls(1), "{:?}", tern.binds);
    let cfg = client(&[&rustls::version::TLS13], false);
    let (_, n0) = tls_connect(tern.binds[0].1, cfg.clone(), "localhost").await;
    let (_, n1) = tls_connect(tern.binds[1].1, cfg, "localhost").await;
    assert_eq!(n0.leaf.as_ref(), Some(&front));
    assert_eq!(n1.leaf.as_ref(), Some(&own));
    tern.stop_clean();
}
