//! An OpenSSL client connection over a tokio `TcpStream` (tokio-openssl), with the calls the
//! HTTP/1.1 and HTTP/2 clients make on a rustls one (`conn/tls_io.rs`, `conn/poll_io.rs`).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use openssl::ssl;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_openssl::SslStream;

use super::OsslSetup;
use crate::stats::TlsParams;

/// A TLS client connection made by OpenSSL.
#[derive(Debug)]
pub(crate) struct OsslStream(SslStream<TcpStream>);

impl OsslStream {
    /// Runs a full handshake on `tcp` (the caller bounds it in time). A refused handshake (an
    /// alert, no shared suite) is `InvalidData`.
    pub async fn connect(setup: &OsslSetup, tcp: TcpStream) -> io::Result<Self> {
        let invalid = |e: openssl::error::ErrorStack| io::Error::new(io::ErrorKind::InvalidData, e);
        let ssl = setup.ssl().map_err(invalid)?;
        let mut stream = SslStream::new(ssl, tcp).map_err(invalid)?;
        match Pin::new(&mut stream).connect().await {
            Ok(()) => Ok(Self(stream)),
            Err(e) => Err(e
                .into_io_error()
                .unwrap_or_else(|e| io::Error::new(io::ErrorKind::InvalidData, e))),
        }
    }

    /// What the handshake negotiated.
    pub fn params(&self) -> TlsParams {
        super::names::params(self.0.ssl())
    }

    /// Whether the handshake resumed a session (never, unless a server misbehaves: this engine
    /// offers none).
    pub fn resumed(&self) -> bool {
        self.0.ssl().session_reused()
    }

    /// The protocol the server chose by ALPN.
    pub fn alpn(&self) -> Option<&[u8]> {
        self.0.ssl().selected_alpn_protocol()
    }

    /// Encrypts and writes all of `data`.
    pub async fn send(&mut self, data: &[u8]) -> io::Result<()> {
        self.0.write_all(data).await?;
        self.0.flush().await
    }

    /// Reads plaintext into `buf`; `Ok(0)` after close_notify. A TCP close without close_notify
    /// is `UnexpectedEof`, as on the rustls engine.
    pub async fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).await.map_err(unexpected_eof)
    }

    /// Whether an idle connection can carry another request: a read finds nothing but TLS
    /// housekeeping (TLS 1.3 session tickets, which OpenSSL consumes) and no close. Polled once
    /// without a waker, as a pooling client checks.
    pub fn reusable(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let mut buf = ReadBuf::new(&mut byte);
        let mut cx = Context::from_waker(Waker::noop());
        matches!(
            Pin::new(&mut self.0).poll_read(&mut cx, &mut buf),
            Poll::Pending
        )
    }

    /// Reads plaintext; a TCP close without close_notify ends the stream like a clean one (the
    /// HTTP/2 layer knows whether its frames were complete), as on the rustls engine.
    pub fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.0).poll_read(cx, buf) {
            Poll::Ready(Err(e)) => match unexpected_eof(e) {
                e if e.kind() == io::ErrorKind::UnexpectedEof => Poll::Ready(Ok(())),
                e => Poll::Ready(Err(e)),
            },
            other => other,
        }
    }

    pub fn poll_write(&mut self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, data)
    }

    pub fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    pub fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// OpenSSL 3 reports a TCP close without close_notify as an SSL error ("unexpected eof while
/// reading"); the HTTP clients expect `UnexpectedEof` for it, as rustls says.
fn unexpected_eof(e: io::Error) -> io::Error {
    let eof = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ssl::Error>())
        .and_then(ssl::Error::ssl_error)
        .is_some_and(|stack| {
            stack
                .errors()
                .iter()
                .any(|err| err.reason().is_some_and(|r| r.contains("unexpected eof")))
        });
    match eof {
        true => io::ErrorKind::UnexpectedEof.into(),
        false => e,
    }
}
