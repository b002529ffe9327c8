//! Telling HTTP/2 with prior knowledge (h2c) from HTTP/1.1 on a plain connection.
//!
//! Why detection and no flag: an HTTP/2 client with prior knowledge (`curl
//! --http2-prior-knowledge`, `h2load http://…`, gRPC without TLS) opens with the fixed client
//! preface `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n` (RFC 9113 §3.4), which no HTTP/1.1 request can
//! start with (`HTTP/2.0` is not an HTTP/1.1 version). So a plain listener serves both, as
//! nginx (`http2 on`), Go's h2c handler and hyper-util's `auto` server do, and a test needs no
//! second port or option.
//!
//! Why read instead of peek: peeking again after a partial preface would spin on a socket that
//! stays readable. The first bytes are read (at most 24, waiting only while they still match
//! the preface), then replayed to whichever server takes the connection by [`Rewind`].

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// The HTTP/2 client connection preface (RFC 9113 §3.4).
pub(crate) const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Reads the first bytes of `stream` until they either differ from the preface or hold all of
/// it (or the peer closes); returns whether they are the preface, and the bytes read.
pub(crate) async fn read<S: AsyncRead + Unpin>(stream: &mut S) -> io::Result<(bool, Vec<u8>)> {
    let mut buf = [0u8; PREFACE.len()];
    let mut n = 0;
    while n < buf.len() {
        let read = stream.read(&mut buf[n..]).await?;
        if read == 0 {
            break;
        }
        n += read;
        if buf[..n] != PREFACE[..n] {
            break;
        }
    }
    Ok((n == PREFACE.len() && buf == *PREFACE, buf[..n].to_vec()))
}

/// A stream whose first reads return `prefix` (bytes already read from it), then the stream's.
#[derive(Debug)]
pub(crate) struct Rewind<S> {
    prefix: Vec<u8>,
    /// Bytes of `prefix` already returned.
    at: usize,
    inner: S,
}

impl<S> Rewind<S> {
    pub(crate) fn new(prefix: Vec<u8>, inner: S) -> Self {
        Self {
            prefix,
            at: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let left = &this.prefix[this.at..];
        if left.is_empty() {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        let n = left.len().min(buf.remaining());
        buf.put_slice(&left[..n]);
        this.at += n;
        if this.at == this.prefix.len() {
            this.prefix = Vec::new();
            this.at = 0;
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn sniff(input: &[u8]) -> (bool, Vec<u8>, Vec<u8>) {
        let mut stream = Rewind::new(Vec::new(), input);
        let (h2, first) = read(&mut stream).await.unwrap();
        let mut all = Rewind::new(first.clone(), stream);
        let mut replayed = Vec::new();
        all.read_to_end(&mut replayed).await.unwrap();
        (h2, first, replayed)
    }

    #[tokio::test]
    async fn the_preface_is_recognised_and_replayed() {
        let input = [PREFACE.as_slice(), b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"].concat();
        let (h2, first, replayed) = sniff(&input).await;
        assert!(h2);
        assert_eq!(first, PREFACE);
        assert_eq!(replayed, input);
    }

    #[tokio::test]
    async fn http1_stops_at_the_first_differing_byte_and_is_replayed() {
        let input = b"PUT / HTTP/1.1\r\nHost: a\r\n\r\n";
        let (h2, first, replayed) = sniff(input).await;
        assert!(!h2);
        assert!(first.len() <= PREFACE.len() && !first.is_empty());
        assert_eq!(replayed, input);
    }

    #[tokio::test]
    async fn a_short_connection_is_not_http2() {
        let (h2, first, replayed) = sniff(b"PRI * HTTP/2.0").await;
        assert!(!h2);
        assert_eq!(
            (first.as_slice(), replayed.as_slice()),
            (&b"PRI * HTTP/2.0"[..], &b"PRI * HTTP/2.0"[..])
        );
    }
}
