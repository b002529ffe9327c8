//! TLS mode: the caller's rustls ServerConfig, then the same HTTP/1.1 behaviour.
#![allow(clippy::unwrap_used)]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use http::StatusCode;
use rustls::crypto::aws_lc_rs;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use support::*;
use tern_term::{TermHandle, TermOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// A term serving TLS with a fresh self-signed certificate, and a connector trusting it.
fn start_tls() -> (TermHandle, SocketAddr, TlsConnector) {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert = ck.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
    let provider = Arc::new(aws_lc_rs::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let opts = TermOptions {
        tls: Some(Arc::new(server)),
        ..options(2)
    };
    let term = tern_term::start(opts).unwrap();
    let addr = term.local_addrs()[0];
    (term, addr, TlsConnector::from(Arc::new(client)))
}

async fn tls_connect(addr: SocketAddr, connector: &TlsConnector) -> TlsStream<TcpStream> {
    let tcp = bounded(TcpStream::connect(addr)).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    bounded(connector.connect(name, tcp)).await.unwrap()
}

#[tokio::test]
async fn tls_serves_keep_alive_requests() {
    let (term, addr, connector) = start_tls();
    let mut sender = handshake(tls_connect(addr, &connector).await).await;
    let (parts, body) = fetch(&mut sender, "GET", "/?s=70k").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(body.len(), 70 * 1024);
    assert!(body
        .iter()
        .enumerate()
        .all(|(i, &b)| b == tern_term::fill_byte(i as u64)));
    let (parts, page) = fetch(&mut sender, "GET", "/").await;
    let name = format!("term-{}", addr.port());
    assert_eq!(header(&parts, "x-term-server"), Some(name.as_str()));
    assert!(support::contains(&page, name.as_bytes()));
    assert_eq!(term.stats().connections, 1);
}

#[tokio::test]
async fn tls_abort_is_observed_as_truncation() {
    let (_term, addr, connector) = start_tls();
    let mut tls = tls_connect(addr, &connector).await;
    tls.write_all(b"GET /?s=5000&x=123 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    // The server closes without close_notify: rustls reports an unexpected EOF after the data.
    let end = bounded(tls.read_to_end(&mut raw)).await;
    assert!(end.is_err(), "clean TLS close after a cut body");
    let (head, body) = split_head(&raw);
    assert!(head.contains("content-length: 5000"), "{head}");
    assert_eq!(body.len(), 123);
}

#[tokio::test]
async fn plain_http_on_a_tls_port_gets_no_response() {
    let (term, addr, _) = start_tls();
    let mut tcp = bounded(TcpStream::connect(addr)).await.unwrap();
    tcp.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    // The close may be a reset (unread request bytes), so only the outcome is checked.
    let _ = bounded(tcp.read_to_end(&mut raw)).await;
    assert!(!support::contains(&raw, b"HTTP/1.1"));
    // The failed handshake closes the socket before its worker counts it: poll the counter.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while term.stats().tls_failures == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(term.stats().tls_failures, 1);
}

#[tokio::test]
async fn full_and_resumed_handshakes_are_counted() {
    let (term, addr, connector) = start_tls();
    for _ in 0..3 {
        // Each request also makes the client read the session ticket sent after the handshake.
        let mut sender = handshake(tls_connect(addr, &connector).await).await;
        let (parts, _) = fetch(&mut sender, "GET", "/?s=0").await;
        assert_eq!(parts.status, StatusCode::OK);
    }
    let stats = term.stats();
    assert_eq!(
        (stats.tls_full, stats.tls_resumed, stats.tls_failures),
        (1, 2, 0),
        "{stats:?}"
    );
}
