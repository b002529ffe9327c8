//! TLS to backend servers (re-encryption) through the real `tern` binary: `tern term
//! --tls-cert` as a TLS backend, and a small in-test rustls server that records what each
//! connection's handshake carried (SNI, resumption, client certificate).

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection, StreamOwned};

/// A TLS term backend with a certificate for localhost/127.0.0.1 written as `<dir>/backend.*`.
fn tls_term(dir: &Path, name: &str) -> Term {
    let pem = write_cert(dir, "backend", tern_tls::KeyKind::EcdsaP256);
    Term::start_with(name, &["--tls-cert", &pem])
}

fn server_line(t: &Term, tls: &str) -> String {
    format!(
        "{{ name = \"{}\", address = \"{}\", tls = {tls} }}",
        t.name, t.addr
    )
}

#[tokio::test]
async fn proxies_to_a_tls_backend_with_keep_alive_pooling_and_large_bodies() {
    let dir = temp_dir("btls-ok");
    let term = tls_term(&dir, "s1");
    let ca = dir.join("backend.crt");
    let tls = format!("{{ ca = \"{}\", sni = \"localhost\" }}", ca.display());
    let toml = Config::new().raw_server(&server_line(&term, &tls)).toml();
    let tern = Tern::run_in(dir, &toml);
    let mut conn = connect(tern.addr(), false).await;
    for _ in 0..5 {
        let got = send(&mut conn, get_req("/")).await;
        assert_eq!(got.status, 200, "{}", got.text());
        assert_eq!(got.header("x-term-server"), Some("s1"));
    }
    let big = send(&mut conn, get_req("/?s=3m")).await;
    assert_eq!(big.status, 200);
    assert_eq!(big.body.len(), 3 * 1024 * 1024);
    let chunked = send(&mut conn, get_req("/?s=300k&c=1")).await;
    assert_eq!(chunked.body.len(), 300 * 1024);
    let c = tern.stop();
    assert_eq!(c.get("server app/s1", "connects"), 1, "{:?}", c.0);
    assert_eq!(c.get("server app/s1", "reused"), 6);
    assert_eq!(c.get("server app/s1", "connect_errors"), 0);
}

#[tokio::test]
async fn a_chunked_upload_reaches_a_tls_backend_whole() {
    // tern re-frames the chunks and writes each piece vectored through TLS.
    let dir = temp_dir("btls-chunked");
    let term = tls_term(&dir, "s1");
    let ca = dir.join("backend.crt");
    let tls = format!("{{ ca = \"{}\", sni = \"localhost\" }}", ca.display());
    let toml = Config::new().raw_server(&server_line(&term, &tls)).toml();
    let tern = Tern::run_in(dir, &toml);
    let mut conn = connect_streaming(tern.addr()).await;
    let (tx, body) = chan_body(64);
    let req = hyper::Request::post("/?e=1")
        .header("host", "localhost")
        .body(body)
        .unwrap();
    let mut expected = Vec::new();
    for i in 0..50u8 {
        let chunk = bytes::Bytes::from(vec![b'a' + i % 26; 1 + usize::from(i) * 97]);
        expected.extend_from_slice(&chunk);
        tx.send(chunk).await.unwrap();
    }
    drop(tx);
    conn.ready().await.unwrap();
    let wait = Duration::from_secs(10);
    let resp = tokio::time::timeout(wait, conn.send_request(req))
        .await
        .expect("response in time")
        .unwrap();
    assert_eq!(resp.status(), 200);
    let echoed = tokio::time::timeout(wait, http_body_util::BodyExt::collect(resp.into_body()))
        .await
        .expect("echo in time")
        .unwrap()
        .to_bytes();
    assert_eq!(echoed.len(), expected.len());
    assert!(echoed == expected, "echoed body differs from the upload");
    drop(conn);
    tern.stop_clean();
}

#[tokio::test]
async fn a_wrong_ca_fails_the_connect_with_503_and_the_reason_logged() {
    let dir = temp_dir("btls-wrong-ca");
    let term = tls_term(&dir, "s1");
    write_cert(&dir, "other", tern_tls::KeyKind::EcdsaP256);
    let tls = format!("{{ ca = \"{}\" }}", dir.join("other.crt").display());
    let toml = Config::new()
        .backend("retries = 1")
        .raw_server(&server_line(&term, &tls))
        .toml();
    let tern = Tern::run_in(dir, &toml);
    let got = get(tern.addr(), false, "/").await;
    assert_eq!(got.status, 503);
    let log = tern.proc.stderr_text();
    assert!(
        log.contains("TLS handshake with") && log.contains("certificate"),
        "{log}"
    );
    let c = tern.stop();
    assert_eq!(c.get("server app/s1", "connect_errors"), 2, "{:?}", c.0);
    assert_eq!(c.get("backend app", "connect_errors"), 2);
}

