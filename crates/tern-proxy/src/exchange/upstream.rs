//! Connections to servers: a TCP socket, plain or under TLS, its read buffer and the response
//! head parsed from it.
//!
//! A server connection is driven by the session task that uses it (no task of its own, no
//! channel) and outlives that session in the worker's pool ([`crate::exchange::pool`]). Its
//! buffer and parsed-head storage travel with it, so a reused connection parses its next
//! response without allocating.
//!
//! **Plain or TLS.** [`ServerStream`] is an enum, so the relay is one copy of code and a plain
//! connection pays one branch per I/O call: no boxing or dynamic dispatch per request. The TLS
//! side is tokio-rustls' client stream, not tern's own stream of `tls/stream.rs`: that one saves
//! system calls per *client connection* (the ticket with the first response, close_notify with
//! the last), which matters at thousands of handshakes a second; server connections are pooled
//! and long-lived, so the handshake is rare and the plain stream is enough. The handshake runs
//! inside the `connect` timeout, and its failures (bad certificate, alert, not TLS) are connect
//! errors, so retries, redispatch and passive checks treat them like a refused connect.
//!
//! **Idle connections.** Whether an idle connection is still usable is judged by its read
//! readiness, polled with a no-op waker: tokio clears read readiness after a read shorter than
//! the buffer (the end of a response), so a connection the kernel reported no event for since
//! cannot have been closed by the server, and no system call is made. Only when an event
//! arrived does a `try_read` tell a close (end of stream, reset) or unexpected bytes (both:
//! discard) from a spurious wake-up. On TLS, bytes may arrive on an idle connection that are not
//! a response: TLS 1.3 session tickets and key updates. They are handed to rustls: handshake
//! messages only keep the connection usable; close_notify, application data, a TLS error or the
//! end of the stream make it unusable. Nothing here waits.

mod dial;

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use rustls::pki_types::{DnsName, ServerName};
use rustls::ClientConfig;
use tern_config::{ServerSni, ServerTls};
use tern_h1::{Limits, ResponseHead};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::buffer::Buffer;
use crate::exchange::h2::UpstreamStream;
use crate::exchange::proxy_header::{Origin, Proxied};

/// Working size of a server connection's read buffer: the unit in which response bodies are
/// relayed (fewer, larger reads and writes for big bodies; small enough to keep many pooled).
pub(crate) const BUFFER_SIZE: usize = 32 * 1024;

/// Reads an idle TLS connection may take before it is judged (a few tickets fit in one).
const MAX_IDLE_READS: usize = 4;

/// What one read of an idle connection may take: idle connections keep no buffer of their
/// own (the pool lends one at checkout), so the judgement reads into this much stack.
const IDLE_READ: usize = 4096;

/// Limits on response heads. Servers are trusted more than clients, but a head still has to
/// fit the buffer: a larger one is answered 502.
pub(crate) const RESPONSE_LIMITS: Limits = Limits {
    max_head_size: 64 * 1024,
    max_headers: 128,
    max_chunk_ext: 16 * 1024,
    max_trailer_size: 64 * 1024,
};

/// Why a connection to a server could not be opened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("connect to {addr} timed out after {timeout:?} (TCP and TLS handshake)")]
    Timeout { addr: SocketAddr, timeout: Duration },
    #[error("connect to {addr}: {cause}")]
    Io { addr: SocketAddr, cause: io::Error },
    #[error("TLS handshake with {addr} failed: {cause}")]
    Tls { addr: SocketAddr, cause: io::Error },
}

impl ConnectError {
    /// Whether the TLS layer failed (worth a warning: usually a certificate or configuration
    /// problem rather than a server down).
    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, ConnectError::Tls { .. })
    }
}

/// The byte stream to a server.
#[derive(Debug)]
pub(crate) enum ServerStream {
    Plain(TcpStream),
    /// Boxed: the TLS state is large, and allocated once per connection, not per request.
    Tls(Box<TlsStream<TcpStream>>),
    /// One request's stream on an HTTP/2 connection ([`crate::exchange::h2`]); never pooled.
    H2(Box<UpstreamStream>),
}

/// How to open TLS on a new connection: the server's configuration and the name to send and
/// verify.
#[derive(Debug)]
pub(crate) struct TlsTarget<'a> {
    pub config: &'a Arc<ClientConfig>,
    pub name: ServerName<'static>,
    /// The pool key of a connection whose name comes from the request (`sni = "host"`).
    pub key: Option<Box<str>>,
}

