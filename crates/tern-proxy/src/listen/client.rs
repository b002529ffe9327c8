//! What the proxy loop needs from a client connection, plain or TLS.
//!
//! Both kinds are tokio `AsyncRead + AsyncWrite`; the loop is generic over them (one copy of the
//! code per kind, no dynamic dispatch). The differences the loop must know about are here:
//! - a TLS stream buffers what is written until it is flushed (one record, one `writev` for a
//!   head and its body), and its flush can make progress while still pending (see
//!   [`ClientStream::bytes_sent`]);
//! - closing a TLS stream first sends close_notify; closing a plain one needs no system call
//!   beyond the `close` of the drop;
//! - after an error answer, the loop shuts down the sending side and drains what the client
//!   still sends for a moment ("lingering close", as HAProxy and nginx do), because closing a
//!   socket with unread data makes the kernel answer with a reset that can destroy the answer
//!   before the client reads it.

use std::io;
use std::net::{Shutdown, SocketAddr};
use std::task::{ready, Context, Poll};

use tern_h1::ResponseHead;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::exchange::proxy_header::ClientTls;
use crate::tls::stream::TlsStream;

/// A client connection the proxy loop can serve.
pub(crate) trait ClientStream: AsyncRead + AsyncWrite + Unpin {
    /// Bytes written to the socket so far, for streams whose flush makes progress while
    /// pending (TLS: a flush returns only once rustls' whole buffer is out). Plain TCP returns
    /// a constant: every write that makes progress returns ready.
    fn bytes_sent(&self) -> u64 {
        0
    }

    /// Starts an orderly close: TLS sends close_notify (completes once flushed); plain TCP has
    /// nothing to do before `close`.
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Announces the close with the last bytes written: TLS queues close_notify so the next
    /// flush sends it in the same `writev` as the end of the response.
    fn queue_close(&mut self) {}

    /// Ready when the client cancelled the exchange in flight (an HTTP/2 RST_STREAM): the relay
    /// stops it at once, and the server sees the cancellation (its stream reset, or its
    /// connection closed). A connection of its own has no such signal: pending.
    fn poll_cancelled(&mut self, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }

    /// The TCP socket under the stream; `None` for a stream multiplexed on a connection (an
    /// HTTP/2 stream), which has no socket of its own to shut down or drain.
    fn socket(&self) -> Option<&TcpStream>;

    /// The socket when the stream is that plain socket, nothing layered on it (no TLS): what
    /// a tunnel may `splice(2)` from and to.
    fn plain_tcp(&self) -> Option<&TcpStream> {
        None
    }

    /// The address the client connected to.
    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket().ok_or_else(no_socket)?.local_addr()
    }

    /// The client's verified certificate (DER), on a TLS bind with `client_auth`.
    fn peer_certificate(&self) -> Option<&[u8]> {
        None
    }

    /// The server name the client sent in its TLS ClientHello (SNI).
    fn sni(&self) -> Option<&str> {
        None
    }

    /// The client's TLS session, when tern terminated it, as a PROXY v2 header sent to a
    /// server tells it (its TLVs).
    fn client_tls(&self) -> Option<ClientTls<'_>> {
        None
    }

    /// Whether the server's `101` (its head `head`, parsed from `buf`) may turn this client into
    /// a tunnel. An HTTP/1.1 client judges the `101` itself; an HTTP/2 stream carrying a
    /// WebSocket cannot (RFC 8441: tern made the WebSocket key), so it checks the server's
    /// `Sec-WebSocket-Accept` here (`http2/stream.rs`).
    fn accepts_switch(&self, _head: &ResponseHead, _buf: &[u8]) -> bool {
        true
    }

    /// Shuts down the sending direction of the socket (FIN), keeping the receiving one open.
    fn shutdown_send(&self) -> io::Result<()> {
        match self.socket() {
            Some(tcp) => socket2::SockRef::from(tcp).shutdown(Shutdown::Write),
            None => Ok(()),
        }
    }

    /// Reads raw bytes from the socket, bypassing TLS, to drop them (lingering close); end of
    /// stream at once without a socket.
    fn poll_drain(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let Some(tcp) = self.socket() else {
            return Poll::Ready(Ok(0));
        };
        loop {
            ready!(tcp.poll_read_ready(cx))?;
            match tcp.try_read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => return Poll::Ready(other),
            }
        }
    }
}

fn no_socket() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "no socket of its own")
}

impl ClientStream for TcpStream {
    fn poll_close(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn socket(&self) -> Option<&TcpStream> {
        Some(self)
    }

    fn plain_tcp(&self) -> Option<&TcpStream> {
        Some(self)
    }
}

impl ClientStream for TlsStream {
    fn bytes_sent(&self) -> u64 {
        self.sent()
    }

    fn peer_certificate(&self) -> Option<&[u8]> {
        let chain = self.connection().peer_certificates()?;
        chain.first().map(|cert| cert.as_ref())
    }

    fn sni(&self) -> Option<&str> {
        self.connection().server_name()
    }

    fn client_tls(&self) -> Option<ClientTls<'_>> {
        Some(ClientTls::of(self.connection()))
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // The close of the drop sends the FIN: no `shutdown(2)` before it.
        self.poll_close_notify(cx)
    }

    fn queue_close(&mut self) {
        self.queue_close_notify();
    }

    fn socket(&self) -> Option<&TcpStream> {
        Some(self.tcp())
    }
}