#[tokio::test]
async fn verify_none_accepts_a_self_signed_backend() {
    let dir = temp_dir("btls-none");
    let term = tls_term(&dir, "s1");
    let toml = Config::new()
        .raw_server(&server_line(&term, "{ verify = \"none\" }"))
        .toml();
    let tern = Tern::run_in(dir, &toml);
    let got = get(tern.addr(), false, "/?s=10k").await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body.len(), 10 * 1024);
    tern.stop();
}

#[test]
fn tls_health_checks_resume_their_sessions() {
    let dir = temp_dir("btls-check");
    let term = tls_term(&dir, "s1");
    let server = format!(
        "{{ name = \"s1\", address = \"{}\", tls = {{ verify = \"none\" }}, \
         check = {{ type = \"tls\", interval = \"50ms\" }} }}",
        term.addr
    );
    let tern = Tern::run_in(dir, &Config::new().raw_server(&server).toml());
    // Let the checker run about twenty checks, none of them sent by a client.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let counters = tern.stop_clean();
    let checks = counters.get("server app/s1", "checks_passed");
    let term = term.stop_counters();
    assert!(checks >= 5, "{checks} checks");
    // The first check is a full handshake; the ones after it resume its session.
    assert!(term["tls_full"] <= 2, "{term:?} after {checks} checks");
    assert!(
        term["tls_resumed"] + 2 >= checks,
        "{term:?} after {checks} checks"
    );
}

/// What one connection to the in-test server showed.
#[derive(Debug, Clone)]
struct Seen {
    sni: Option<String>,
    resumed: bool,
    client_cert: bool,
}

/// A TLS HTTP/1.1 server that answers every request with 200 and its connection's SNI, and
/// records each handshake. With `client_ca`, client certificates signed by it are required.
fn recording_server(dir: &Path, client_ca: Option<&str>) -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let cert = tern_tls::self_signed(
        &["backend.test".to_owned(), "other.test".to_owned()],
        tern_tls::KeyKind::EcdsaP256,
    )
    .unwrap();
    std::fs::write(dir.join("rec.crt"), &cert.cert_pem).unwrap();
    let builder = ServerConfig::builder_with_provider(tern_tls::provider())
        .with_protocol_versions(rustls::DEFAULT_VERSIONS)
        .unwrap();
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            roots
                .add(CertificateDer::from_pem_slice(pem.as_bytes()).unwrap())
                .unwrap();
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), tern_tls::provider())
                    .build()
                    .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = Arc::new(
        builder
            .with_single_cert(
                vec![CertificateDer::from_pem_slice(cert.cert_pem.as_bytes()).unwrap()],
                PrivateKeyDer::from_pem_slice(cert.key_pem.as_bytes()).unwrap(),
            )
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { return };
            let (config, record) = (Arc::clone(&config), Arc::clone(&record));
            std::thread::spawn(move || serve(tcp, config, &record));
        }
    });
    (addr, seen)
}

fn serve(tcp: std::net::TcpStream, config: Arc<ServerConfig>, record: &Mutex<Vec<Seen>>) {
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let conn = ServerConnection::new(config).unwrap();
    let mut tls = StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        if tls.conn.complete_io(&mut tls.sock).is_err() {
            return;
        }
    }
    let sni = tls.conn.server_name().map(str::to_owned);
    record.lock().unwrap().push(Seen {
        sni: sni.clone(),
        resumed: tls.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
        client_cert: tls.conn.peer_certificates().is_some(),
    });
    let body = sni.unwrap_or_else(|| "-".to_owned());
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    // Bounded: at most 100 requests per connection, each head read to its blank line.
    for _ in 0..100 {
        head.clear();
        while !head.ends_with(b"\r\n\r\n") {
            match tls.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        if tls.write_all(answer.as_bytes()).is_err() || tls.flush().is_err() {
            return;
        }
    }
}

async fn get_host(addr: SocketAddr, host: &str) -> Got {
    let mut conn = connect(addr, false).await;
    let req = http::Request::get("/")
        .header("host", host)
        .body(Default::default())
        .unwrap();
    send(&mut conn, req).await
}