/// An open connection to a server.
#[derive(Debug)]
pub(crate) struct ServerConn {
    pub stream: ServerStream,
    pub buf: Buffer,
    pub head: ResponseHead,
    /// For `sni = "host"`: the name the connection was opened with; it carries only requests
    /// for that name. `None` otherwise.
    pub key: Option<Box<str>>,
    /// The address connected to.
    pub addr: SocketAddr,
    /// For a server with `proxy_protocol`: what the PROXY header that opened the connection
    /// said; it carries only requests of that same client connection. `None` otherwise.
    pub origin: Option<Origin>,
}

/// Connects to `addr` within `timeout`, the TLS handshake included when `tls` is given. With
/// `proxy`, a PROXY protocol header of that version for that origin is the first thing sent
/// (before the TLS handshake).
pub(crate) async fn connect(
    addr: SocketAddr,
    timeout: Duration,
    tls: Option<TlsTarget<'_>>,
    proxy: Option<Proxied<'_>>,
) -> Result<ServerConn, ConnectError> {
    let buf = Buffer::new(BUFFER_SIZE, RESPONSE_LIMITS.max_head_size);
    connect_with(addr, timeout, tls, proxy, buf).await
}

/// [`connect`], the connection reading into `buf` (a spare one: see `Pools::lend`).
pub(crate) async fn connect_with(
    addr: SocketAddr,
    timeout: Duration,
    tls: Option<TlsTarget<'_>>,
    proxy: Option<Proxied<'_>>,
    buf: Buffer,
) -> Result<ServerConn, ConnectError> {
    let open = async {
        let mut tcp = dial::dial(addr)
            .await
            .map_err(|cause| ConnectError::Io { addr, cause })?;
        if let Some(proxied) = &proxy {
            // A few dozen bytes into an empty send buffer: one system call, no wait.
            tcp.write_all(&proxied.header())
                .await
                .map_err(|cause| ConnectError::Io { addr, cause })?;
        }
        match tls {
            None => Ok((ServerStream::Plain(tcp), None)),
            Some(target) => {
                let connector = TlsConnector::from(Arc::clone(target.config));
                let stream = connector
                    .connect(target.name, tcp)
                    .await
                    .map_err(|cause| ConnectError::Tls { addr, cause })?;
                Ok((ServerStream::Tls(Box::new(stream)), target.key))
            }
        }
    };
    let (stream, key) = match tokio::time::timeout(timeout, open).await {
        Err(_) => return Err(ConnectError::Timeout { addr, timeout }),
        Ok(result) => result?,
    };
    Ok(ServerConn::new(
        stream,
        buf,
        addr,
        key,
        proxy.map(|p| p.origin),
    ))
}

/// The name a TLS connection to a server with `tls` at `ip` uses, and its pool key: the fixed
/// SNI, the request's host (`sni = "host"`, from `host`, the Host header's value), or else the
/// IP address (no SNI is sent; the certificate must name the address).
pub(crate) fn server_name(
    tls: &ServerTls,
    host: Option<&[u8]>,
    ip: IpAddr,
) -> (ServerName<'static>, Option<Box<str>>) {
    let by_ip = ServerName::IpAddress(ip.into());
    match &tls.sni {
        ServerSni::None => (by_ip, None),
        ServerSni::Fixed(name) => match DnsName::try_from(name.as_str()) {
            Ok(dns) => (ServerName::DnsName(dns.to_owned()), None),
            Err(_) => (by_ip, None),
        },
        ServerSni::Host => {
            let name = host.and_then(host_name);
            match name.and_then(|n| DnsName::try_from(n.to_owned()).ok()) {
                Some(dns) => {
                    let key: Box<str> = dns.as_ref().into();
                    (ServerName::DnsName(dns), Some(key))
                }
                // No usable name: no SNI, and a key no name can equal.
                None => (by_ip, Some("".into())),
            }
        }
    }
}

/// The host part of a Host header value (without the port), lower-cased; `None` for an IP
/// literal or a value that is not text.
fn host_name(value: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(value).ok()?;
    if text.starts_with('[') {
        return None;
    }
    let host = text.rsplit_once(':').map_or(text, |(h, _)| h);
    if host.is_empty() || host.parse::<IpAddr>().is_ok() {
        return None;
    }
    Some(host.to_ascii_lowercase())
}

impl ServerStream {
    /// The TCP socket under the stream (`None` for a stream of an HTTP/2 connection, which
    /// shares its socket).
    pub(crate) fn tcp(&self) -> Option<&TcpStream> {
        match self {
            ServerStream::Plain(tcp) => Some(tcp),
            ServerStream::Tls(tls) => Some(tls.get_ref().0),
            ServerStream::H2(_) => None,
        }
    }

