//! Clients: a hyper HTTP/1.1 client over plain TCP or rustls, and raw sockets for bad input.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tern_tls::{ClientOptions, Verify};
use tokio_rustls::TlsConnector;

pub type Body = Full<Bytes>;

/// A response read to the end.
#[derive(Debug)]
pub struct Got {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Got {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// TLS client configuration accepting tern's self-signed certificates (signatures still checked).
pub fn tls_client(resumption: bool) -> Arc<rustls::ClientConfig> {
    tern_tls::client_config(&ClientOptions {
        verify: Verify::Insecure,
        resumption,
        ..ClientOptions::default()
    })
}

/// An HTTP/1.1 client connection (keep-alive) to `addr`, over TLS when `tls`.
pub async fn connect(addr: SocketAddr, tls: bool) -> SendRequest<Body> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    if tls {
        let connector = TlsConnector::from(tls_client(false));
        let name = ServerName::try_from("localhost").unwrap();
        let stream = connector.connect(name, tcp).await.unwrap();
        handshake(stream).await
    } else {
        handshake(tcp).await
    }
}

async fn handshake<S>(io: S) -> SendRequest<Body>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = http1::handshake(TokioIo::new(io)).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
}

/// Sends `req` on `conn` and reads the whole response.
pub async fn send(conn: &mut SendRequest<Body>, req: Request<Body>) -> Got {
    conn.ready().await.unwrap();
    let resp: Response<hyper::body::Incoming> = conn.send_request(req).await.unwrap();
    let (parts, body) = resp.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Got {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
    }
}

/// A GET of `path` with Host `localhost`.
pub fn get_req(path: &str) -> Request<Body> {
    Request::get(path)
        .header("host", "localhost")
        .body(Body::default())
        .unwrap()
}

/// One GET on a new connection.
pub async fn get(addr: SocketAddr, tls: bool, path: &str) -> Got {
    let mut conn = connect(addr, tls).await;
    send(&mut conn, get_req(path)).await
}

/// What a raw exchange produced.
#[derive(Debug)]
pub struct Raw {
    pub bytes: Vec<u8>,
    /// The peer closed the connection (EOF or reset) before `wait` ran out.
    pub closed: bool,
}

impl Raw {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// The status code of the first response line, if any.
    pub fn status(&self) -> Option<u16> {
        self.text()
            .lines()
            .next()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }
}

/// Writes `data` on a plain TCP connection and reads until the peer closes or `wait` passes.
pub fn raw_exchange(addr: SocketAddr, data: &[u8], wait: Duration) -> Raw {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(data).unwrap();
    read_until_closed(&mut s, wait)
}

/// Reads until EOF/reset (closed) or until `wait` passes with the connection still open.
pub fn read_until_closed(s: &mut TcpStream, wait: Duration) -> Raw {
    let deadline = std::time::Instant::now() + wait;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Raw {
                bytes,
                closed: false,
            };
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => {
                return Raw {
                    bytes,
                    closed: true,
                }
            }
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Raw {
                    bytes,
                    closed: false,
                }
            }
            Err(_) => {
                return Raw {
                    bytes,
                    closed: true,
                }
            }
        }
    }
}

/// Whether a program is installed (for tests that use curl or openssl when present).
pub fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

// ---- Helpers for the proxying, balancing, timeouts, bad_input and limits tests ----

/// Runs `fut` on a fresh current-thread runtime and drops the runtime afterwards, so every
/// client connection the future left open is closed when this returns. For sync tests that
/// mix raw blocking sockets with the hyper client.
pub fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(fut)
}

/// A streaming request body: every `Bytes` sent on the channel becomes one chunk, and dropping
/// the sender ends the body. Its length is unknown, so hyper sends it chunked.
#[derive(Debug)]
pub struct ChanBody {
    rx: tokio::sync::mpsc::Receiver<Bytes>,
}

/// A [`ChanBody`] and the sender that feeds it.
pub fn chan_body(capacity: usize) -> (tokio::sync::mpsc::Sender<Bytes>, ChanBody) {
    let (tx, rx) = tokio::sync::mpsc::channel(capacity);
    (tx, ChanBody { rx })
}

impl hyper::body::Body for ChanBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        self.get_mut()
            .rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(hyper::body::Frame::data(b))))
    }
}

/// An HTTP/1.1 client connection over plain TCP whose request bodies are [`ChanBody`]s.
pub async fn connect_streaming(addr: SocketAddr) -> SendRequest<ChanBody> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let (sender, conn) = http1::handshake(TokioIo::new(tcp)).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
}

