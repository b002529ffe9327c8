//! HTTP/1.1 message bodies carried on HTTP/2 streams, both ways, for either side of tern:
//! the client side (design note 0003) serves each stream as an HTTP/1.1 exchange, and the
//! server side (`exchange/h2`) sends the HTTP/1.1 exchange's request as a stream. In both, one
//! end of the adapter speaks HTTP/1.1 bytes to the session and the other speaks frames to the
//! `h2` crate.
//!
//! - [`DataSink`]: HTTP/1.1 body bytes (a length, or chunked with trailers) become DATA frames
//!   and a trailing HEADERS frame, sent as the peer's flow-control window opens.
//! - `http2::request_body::RequestSource`: DATA frames and trailers become HTTP/1.1 body bytes
//!   after a head (chunked when no length is known).
//!
//! Memory is bounded per stream: decoded data waits in one buffer of at most [`OUT_LIMIT`]
//! bytes; above it, writes are refused (`Pending`) until the window lets some out, so a peer
//! that does not read holds back this stream only, never another stream.

use std::io;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use h2::SendStream;
use http::{HeaderMap, HeaderName, HeaderValue};
use tern_h1::BodyReader;

/// Decoded data kept for the peer's window, at most.
pub(crate) const OUT_LIMIT: usize = 64 * 1024;

pub(crate) fn broken(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

pub(crate) fn reset(e: h2::Error) -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, e)
}

/// The body half of a stream tern sends: HTTP/1.1 body bytes in, DATA and trailers out.
pub(crate) struct DataSink {
    send: SendStream<Bytes>,
    body: BodyReader,
    /// Decoded data not yet sent (bounded by [`OUT_LIMIT`]).
    out: BytesMut,
    /// The body ended: END_STREAM goes with the last of `out` (or with the trailers).
    ended: bool,
    /// The chunked body's trailer fields, sent as a HEADERS frame that ends the stream.
    trailers: Option<HeaderMap>,
    /// END_STREAM went out.
    done: bool,
}

impl std::fmt::Debug for DataSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataSink")
            .field("pending", &self.out.len())
            .field("ended", &self.ended)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl DataSink {
    /// A sink for a body framed as `body` reads it, on a stream whose head was sent without
    /// END_STREAM.
    pub(crate) fn new(send: SendStream<Bytes>, body: BodyReader) -> Self {
        DataSink {
            send,
            body,
            out: BytesMut::new(),
            ended: false,
            trailers: None,
            done: false,
        }
    }

    /// Whether no data waits for the peer's window.
    pub(crate) fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// Whether END_STREAM went out (or the stream was reset).
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Ready when the peer reset the stream (its reason); registers for the wake-up else.
    pub(crate) fn poll_reset(&mut self, cx: &mut Context<'_>) -> Poll<h2::Reason> {
        self.send
            .poll_reset(cx)
            .map(|r| r.unwrap_or(h2::Reason::CANCEL))
    }

    /// Resets the stream: the peer must not take what it got for a whole message.
    pub(crate) fn cancel(&mut self, reason: h2::Reason) {
        self.send.send_reset(reason);
        self.done = true;
    }

    /// Ends a body that has no end of its own (a tunnel's bytes): END_STREAM goes after what is
    /// buffered, on the next flush.
    pub(crate) fn end(&mut self) {
        self.ended = true;
    }

    /// Takes body bytes; `Pending` while [`OUT_LIMIT`] bytes wait for the window.
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.done {
            return Poll::Ready(Err(broken("bytes after the end of the message")));
        }
        if self.out.len() >= OUT_LIMIT {
            ready!(self.poll_send(cx))?;
            if self.out.len() >= OUT_LIMIT {
                return Poll::Pending;
            }
        }
        Poll::Ready(self.take(buf))
    }

    /// Sends what is buffered, as far as the window allows; ready once all of it is out.
    pub(crate) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.out.is_empty() || (self.ended && !self.done) {
            ready!(self.poll_send(cx))?;
        }
        Poll::Ready(Ok(()))
    }

    /// Decodes body bytes into `out` (up to [`OUT_LIMIT`]); returns how many were consumed.
    pub(crate) fn take(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut used = 0;
        while used < buf.len() && !self.ended && self.out.len() < OUT_LIMIT {
            let d = self
                .body
                .decode(&buf[used..])
                .map_err(|_| broken("an invalid HTTP/1.1 body"))?;
            self.out.extend_from_slice(&buf[used..][d.data]);
            used += d.used;
            self.ended = d.done;
            if d.used == 0 {
                break;
            }
        }
        if self.ended && used < buf.len() {
            return Err(broken("bytes after the end of the message"));
        }
        if self.ended {
            self.trailers = trailers(self.body.last_chunk());
        }
        Ok(used)
    }

    /// Sends some of `out` (and END_STREAM after the last of it) as the window allows.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.done {
            return Poll::Ready(Ok(()));
        }
        if self.out.is_empty() {
            if self.ended {
                match self.trailers.take() {
                    Some(fields) => self.send.send_trailers(fields),
                    None => self.send.send_data(Bytes::new(), true),
                }
                .map_err(reset)?;
                self.done = true;
            }
            return Poll::Ready(Ok(()));
        }
        self.send.reserve_capacity(self.out.len());
        let granted = match ready!(self.send.poll_capacity(cx)) {
            Some(Ok(n)) => n,
            Some(Err(e)) => return Poll::Ready(Err(reset(e))),
            None => return Poll::Ready(Err(broken("the stream closed"))),
        };
        let chunk = if granted >= self.out.len() {
            // All of it (the usual case): the buffer itself becomes the frame's `Bytes`, where
            // `split_to` would first allocate a shared header for it.
            std::mem::take(&mut self.out).freeze()
        } else {
            self.out.split_to(granted).freeze()
        };
        let last = self.ended && self.out.is_empty() && self.trailers.is_none();
        self.send.send_data(chunk, last).map_err(reset)?;
        self.done = last;
        Poll::Ready(Ok(()))
    }
}

/// The trailer fields of a chunked body's end as tern wrote it (`0\r\n`, canonical
/// `name: value\r\n` lines, `\r\n`); `None` when there are none.
pub(crate) fn trailers(last_chunk: &[u8]) -> Option<HeaderMap> {
    let mut fields = HeaderMap::new();
    for line in last_chunk.split(|&b| b == b'\n').skip(1) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let value = line[colon + 1..]
            .strip_prefix(b" ")
            .unwrap_or(&line[colon + 1..]);
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(&line[..colon]),
            HeaderValue::from_bytes(value),
        ) {
            fields.append(name, value);
        }
    }
    (!fields.is_empty()).then_some(fields)
}