    /// Whether the TLS server picked HTTP/2 from the ALPN offer.
    pub(crate) fn negotiated_h2(&self) -> bool {
        match self {
            ServerStream::Tls(tls) => tls.get_ref().1.alpn_protocol() == Some(b"h2"),
            ServerStream::Plain(_) | ServerStream::H2(_) => false,
        }
    }

    /// The socket of a plain TCP connection (no TLS, not an HTTP/2 stream): what a tunnel may
    /// `splice(2)` from and to.
    pub(crate) fn plain_tcp(&self) -> Option<&TcpStream> {
        match self {
            ServerStream::Plain(tcp) => Some(tcp),
            ServerStream::Tls(_) | ServerStream::H2(_) => None,
        }
    }
}

impl AsyncRead for ServerStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            ServerStream::Tls(tls) => match Pin::new(&mut **tls).poll_read(cx, buf) {
                // TCP closed without close_notify: end of stream; HTTP framing decides whether
                // the response was complete (as on the client side).
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    Poll::Ready(Ok(()))
                }
                other => other,
            },
            ServerStream::H2(h2) => Pin::new(&mut **h2).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ServerStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ServerStream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            ServerStream::Tls(tls) => Pin::new(&mut **tls).poll_write(cx, buf),
            ServerStream::H2(h2) => Pin::new(&mut **h2).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ServerStream::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            ServerStream::Tls(tls) => Pin::new(&mut **tls).poll_write_vectored(cx, bufs),
            ServerStream::H2(h2) => Pin::new(&mut **h2).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            ServerStream::Plain(tcp) => tcp.is_write_vectored(),
            ServerStream::Tls(tls) => tls.is_write_vectored(),
            ServerStream::H2(h2) => h2.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(_) => Poll::Ready(Ok(())),
            ServerStream::Tls(tls) => Pin::new(&mut **tls).poll_flush(cx),
            ServerStream::H2(h2) => Pin::new(&mut **h2).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            ServerStream::Tls(tls) => Pin::new(&mut **tls).poll_shutdown(cx),
            ServerStream::H2(h2) => Pin::new(&mut **h2).poll_shutdown(cx),
        }
    }
}

impl ServerConn {
    /// A connection over `stream` reading into `buf` (empty).
    pub(crate) fn new(
        stream: ServerStream,
        buf: Buffer,
        addr: SocketAddr,
        key: Option<Box<str>>,
        origin: Option<Origin>,
    ) -> Self {
        ServerConn {
            addr,
            stream,
            buf,
            head: ResponseHead::new(),
            key,
            origin,
        }
    }

    /// Whether an idle connection can carry a request: no close, reset or stray byte from the
    /// server since its last response (see the module docs).
    pub(crate) fn is_usable(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        match &mut self.stream {
            ServerStream::Plain(tcp) => match tcp.poll_read_ready(&mut cx) {
                Poll::Pending => true,
                Poll::Ready(Err(_)) => false,
                // Any byte, or the end, condemns the connection: one byte of room tells.
                Poll::Ready(Ok(())) => {
                    matches!(tcp.try_read(&mut [0u8; 1]), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
                }
            },
            ServerStream::Tls(tls) => tls_is_usable(tls, &mut cx),
            // A stream serves one request: its connection is pooled by `exchange::h2`.
            ServerStream::H2(_) => false,
        }
    }
}

/// [`ServerConn::is_usable`] for TLS: raw bytes that arrived are passed to rustls; only
/// handshake messages (session tickets, key updates) leave the connection usable.
fn tls_is_usable(tls: &mut TlsStream<TcpStream>, cx: &mut Context<'_>) -> bool {
    let (tcp, conn) = tls.get_mut();
    // Zeroed only when something arrived: the common idle connection has nothing to read.
    let mut scratch = None;
    for _ in 0..MAX_IDLE_READS {
        match tcp.poll_read_ready(cx) {
            Poll::Pending => return true,
            Poll::Ready(Err(_)) => return false,
            Poll::Ready(Ok(())) => {}
        }
        let scratch = scratch.get_or_insert([0u8; IDLE_READ]);
        let n = match tcp.try_read(scratch) {
            Ok(0) => return false,
            Ok(n) => n,
            // A spurious wake-up: readiness is cleared, the next poll says Pending.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(_) => return false,
        };
        let mut records = &scratch[..n];
        // Bounded: each round takes at least one byte, or stops.
        while !records.is_empty() {
            match conn.read_tls(&mut records) {
                Ok(0) | Err(_) => return false,
                Ok(_) => {}
            }
            match conn.process_new_packets() {
                Ok(state) if state.plaintext_bytes_to_read() == 0 && !state.peer_has_closed() => {}
                _ => return false,
            }
        }
    }
    false
}
