//! Shared helpers so each test reads like a scenario: start a term on 127.0.0.1 port 0, talk to
//! it with hyper's client connection API or raw bytes, every wait bounded by [`LIMIT`].
#![allow(dead_code, clippy::unwrap_used)]

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tern_term::{TermHandle, TermOptions};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// Upper bound for any single wait in a test.
pub const LIMIT: Duration = Duration::from_secs(10);

pub type Sender = SendRequest<Full<Bytes>>;

pub fn options(threads: usize) -> TermOptions {
    TermOptions {
        threads,
        ..TermOptions::new("127.0.0.1:0".parse().unwrap())
    }
}

pub fn start(threads: usize) -> (TermHandle, SocketAddr) {
    let term = tern_term::start(options(threads)).unwrap();
    let addr = term.local_addrs()[0];
    (term, addr)
}

/// Awaits `f`, failing the test if it takes longer than [`LIMIT`].
pub async fn bounded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(LIMIT, f).await.expect("timed out")
}

/// An HTTP/1.1 client connection over any stream (plain TCP or TLS).
pub async fn handshake<I>(io: I) -> Sender
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = bounded(hyper::client::conn::http1::handshake(TokioIo::new(io)))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
}

pub async fn connect(addr: SocketAddr) -> Sender {
    handshake(bounded(TcpStream::connect(addr)).await.unwrap()).await
}

pub fn request(method: &str, uri: &str, body: &'static [u8]) -> Request<Full<Bytes>> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "term.test")
        .body(Full::new(Bytes::from_static(body)))
        .unwrap()
}

pub async fn send(sender: &mut Sender, req: Request<Full<Bytes>>) -> Response<Incoming> {
    bounded(sender.ready()).await.unwrap();
    bounded(sender.send_request(req)).await.unwrap()
}

/// Sends a request and collects the whole response body.
pub async fn fetch(sender: &mut Sender, method: &str, uri: &str) -> (http::response::Parts, Bytes) {
    let resp = send(sender, request(method, uri, b"")).await;
    let (parts, body) = resp.into_parts();
    let bytes = bounded(body.collect()).await.unwrap().to_bytes();
    (parts, bytes)
}

pub async fn get(addr: SocketAddr, uri: &str) -> (http::response::Parts, Bytes) {
    fetch(&mut connect(addr).await, "GET", uri).await
}

pub fn header<'a>(parts: &'a http::response::Parts, name: &str) -> Option<&'a str> {
    parts.headers.get(name).map(|v| v.to_str().unwrap())
}

/// Writes `request` on a fresh connection and reads until the server closes it.
pub async fn raw_until_close(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = bounded(TcpStream::connect(addr)).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut out = Vec::new();
    bounded(stream.read_to_end(&mut out)).await.unwrap();
    out
}

/// Reads into `buf` until it contains `needle`.
pub async fn read_until<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>, needle: &[u8]) {
    bounded(async {
        while !contains(buf, needle) {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "EOF before {:?}", String::from_utf8_lossy(needle));
            buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await
}

pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Splits a raw response at the end of its head.
pub fn split_head(raw: &[u8]) -> (String, &[u8]) {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no end of head");
    (
        String::from_utf8(raw[..end].to_vec())
            .unwrap()
            .to_ascii_lowercase(),
        &raw[end + 4..],
    )
}
