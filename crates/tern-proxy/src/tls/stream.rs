//! A TLS server stream over rustls, written for the fewest system calls per connection.
//!
//! tern used tokio-rustls at first. Per full TLS 1.3 handshake with one request, it made four
//! socket writes: the server flight, the session ticket (flushed at the end of `accept`), the
//! response, and close_notify, followed by a `shutdown(2)`. On loopback every write runs the whole
//! TCP path of both ends, and a full ECDSA handshake costs only ~140 µs of CPU here, so each
//! write is several percent of it. This stream differs in three ways:
//!
//! - **Session tickets travel with the first response.** A TLS 1.3 handshake is complete once
//!   the client's Finished is read; what rustls still has to send then is only the ticket, which
//!   no client needs before its first response. It stays in rustls' buffer and leaves in the same
//!   `writev` as the response. (TLS 1.2 ends with the server's Finished, which the client waits
//!   for, so that is flushed at once.)
//!
//!   A client that leaves Nagle on (Python's `ssl` over a default socket, Java's
//!   `HttpURLConnection`) holds its request until its Finished is acknowledged, and with
//!   nothing to send, the kernel delays that ACK by ~40 ms (a resumed TLS 1.2 session too: the
//!   client's Finished is the last flight there as well). So when no request came with the
//!   Finished and tern has nothing to send, the ACK leaves at once (`TCP_QUICKACK`: two
//!   `setsockopt`s and one bare ACK, cheaper than writing the ticket early, which is how
//!   HAProxy avoids the stall).
//! - **Writes are encrypted into rustls' buffer and sent on flush**, which the proxy loop calls
//!   after each piece of a response, so a response head and its first body bytes leave in one
//!   record and one `writev`; `poll_write_vectored` takes head and body without copying them
//!   together first.
//! - **Closing sends close_notify, then closes the socket** when the stream is dropped; the extra
//!   `shutdown(2)` is skipped (`close` sends the FIN). When the proxy knows a response is the
//!   connection's last, it queues close_notify before the flush ([`TlsStream::queue_close_notify`])
//!   and both leave in one `writev`. A *half-close* is different: a tunnel or TCP session passing
//!   on its server's end of stream keeps reading from the client, so the socket stays open and
//!   `poll_shutdown` sends the FIN itself (`shutdown(2)` of the sending side) after
//!   close_notify. A client that reads until the TCP end of stream (a plain socket under its own
//!   TLS, `openssl s_client`, anything that ignores close_notify) sees it then, not only once
//!   it closes its own side.
//!
//! Reads decrypt into the caller's buffer. A peer that closes TCP without close_notify is seen as
//! end of stream: HTTP's own framing tells a complete message from a truncated one.

use std::io::{self, BufRead, Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use rustls::{ProtocolVersion, ServerConfig, ServerConnection, SignatureAlgorithm};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::tls::cert_probe;

/// Encrypted output above this size is written out during `poll_write` rather than waiting for
/// the flush, so a large body does not pile up in memory.
const WRITE_HIGH_WATER: usize = 64 * 1024;

/// A server-side TLS connection on a TCP stream.
#[derive(Debug)]
pub(crate) struct TlsStream {
    tcp: TcpStream,
    conn: ServerConnection,
    /// TCP end of stream seen.
    eof: bool,
    close_sent: bool,
    /// Plaintext accepted since output was last written out completely.
    unflushed: usize,
    /// Encrypted bytes written to the socket so far.
    sent: u64,
    /// Key algorithm of the certificate sent, noted during the handshake (`cert_probe.rs`).
    cert: Option<SignatureAlgorithm>,
}

/// A [`TlsStream`] between two event loops: its socket registered with neither, and what rustls
/// has buffered (a request that came with the client's Finished, a ticket to send) kept.
#[derive(Debug)]
pub(crate) struct Detached {
    tcp: std::net::TcpStream,
    conn: Box<ServerConnection>,
    eof: bool,
    sent: u64,
    cert: Option<SignatureAlgorithm>,
}

impl Detached {
    /// Registers the socket with this thread's event loop. Readiness is taken afresh, so
    /// bytes that arrived meanwhile are read.
    pub(crate) fn attach(self) -> io::Result<TlsStream> {
        Ok(TlsStream {
            tcp: TcpStream::from_std(self.tcp)?,
            conn: *self.conn,
            eof: self.eof,
            close_sent: false,
            unflushed: 0,
            sent: self.sent,
            cert: self.cert,
        })
    }
}

/// `io::Read` and `io::Write` over the tokio socket for rustls, mapping `Pending` to
/// `WouldBlock`. Going through tokio's `poll_read`/`poll_write` (rather than `try_read`) keeps
/// tokio's readiness bookkeeping: a short read or write clears readiness without another system
/// call, and `Pending` registers the task's waker.
struct Adapter<'a, 'b> {
    tcp: &'a mut TcpStream,
    cx: &'a mut Context<'b>,
}

fn would_block<T>(poll: Poll<io::Result<T>>) -> io::Result<T> {
    match poll {
        Poll::Ready(r) => r,
        Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
    }
}

impl Read for Adapter<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut rb = ReadBuf::new(buf);
        would_block(Pin::new(&mut *self.tcp).poll_read(self.cx, &mut rb))?;
        Ok(rb.filled().len())
    }
}

