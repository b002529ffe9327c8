//! The request side of one stream, as the HTTP/1.1 bytes the session reads: the translated head
//! (`request.rs`), then the DATA frames, chunked when no `content-length` was given, with the
//! trailers as the trailer section. A WebSocket stream (RFC 8441) has no body: after the head
//! its DATA is held back (in the stream window) until the server switched protocols, then read
//! as the tunnel's bytes, END_STREAM as their end.
//!
//! Flow control: DATA is released to the client's windows (stream and connection) only as the
//! session reads it, so a server that takes an upload slowly holds back this stream alone and
//! the data buffered for it stays within the stream window tern announced.

use std::io;
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes};
use h2::RecvStream;
use tokio::io::ReadBuf;

use super::request::BodyFraming;

/// The chunk line after each chunk's data.
const CRLF: &[u8] = b"\r\n";

/// The request bytes of one stream.
pub(crate) struct RequestSource {
    /// The head, then chunk-size lines and the last chunk with its trailers.
    framing: Vec<u8>,
    framing_at: usize,
    /// Data of the DATA frame being read, after `framing`.
    data: Bytes,
    /// What follows `data` (the CRLF that ends a chunk).
    suffix: &'static [u8],
    body: RecvStream,
    chunked: bool,
    /// No more DATA (END_STREAM seen, or the request had no body).
    body_ended: bool,
    /// Every byte of the request was read.
    done: bool,
    /// A WebSocket stream whose tunnel is not open yet: nothing is read after the head.
    held: bool,
}

impl std::fmt::Debug for RequestSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestSource")
            .field("chunked", &self.chunked)
            .field("done", &self.done)
            .field("held", &self.held)
            .finish_non_exhaustive()
    }
}

impl RequestSource {
    pub(crate) fn new(head: Vec<u8>, framing: BodyFraming, body: RecvStream) -> Self {
        RequestSource {
            framing: head,
            framing_at: 0,
            data: Bytes::new(),
            suffix: &[],
            body,
            chunked: framing == BodyFraming::Chunked,
            body_ended: framing == BodyFraming::Empty,
            done: false,
            held: matches!(framing, BodyFraming::Tunnel(_)),
        }
    }

    /// The server switched protocols: the stream's DATA is the tunnel's from now on.
    pub(crate) fn open_tunnel(&mut self) {
        self.held = false;
    }

    /// Whether every byte of the request was read.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Fills `buf` with the next request bytes; fills nothing once the request is done, or
    /// while a tunnel is held.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            if self.copy_pending(buf) || self.done {
                return Poll::Ready(Ok(()));
            }
            if self.body_ended {
                self.done = true;
                return Poll::Ready(Ok(()));
            }
            if self.held {
                return Poll::Ready(Ok(()));
            }
            ready!(self.poll_next(cx))?;
        }
    }

    /// Copies what is pending (framing, data, suffix, in that order) into `buf`; whether
    /// anything was copied.
    fn copy_pending(&mut self, buf: &mut ReadBuf<'_>) -> bool {
        let before = buf.remaining();
        if self.framing_at < self.framing.len() {
            let n = (self.framing.len() - self.framing_at).min(buf.remaining());
            buf.put_slice(&self.framing[self.framing_at..self.framing_at + n]);
            self.framing_at += n;
        }
        if self.framing_at == self.framing.len() && !self.data.is_empty() {
            let n = self.data.len().min(buf.remaining());
            buf.put_slice(&self.data[..n]);
            self.data.advance(n);
            // The session has the bytes: the client may send as many more.
            let _ = self.body.flow_control().release_capacity(n);
        }
        if self.framing_at == self.framing.len() && self.data.is_empty() && !self.suffix.is_empty()
        {
            let n = self.suffix.len().min(buf.remaining());
            buf.put_slice(&self.suffix[..n]);
            self.suffix = &self.suffix[n..];
        }
        buf.remaining() != before
    }

    /// Takes the next DATA frame (or the end of the body) and queues its bytes.
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.framing.clear();
        self.framing_at = 0;
        match ready!(self.body.poll_data(cx)) {
            Some(Ok(data)) if data.is_empty() => {}
            Some(Ok(data)) => {
                if self.chunked {
                    let size = tern_h1::ChunkHeader::new(data.len());
                    self.framing.extend_from_slice(size.as_bytes());
                    self.suffix = CRLF;
                }
                self.data = data;
            }
            Some(Err(e)) => {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::ConnectionReset, e)))
            }
            None => {
                if self.chunked {
                    let trailers = ready!(self.body.poll_trailers(cx))
                        .map_err(|e| io::Error::new(io::ErrorKind::ConnectionReset, e))?;
                    self.framing.extend_from_slice(b"0\r\n");
                    for (name, value) in trailers.iter().flatten() {
                        self.framing.extend_from_slice(name.as_str().as_bytes());
                        self.framing.extend_from_slice(b": ");
                        self.framing.extend_from_slice(value.as_bytes());
                        self.framing.extend_from_slice(CRLF);
                    }
                    self.framing.extend_from_slice(CRLF);
                }
                self.body_ended = true;
            }
        }
        Poll::Ready(Ok(()))
    }
}