/// Reads from `s` until `needle` has arrived (true), or the peer closed or `wait` passed
/// (false). Returns every byte read, which may go past the needle.
pub fn read_until_contains(s: &mut TcpStream, needle: &[u8], wait: Duration) -> (Vec<u8>, bool) {
    let deadline = std::time::Instant::now() + wait;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        if bytes.windows(needle.len()).any(|w| w == needle) {
            return (bytes, true);
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return (bytes, false);
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => return (bytes, false),
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return (bytes, false)
            }
            Err(_) => return (bytes, false),
        }
    }
}

/// Reads exactly one response whose body is framed by Content-Length (or absent) from a
/// keep-alive connection, without waiting for the connection to close. `closed` is true when the
/// peer closed or `wait` passed before the whole response arrived.
pub fn read_response(s: &mut TcpStream, wait: Duration) -> Raw {
    let deadline = std::time::Instant::now() + wait;
    let (mut bytes, found) = read_until_contains(s, b"\r\n\r\n", wait);
    if !found {
        return Raw {
            bytes,
            closed: true,
        };
    }
    let head_len = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&bytes[..head_len]).to_ascii_lowercase();
    let body_len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut buf = [0u8; 65536];
    while bytes.len() < head_len + body_len {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Raw {
                bytes,
                closed: true,
            };
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(n) if n > 0 => bytes.extend_from_slice(&buf[..n]),
            _ => {
                return Raw {
                    bytes,
                    closed: true,
                }
            }
        }
    }
    Raw {
        bytes,
        closed: false,
    }
}

impl Raw {
    /// The response head (status line and header lines), up to the blank line.
    pub fn head_text(&self) -> String {
        let text = self.text();
        match text.find("\r\n\r\n") {
            Some(end) => text[..end].to_owned(),
            None => text,
        }
    }

    /// The bytes after the first response head (empty when no complete head arrived).
    pub fn body_bytes(&self) -> &[u8] {
        match self.bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            Some(end) => &self.bytes[end + 4..],
            None => &[],
        }
    }

    /// The value of field `name` in the request head `term` dumped in the body (`?h=1`).
    pub fn dumped(&self, name: &str) -> Option<String> {
        let body = String::from_utf8_lossy(self.body_bytes()).into_owned();
        body.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    /// The value of header `name` in the first response head (case-insensitive name).
    pub fn head_value(&self, name: &str) -> Option<String> {
        let prefix = format!("{}:", name.to_ascii_lowercase());
        self.head_text().lines().find_map(|l| {
            let lower = l.to_ascii_lowercase();
            lower
                .starts_with(&prefix)
                .then(|| l[prefix.len()..].trim().to_owned())
        })
    }
}

/// Waits up to `wait` until the file at `path` (an access log) holds `n` lines; returns them.
pub fn wait_log_lines(path: &std::path::Path, n: usize, wait: Duration) -> Vec<String> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= n {
            return text.lines().map(str::to_owned).collect();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{n} lines not in {path:?}: {text}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Deterministic pseudo-random bytes (xorshift), for garbage-input tests.
pub fn garbage(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

// ---- Raw one-connection test backends (regression tests for proxy defects) ----

/// A raw test backend: a `std::net::TcpListener` on 127.0.0.1:0 whose thread accepts ONE
/// connection (waiting at most `accept_within`) and hands it to `serve`, which does exactly
/// what the scenario needs and must itself be bounded. The thread's result is `None` when no
/// connection arrived in time; the listener is closed once the thread has accepted.
pub fn raw_backend<T, F>(
    accept_within: Duration,
    serve: F,
) -> (SocketAddr, std::thread::JoinHandle<Option<T>>)
where
    F: FnOnce(TcpStream) -> T + Send + 'static,
    T: Send + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let handle = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + accept_within;
        loop {
            match listener.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    drop(listener);
                    return Some(serve(s));
                }
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        && std::time::Instant::now() < deadline =>
                {
                    // Bounded poll for the one connection tern will open.
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => return None,
            }
        }
    });
    (addr, handle)
}

/// The first offset where `body` differs from `tern term`'s generated body, if any.
pub fn fill_mismatch(body: &[u8]) -> Option<usize> {
    body.iter()
        .enumerate()
        .position(|(i, &b)| b != tern_term::fill_byte(i as u64))
}