#[tokio::test]
async fn sni_fixed_or_from_host_and_new_connections_resume() {
    let dir = temp_dir("btls-sni");
    let (addr, seen) = recording_server(&dir, None);
    let ca = dir.join("rec.crt");
    let fixed = format!(
        "{{ name = \"fixed\", address = \"{addr}\", tls = {{ ca = \"{}\", sni = \"backend.test\" }} }}",
        ca.display()
    );
    // No pooling: every request opens a connection, which must resume the last session.
    let toml = Config::new()
        .backend("pool = { max_idle_per_server = 0 }")
        .raw_server(&fixed)
        .toml();
    let tern = Tern::run_in(dir.clone(), &toml);
    for _ in 0..3 {
        let got = get_host(tern.addr(), "whatever.example").await;
        assert_eq!(got.status, 200, "{}", got.text());
        assert_eq!(got.text(), "backend.test");
    }
    tern.stop();
    let all = seen.lock().unwrap().clone();
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(!all[0].resumed);
    assert!(all[1].resumed && all[2].resumed, "{all:?}");

    let dir = temp_dir("btls-host");
    let (addr, seen) = recording_server(&dir, None);
    let host = format!(
        "{{ name = \"host\", address = \"{addr}\", tls = {{ ca = \"{}\", sni = \"host\" }} }}",
        dir.join("rec.crt").display()
    );
    let toml = Config::new().raw_server(&host).toml();
    let tern = Tern::run_in(dir, &toml);
    assert_eq!(
        get_host(tern.addr(), "backend.test:8443").await.text(),
        "backend.test"
    );
    assert_eq!(
        get_host(tern.addr(), "other.test").await.text(),
        "other.test"
    );
    // A pooled connection is reused only for its own name.
    assert_eq!(
        get_host(tern.addr(), "backend.test").await.text(),
        "backend.test"
    );
    let c = tern.stop();
    assert_eq!(c.get("server app/host", "connects"), 2, "{:?}", c.0);
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_client_certificate_reaches_a_server_requiring_one() {
    let dir = temp_dir("btls-mtls");
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["tern.client".to_owned()]).unwrap();
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let client = params.self_signed(&key).unwrap();
    std::fs::write(
        dir.join("client.pem"),
        format!("{}{}", client.pem(), key.serialize_pem()),
    )
    .unwrap();
    let (addr, seen) = recording_server(&dir, Some(&client.pem()));
    let with_cert = format!(
        "{{ name = \"m\", address = \"{addr}\", tls = {{ ca = \"rec.crt\", sni = \"backend.test\", cert = \"client.pem\", alpn = [\"http/1.1\"] }} }}"
    );
    let toml = Config::new().raw_server(&with_cert).toml();
    let tern = Tern::run_in(dir.clone(), &toml);
    let got = get(tern.addr(), false, "/").await;
    assert_eq!(got.status, 200, "{}", got.text());
    tern.stop();
    let all = seen.lock().unwrap().clone();
    assert!(
        !all.is_empty() && all.iter().all(|s| s.client_cert),
        "{all:?}"
    );
    assert!(all.iter().all(|s| s.sni.as_deref() == Some("backend.test")));

    // Without the certificate the server refuses it. In TLS 1.3 the client's side of the
    // handshake is complete before the server judges the certificate, so the refusal arrives
    // instead of the response. Nothing reached the server's application: it is a failed
    // connect, answered 503 when no retry is left...
    let without = format!(
        "{{ name = \"m\", address = \"{addr}\", tls = {{ verify = \"none\", sni = \"backend.test\" }} }}"
    );
    let toml = Config::new()
        .backend("retries = 0")
        .raw_server(&without)
        .toml();
    let tern = Tern::run_in(dir.clone(), &toml);
    assert_eq!(get(tern.addr(), false, "/").await.status, 503);
    // A POST cannot be sent again (tern keeps no copy of a request it may not replay): the
    // refusal is answered as a fault of the server, and not counted as a failed connect.
    let mut conn = connect(tern.addr(), false).await;
    let post = hyper::Request::post("/")
        .header("host", "localhost")
        .body(Body::new(bytes::Bytes::from_static(b"x")))
        .unwrap();
    assert_eq!(send(&mut conn, post).await.status, 502);
    let c = tern.stop();
    assert_eq!(c.get("server app/m", "connect_errors"), 1, "{:?}", c.0);

    // ... and retried, on another server with redispatch.
    let (open, _) = recording_server(&dir, None);
    let open = format!(
        "{{ name = \"o\", address = \"{open}\", tls = {{ verify = \"none\", sni = \"backend.test\" }} }}"
    );
    let toml = Config::new()
        .backend("retries = 1")
        .backend("redispatch = true")
        .raw_server(&without)
        .raw_server(&open)
        .toml();
    let tern = Tern::run_in(dir, &toml);
    for _ in 0..4 {
        let got = get(tern.addr(), false, "/").await;
        assert_eq!(got.status, 200, "{}", got.text());
    }
    let c = tern.stop();
    assert!(c.get("server app/m", "connect_errors") >= 1, "{:?}", c.0);
    assert_eq!(
        c.get("backend app", "redispatches"),
        c.get("server app/m", "connect_errors")
    );
}
