//! One HTTP/2 stream as the byte stream an HTTP/1.1 session serves (design note 0003).
//!
//! Reading gives the request ([`RequestSource`]); writing takes the response
//! ([`ResponseSink`]). Once the request is read whole the stream reads as a keep-alive client
//! that sends nothing more (pending) until the response went out, then as a client that closed:
//! the session ends after exactly one exchange. A reset from the client (RST_STREAM) reads as a
//! reset connection, so the session stops its exchange as it would for an HTTP/1.1 client that
//! went away.
//!
//! A WebSocket stream (RFC 8441, `connect.rs`) reads as an upgrade request whose client sends
//! nothing until the `101` went out; then as the tunnel's client end: its DATA, END_STREAM as
//! the end of stream, and a shutdown of the writing side as END_STREAM.

use std::cell::{Cell, RefCell};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use tern_h1::ResponseHead;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::connect::Handshake;
use super::request_body::RequestSource;
use super::response::ResponseSink;
use crate::exchange::proxy_header::ClientTls;
use crate::listen::client::ClientStream;
use crate::listen::proxy_in::Addrs;

/// What the streams of one connection know of it: what the session reads of a connection.
#[derive(Debug)]
pub(crate) struct ConnInfo {
    /// The client's addresses, and the TLVs of a PROXY v2 header (`fc_pp_tlv`).
    pub addrs: Addrs,
    /// The address the client connected to (`None` if the socket could not say).
    pub local: Option<SocketAddr>,
    /// The server name of the TLS ClientHello.
    pub sni: Option<String>,
    /// The client's verified certificate (DER), with `client_auth`.
    pub cert: Option<Vec<u8>>,
    pub tls: bool,
    /// The TLS session's facts for a PROXY v2 header sent to a server (its SNI, ALPN and
    /// certificate fields unused: the connection's own are above, and ALPN chose `h2`).
    pub session: Option<ClientTls<'static>>,
    /// Streams the client reset before their response ended (see `max_client_resets`).
    pub client_resets: Cell<usize>,
    /// Streams being served (their tasks not yet ended).
    pub live: Cell<usize>,
    /// The connection task, waiting for a stream to end before it takes another.
    pub waiting: RefCell<Option<Waker>>,
}

/// Counts a stream as served until it is dropped, then wakes the connection task.
#[derive(Debug)]
pub(crate) struct Live(pub(crate) Rc<ConnInfo>);

impl Live {
    pub(crate) fn start(conn: Rc<ConnInfo>) -> Self {
        conn.live.set(conn.live.get() + 1);
        Live(conn)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.live.set(self.0.live.get().saturating_sub(1));
        if let Some(waker) = self.0.waiting.borrow_mut().take() {
            waker.wake();
        }
    }
}

/// A stream served by an HTTP/1.1 session.
#[derive(Debug)]
pub(crate) struct H2Stream {
    request: RequestSource,
    response: ResponseSink,
    conn: Rc<ConnInfo>,
    /// The WebSocket handshake tern made with the server (RFC 8441 streams).
    websocket: Option<Handshake>,
}

impl H2Stream {
    pub(crate) fn new(
        request: RequestSource,
        response: ResponseSink,
        conn: Rc<ConnInfo>,
        websocket: Option<Handshake>,
    ) -> Self {
        H2Stream {
            request,
            response,
            conn,
            websocket,
        }
    }

    /// The connection's addresses (a PROXY header's, if one came), for the stream's session.
    pub(crate) fn addrs(&self) -> Addrs {
        self.conn.addrs.clone()
    }

    pub(crate) fn tls(&self) -> bool {
        self.conn.tls
    }

    /// Ends the stream at once: with RST_STREAM unless the whole response went out. A stream
    /// the client reset first is counted for the connection.
    pub(crate) fn close(&mut self) {
        if self.response.is_done() {
            return;
        }
        let mut cx = Context::from_waker(std::task::Waker::noop());
        if self.response.poll_reset(&mut cx).is_ready() {
            let resets = &self.conn.client_resets;
            resets.set(resets.get() + 1);
        }
        self.response.cancel();
    }
}

impl Drop for H2Stream {
    fn drop(&mut self) {
        self.close();
    }
}

impl AsyncRead for H2Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.response.is_switched() {
            this.request.open_tunnel();
        }
        if !this.request.is_done() {
            let before = buf.filled().len();
            std::task::ready!(this.request.poll_read(cx, buf))?;
            if buf.filled().len() != before {
                return Poll::Ready(Ok(()));
            }
        }
        if this.response.is_done() || (this.response.is_switched() && this.request.is_done()) {
            // End of stream: the session's exchange is over.
            return Poll::Ready(Ok(()));
        }
        match this.response.poll_reset(cx) {
            Poll::Ready(reason) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                format!("stream reset by the client ({reason:?})"),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncWrite for H2Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().response.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().response.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.response.end_tunnel();
        std::task::ready!(this.response.poll_flush(cx))?;
        this.close();
        Poll::Ready(Ok(()))
    }
}

impl ClientStream for H2Stream {
    fn poll_close(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.close();
        Poll::Ready(Ok(()))
    }

    fn poll_cancelled(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.response.is_done() {
            return Poll::Pending;
        }
        self.response.poll_reset(cx).map(|_| ())
    }

    fn socket(&self) -> Option<&TcpStream> {
        None
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.conn
            .local
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "local address unknown"))
    }

    fn peer_certificate(&self) -> Option<&[u8]> {
        self.conn.cert.as_deref()
    }

    fn sni(&self) -> Option<&str> {
        self.conn.sni.as_deref()
    }

    fn client_tls(&self) -> Option<ClientTls<'_>> {
        self.conn.session.map(|session| ClientTls {
            sni: self.conn.sni.as_deref(),
            alpn: Some(b"h2"),
            ..session
        })
    }

    fn accepts_switch(&self, head: &ResponseHead, buf: &[u8]) -> bool {
        let Some(handshake) = self.websocket else {
            return true;
        };
        let mut accepts = head
            .fields()
            .iter()
            .filter(|f| f.name(buf).eq_ignore_ascii_case(b"sec-websocket-accept"))
            .map(|f| handshake.accepts(f.value(buf)));
        // Exactly one field, with the value that answers the key (RFC 6455 §4.1).
        accepts.next() == Some(true) && accepts.next().is_none()
    }
}