impl Write for Adapter<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        would_block(Pin::new(&mut *self.tcp).poll_write(self.cx, buf))
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        would_block(Pin::new(&mut *self.tcp).poll_write_vectored(self.cx, bufs))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn invalid(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl TlsStream {
    /// Runs the server side of a TLS handshake on `tcp`. `received` holds bytes already read
    /// from the socket (the ClientHello, when admission looked at it first); usually empty.
    pub(crate) async fn accept(
        tcp: TcpStream,
        config: Arc<ServerConfig>,
        received: &[u8],
    ) -> io::Result<Self> {
        let mut conn = ServerConnection::new(config).map_err(invalid)?;
        feed(&mut conn, received)?;
        let mut stream = Self {
            tcp,
            conn,
            eof: false,
            close_sent: false,
            unflushed: 0,
            sent: 0,
            cert: None,
        };
        let mut fed = received.is_empty();
        std::future::poll_fn(|cx| {
            if !fed {
                fed = true;
                stream.process(cx)?;
            }
            stream.poll_handshake(cx)
        })
        .await?;
        Ok(stream)
    }

    /// Takes the stream off this thread's event loop, to go on on another thread's
    /// ([`Detached::attach`]): the handshake offload thread hands its connections to the worker
    /// so.
    pub(crate) fn detach(self) -> io::Result<Detached> {
        debug_assert!(self.unflushed == 0 && !self.close_sent);
        Ok(Detached {
            tcp: self.tcp.into_std()?,
            conn: Box::new(self.conn),
            eof: self.eof,
            sent: self.sent,
            cert: self.cert,
        })
    }

    /// Key algorithm of the certificate this side sent (`None` for a resumption).
    pub(crate) fn cert_algorithm(&self) -> Option<SignatureAlgorithm> {
        self.cert
    }

    pub(crate) fn connection(&self) -> &ServerConnection {
        &self.conn
    }

    /// Encrypted bytes written to the socket so far.
    pub(crate) fn sent(&self) -> u64 {
        self.sent
    }

    /// Queues close_notify; the next flush sends it (and `poll_shutdown` only flushes).
    pub(crate) fn queue_close_notify(&mut self) {
        if !self.close_sent {
            self.conn.send_close_notify();
            self.close_sent = true;
        }
    }

    /// Sends close_notify (queued, then flushed): the orderly end of the TLS layer; the socket
    /// stays open until the stream is dropped.
    pub(crate) fn poll_close_notify(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.queue_close_notify();
        self.poll_flush_tls(cx)
    }

    /// The TCP socket under the TLS layer.
    pub(crate) fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    fn poll_handshake(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            if !self.conn.is_handshaking() {
                let sent = self.sent;
                if self.conn.protocol_version() != Some(ProtocolVersion::TLSv1_3) {
                    ready!(self.poll_flush_tls(cx))?;
                }
                if self.sent == sent {
                    // The client's flight was the last (TLS 1.3, or a resumed TLS 1.2 session).
                    self.ack_finished();
                }
                return Poll::Ready(Ok(()));
            }
            ready!(self.poll_flush_tls(cx))?;
            if ready!(self.poll_read_tls(cx))? == 0 {
                return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
            }
            self.process(cx)?;
        }
    }

    /// Acknowledges the client's Finished at once when no request came with it, so a client
    /// that leaves Nagle on does not hold its request back until the delayed ACK.
    fn ack_finished(&mut self) {
        let request_came = matches!(self.conn.reader().fill_buf(), Ok(plain) if !plain.is_empty());
        if !request_came {
            quick_ack(&self.tcp);
        }
    }

    /// Processes received records; on a TLS error, sends the alert rustls prepared (best effort:
    /// without waiting for the socket) and fails.
    fn process(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let handshaking = self.conn.is_handshaking();
        if handshaking {
            cert_probe::clear();
        }
        let processed = self.conn.process_new_packets();
        if handshaking {
            if let Some(alg) = cert_probe::take() {
                self.cert = Some(alg);
            }
        }
        if let Err(e) = processed {
            send_alert(&mut self.tcp, &mut self.conn, cx);
            return Err(invalid(e));
        }
        Ok(())
    }

    /// Reads TLS records from the socket into rustls. `Ok(0)` is TCP end of stream.
    fn poll_read_tls(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let n = ready!(read_tls(&mut self.tcp, &mut self.conn, cx))?;
        self.eof |= n == 0;
        Poll::Ready(Ok(n))
    }

    /// Writes everything rustls has to send.
    fn poll_flush_tls(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(flush_tls(&mut self.tcp, &mut self.conn, cx, &mut self.sent))?;
        self.unflushed = 0;
        Poll::Ready(Ok(()))
    }

    /// Accepts plaintext into rustls, writing out when too much is buffered.
    fn poll_accept_plaintext(
        &mut self,
        cx: &mut Context<'_>,
        write: impl Fn(&mut rustls::Writer<'_>) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        loop {
            let n = write(&mut self.conn.writer())?;
            self.unflushed += n;
            if self.unflushed > WRITE_HIGH_WATER || n == 0 {
                match self.poll_flush_tls(cx) {
                    Poll::Ready(Ok(())) if n == 0 => continue,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending if n == 0 => return Poll::Pending,
                    _ => {}
                }
            }
            return Poll::Ready(Ok(n));
        }
    }
}

