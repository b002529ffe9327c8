//! tokio's `AsyncRead`/`AsyncWrite` for a connection, so the `h2` crate can drive it.
//!
//! The HTTP/1.1 client calls `send`/`recv` itself; the HTTP/2 client hands the connection to
//! the `h2` crate, which wants the poll-based traits. For TLS they are written here over the
//! same [`TlsConn`] (rustls driven straight on the socket with tokio's readiness, see
//! `tls_io.rs`) rather than by re-wrapping the socket in tokio-rustls: the handshake, its timing
//! and the resumption check stay in one place for both protocols, and the client Finished still
//! leaves with the first bytes written (here, the HTTP/2 preface).
//!
//! Writes are not vectored: the `h2` crate then gathers its frames into one buffer, and each
//! `poll_write` becomes as few TLS records as the buffer needs.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::tls_io::{TlsConn, TryRead, TryWrite};
use super::Stream;

impl TlsConn {
    /// Reads plaintext into `buf`, pulling records from the socket as needed.
    fn poll_recv(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let mut eof = false;
        loop {
            match self.conn.reader().read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && eof => {
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // A TCP close without close_notify ends the stream like a clean one: the HTTP/2
                // layer above knows whether its frames were complete.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Poll::Ready(Ok(()));
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
            match self.conn.read_tls(&mut TryRead(&self.tcp)) {
                Ok(0) => {
                    // rustls now knows of the EOF: the next read reports it.
                    self.process()?;
                    eof = true;
                }
                Ok(_) => self.process()?,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.tcp.poll_read_ready(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// Processes records read; a TLS error (alert, bad record) is `InvalidData`.
    fn process(&mut self) -> io::Result<()> {
        match self.conn.process_new_packets() {
            Ok(_) => Ok(()),
            Err(e) => {
                // Send the alert rustls queued for the server, best effort.
                let _ = self.conn.write_tls(&mut TryWrite(&self.tcp));
                Err(io::Error::new(io::ErrorKind::InvalidData, e))
            }
        }
    }

    /// Encrypts what fits of `data` and starts writing it out.
    fn poll_send(&mut self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            let n = self.conn.writer().write(data)?;
            if n > 0 || data.is_empty() {
                // Push the records out now; what the socket does not take waits for the flush.
                if let Poll::Ready(Err(e)) = self.poll_flush_tls(cx) {
                    return Poll::Ready(Err(e));
                }
                return Poll::Ready(Ok(n));
            }
            // rustls' buffer is full: make room first.
            ready!(self.poll_flush_tls(cx))?;
        }
    }

    /// Writes everything rustls has queued.
    fn poll_flush_tls(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut TryWrite(&self.tcp)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.tcp.poll_write_ready(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls) => tls.poll_recv(cx, buf),
            Stream::Ossl(tls) => tls.poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Stream::Tls(tls) => tls.poll_send(cx, buf),
            Stream::Ossl(tls) => tls.poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Stream::Tls(tls) => tls.poll_flush_tls(cx),
            Stream::Ossl(tls) => tls.poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls) => {
                tls.conn.send_close_notify();
                ready!(tls.poll_flush_tls(cx))?;
                Pin::new(&mut tls.tcp).poll_shutdown(cx)
            }
            Stream::Ossl(tls) => tls.poll_shutdown(cx),
        }
    }
}
