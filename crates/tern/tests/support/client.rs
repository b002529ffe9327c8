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
    Got { status: parts.status.as_u16(), headers: parts.headers, body }
}

/// A GET of `path` with Host `localhost`.
pub fn get_req(path: &str) -> Request<Body> {
    Request::get(path).header("host", "localhost").body(Body::default()).unwrap()
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
        self.text().lines().next()?.split_whitespace().nth(1)?.parse().ok()
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
            return Raw { bytes, closed: false };
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => return Raw { bytes, closed: true },
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Raw { bytes, closed: false }
            }
            Err(_) => return Raw { bytes, closed: true },
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