/// Sends the ACK the kernel holds back for what was read, then returns to delayed ACKs.
///
/// `TCP_QUICKACK` on sends a pending ACK at once; left on, the kernel would also ACK the next
/// request on its own before the response could carry the ACK, one more packet per
/// connection, so it is turned off again (delayed-ACK mode). Best effort: a failure only
/// leaves the delayed ACK as it was.
fn quick_ack(tcp: &TcpStream) {
    let sock = socket2::SockRef::from(tcp);
    let _ = sock.set_tcp_quickack(true);
    let _ = sock.set_tcp_quickack(false);
}

/// Hands bytes already read from the socket (a ClientHello admission looked at) to rustls.
fn feed(conn: &mut ServerConnection, received: &[u8]) -> io::Result<()> {
    let mut rest = received;
    while !rest.is_empty() {
        // A ClientHello is one record, well under rustls' buffer, so this takes one pass.
        conn.read_tls(&mut rest)?;
    }
    Ok(())
}

/// Reads TLS records from the socket into rustls. `Ok(0)` is TCP end of stream.
fn read_tls(
    tcp: &mut TcpStream,
    conn: &mut ServerConnection,
    cx: &mut Context<'_>,
) -> Poll<io::Result<usize>> {
    let mut io = Adapter { tcp, cx };
    match conn.read_tls(&mut io) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
        other => Poll::Ready(other),
    }
}

/// Writes everything rustls has to send, adding the bytes written to `sent`.
fn flush_tls(
    tcp: &mut TcpStream,
    conn: &mut ServerConnection,
    cx: &mut Context<'_>,
    sent: &mut u64,
) -> Poll<io::Result<()>> {
    while conn.wants_write() {
        let mut io = Adapter {
            tcp: &mut *tcp,
            cx: &mut *cx,
        };
        match conn.write_tls(&mut io) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
            Err(e) => return Poll::Ready(Err(e)),
            Ok(n) => *sent += n as u64,
        }
    }
    Poll::Ready(Ok(()))
}

/// Sends the alert rustls prepared after an error, best effort: without waiting for the socket.
fn send_alert(tcp: &mut TcpStream, conn: &mut ServerConnection, cx: &mut Context<'_>) {
    while conn.wants_write() {
        let mut io = Adapter {
            tcp: &mut *tcp,
            cx: &mut *cx,
        };
        if conn.write_tls(&mut io).is_err() {
            break;
        }
    }
}

impl AsyncRead for TlsStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            // Copy straight from rustls' plaintext buffer: `read` would first need the whole
            // unfilled part of the caller's buffer zeroed (`initialize_unfilled`) on every call.
            let mut reader = this.conn.reader();
            match reader.fill_buf() {
                Ok(plain) => {
                    let n = plain.len().min(buf.remaining());
                    buf.put_slice(&plain[..n]);
                    reader.consume(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // TCP closed without close_notify: end of stream; HTTP framing decides whether
                // the message was complete.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Poll::Ready(Ok(())),
                Err(e) => return Poll::Ready(Err(e)),
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            ready!(this.poll_read_tls(cx))?;
            this.process(cx)?;
        }
    }
}

impl AsyncWrite for TlsStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_accept_plaintext(cx, |w| w.write(buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_accept_plaintext(cx, |w| w.write_vectored(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_tls(cx)
    }

    /// A half-close: close_notify, then the FIN (see the module docs).
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_close_notify(cx))?;
        Pin::new(&mut this.tcp).poll_shutdown(cx)
    }
}
