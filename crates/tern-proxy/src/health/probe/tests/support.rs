//! In-test servers (plain and TLS, one scripted connection each) and check builders.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::ClientConfig;
use tern_config::{Check, CheckKind, HttpCheck, StatusRange};
use tern_tls::{client_config, self_signed, server_config_from_keys, ClientOptions, KeyKind};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::health::probe::{probe, CheckCode, CheckResult};

/// The check timeout of tests that expect an answer: long enough never to fire on a loaded
/// machine.
pub(super) const WAIT: Duration = Duration::from_secs(5);
/// The check timeout of tests that expect a timeout.
pub(super) const SHORT: Duration = Duration::from_millis(200);

/// What an in-test server does on the one connection it accepts.
#[derive(Clone, Copy)]
pub(super) enum Reply {
    /// Reads the request head, writes these bytes, closes.
    AfterRequest(&'static [u8]),
    /// Writes these bytes at once, then reads until the peer closes.
    AtOnce(&'static [u8]),
    /// Reads until the peer closes, answering nothing.
    Never,
}

/// Plays `reply` on `s`; returns the request head read, if any.
pub(super) async fn play<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S, reply: Reply) -> String {
    match reply {
        Reply::AfterRequest(bytes) => {
            let head = read_request(s).await;
            let _ = s.write_all(bytes).await;
            let _ = s.shutdown().await;
            head
        }
        Reply::AtOnce(bytes) => {
            let _ = s.write_all(bytes).await;
            let _ = tokio::io::copy(s, &mut tokio::io::sink()).await;
            String::new()
        }
        Reply::Never => {
            let _ = tokio::io::copy(s, &mut tokio::io::sink()).await;
            String::new()
        }
    }
}

/// Reads up to the blank line ending a request head (at most 16 KiB).
pub(super) async fn read_request<S: AsyncRead + Unpin>(s: &mut S) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        match s.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8(head).unwrap()
}

/// A plain TCP server for one connection; its task returns the request head it read.
pub(super) async fn server(reply: Reply) -> (SocketAddr, JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        play(&mut tcp, reply).await
    });
    (addr, task)
}

/// A TLS server (self-signed certificate for `localhost`) for one connection; its task returns
/// the SNI the client sent and the request head read.
pub(super) async fn tls_server(reply: Reply) -> (SocketAddr, JoinHandle<(Option<String>, String)>) {
    let cert = self_signed(&["localhost".to_owned()], KeyKind::EcdsaP256).unwrap();
    let acceptor = TlsAcceptor::from(server_config_from_keys(vec![cert.certified_key]).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut tls = acceptor.accept(tcp).await.unwrap();
        let sni = tls.get_ref().1.server_name().map(str::to_owned);
        (sni, play(&mut tls, reply).await)
    });
    (addr, task)
}

/// A check of `address` with the given kind and timeout.
pub(super) fn check(kind: CheckKind, address: SocketAddr, timeout: Duration) -> Check {
    Check {
        kind,
        interval: Duration::from_secs(10),
        fast_interval: Duration::from_secs(10),
        down_interval: Duration::from_secs(10),
        timeout,
        rise: 2,
        fall: 3,
        address,
    }
}

/// `GET /health`, 200-399 expected, no body expectation.
pub(super) fn get() -> HttpCheck {
    HttpCheck {
        method: "GET".to_owned(),
        path: "/health".to_owned(),
        host: None,
        expect_status: vec![range(200, 299), range(300, 399)],
        expect_body: None,
        h2: false,
    }
}

pub(super) fn range(low: u16, high: u16) -> StatusRange {
    StatusRange { low, high }
}

pub(super) fn expecting_body(needle: &str) -> HttpCheck {
    HttpCheck {
        expect_body: Some(needle.to_owned()),
        ..get()
    }
}

/// A client configuration that accepts the test servers' self-signed certificates.
pub(super) fn tls() -> Arc<ClientConfig> {
    client_config(&ClientOptions::default())
}

/// Runs an HTTP check of `http` against a plain server playing `reply`.
pub(super) async fn http_probe(http: HttpCheck, reply: Reply, timeout: Duration) -> CheckResult {
    let (addr, _server) = server(reply).await;
    probe(&check(CheckKind::Http(http), addr, timeout), &tls(), None).await
}

/// Asserts the outcome's code and that its detail starts with `detail`.
#[track_caller]
pub(super) fn assert_outcome(outcome: &CheckResult, code: CheckCode, detail: &str) {
    assert_eq!(outcome.code, code, "{}", outcome.detail);
    assert_eq!(outcome.passed, code.passed());
    assert!(
        outcome.detail.starts_with(detail),
        "{:?} should start with {detail:?}",
        outcome.detail
    );
}
