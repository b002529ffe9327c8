//! The socket under an OpenSSL stream, made to pause between the server's flight and the
//! client's answer while the handshake runs.
//!
//! Why: the group of a TLS 1.2 key exchange can only be read from the server's ephemeral key
//! (`SSL_get_tmp_key`; the bindings expose nothing else), and OpenSSL frees that key as soon
//! as it processes the client's share. The handshake future is polled again only when OpenSSL
//! would block, which it normally does after writing its flight (the client has not answered
//! yet); but a worker descheduled between that write and the next read finds the answer
//! already there, runs the handshake to its end in one poll, and the key is gone (seen on a
//! loaded test machine). So after each write of the handshake the next read reports "would
//! block" once, with the task woken at once: the handshake yields, `engine.rs` reads the key,
//! and the next poll goes on. Off once the handshake is done: established connections read
//! and write the socket directly.
//!
//! Under a handshake rate cap the ClientHello was read before OpenSSL started
//! (`tls/admission.rs`): it is handed to OpenSSL first, as the bytes of the socket's first reads.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A client socket, pausing after the handshake's writes while `handshaking`.
#[derive(Debug)]
pub(super) struct Turns {
    tcp: TcpStream,
    /// Bytes read from the socket before the handshake (the ClientHello), read first.
    received: Vec<u8>,
    handshaking: bool,
    /// Bytes were written since the last read.
    wrote: bool,
}

impl Turns {
    /// `received`: what was read from `tcp` before the handshake started.
    pub(super) fn new(tcp: TcpStream, received: Vec<u8>) -> Self {
        Self {
            tcp,
            received,
            handshaking: true,
            wrote: false,
        }
    }

    pub(super) fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// The handshake is over: no more pauses.
    pub(super) fn established(&mut self) {
        self.handshaking = false;
    }

    /// Serves a read from the bytes received before the handshake; `false` when none are left.
    fn read_received(&mut self, buf: &mut ReadBuf<'_>) -> bool {
        if self.received.is_empty() {
            return false;
        }
        let n = buf.remaining().min(self.received.len());
        buf.put_slice(&self.received[..n]);
        self.received.drain(..n);
        if self.received.is_empty() {
            // Not kept for the connection's life.
            self.received = Vec::new();
        }
        true
    }
}

impl AsyncRead for Turns {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.handshaking && self.wrote {
            self.wrote = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if self.read_received(buf) {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Turns {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.tcp).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.wrote |= n > 0;
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}
