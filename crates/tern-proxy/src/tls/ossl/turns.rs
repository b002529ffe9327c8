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
//! Two more duties, both for the code around the handshake rather than OpenSSL: under a
//! handshake rate cap the ClientHello was read before OpenSSL started (`tls/admission.rs`), and
//! is handed to it first, as the bytes of the socket's first reads; and with handshake offload
//! the socket is taken off the offload thread's event loop and put on the worker's
//! ([`Turns::park`], [`Turns::unpark`]) while OpenSSL keeps its session around this value.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A client socket, pausing after the handshake's writes while `handshaking`.
#[derive(Debug)]
pub(super) struct Turns {
    /// `None` only while parked: between [`Turns::park`] and [`Turns::unpark`], when the
    /// stream is on its way between threads and nothing reads or writes it.
    tcp: Option<TcpStream>,
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
            tcp: Some(tcp),
            received,
            handshaking: true,
            wrote: false,
        }
    }

    pub(super) fn tcp(&self) -> &TcpStream {
        // Invariant: only `park` empties it, and a parked stream is `OsslDetached`, whose
        // `attach` unparks it before anything can read the socket.
        self.tcp
            .as_ref()
            .expect("the socket of a stream in use is never parked")
    }

    /// Takes the socket off this thread's event loop (see the module docs).
    pub(super) fn park(&mut self) -> io::Result<std::net::TcpStream> {
        match self.tcp.take() {
            Some(tcp) => tcp.into_std(),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    /// Puts the socket back, registered with this thread's event loop.
    pub(super) fn unpark(&mut self, tcp: std::net::TcpStream) -> io::Result<()> {
        self.tcp = Some(TcpStream::from_std(tcp)?);
        Ok(())
    }

    fn socket(&mut self) -> io::Result<&mut TcpStream> {
        self.tcp
            .as_mut()
            .ok_or_else(|| io::ErrorKind::NotConnected.into())
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

    /// The handshake is over: no more pauses.
    pub(super) fn established(&mut self) {
        self.handshaking = false;
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
        Pin::new(self.socket()?).poll_read(cx, buf)
    }
}

impl AsyncWrite for Turns {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(self.socket()?).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.wrote |= n > 0;
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.socket()?).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.socket()?).poll_shutdown(cx)
    }
}
