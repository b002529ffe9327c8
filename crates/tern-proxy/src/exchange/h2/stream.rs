//! One request on an HTTP/2 server connection, as the byte stream the relay writes an
//! HTTP/1.1 request to and reads an HTTP/1.1 response from.
//!
//! Writing: the head is collected until it parses, sent as HEADERS (`request.rs`), and the body
//! that follows goes out as DATA and trailers through a [`DataSink`]. Reading: the response
//! HEADERS become an HTTP/1.1 head (`response.rs`), then the DATA frames the body, through the
//! same source the client side uses for request bodies. Flow control is the `h2` crate's: DATA
//! is released to the server's window only as the relay reads it, and the upload waits for
//! the server's window, so one slow stream holds back nothing else on the connection.
//!
//! Dropping the stream before both messages ended resets it (the `h2` crate sends
//! RST_STREAM(CANCEL)): that is how a client's cancellation reaches the server.
//!
//! An upgrade request (a WebSocket opening) goes as an extended CONNECT (`upgrade.rs`) once the
//! server's settings allow it; a 2xx answer reads as a `101`, and from then on the stream reads
//! and writes the tunnel's bytes as DATA, a shutdown sending END_STREAM.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{ready, Context, Poll, Waker};

use bytes::Bytes;
use h2::client::{ResponseFuture, SendRequest};
use tern_h1::{parse_request, BodyReader, Method, RequestHead, Status};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::request::{self, Target, HEAD_LIMITS};
use super::response;
use super::session::Session;
use super::upgrade::{Unsupported, Upgrade};
use crate::h2body::{broken, reset, DataSink};
use crate::http2::{BodyFraming, RequestSource};

/// Where the request is.
enum Up {
    /// Collecting the head (bytes kept only when a write did not hold all of it).
    Head(Vec<u8>),
    /// The head is sent; the body follows (boxed: most requests have none).
    Body(Box<DataSink>),
    /// END_STREAM went out.
    Done,
}

/// Where the response is.
enum Down {
    /// The request is not sent yet; the reader waiting for it.
    Unsent(Option<Waker>),
    /// Waiting for the response head.
    Head(ResponseFuture),
    /// The HTTP/1.1 bytes of the response.
    Body(RequestSource),
}

/// One request/response exchange on an HTTP/2 server connection.
pub(crate) struct UpstreamStream {
    send: SendRequest<Bytes>,
    target: Target,
    up: Up,
    down: Down,
    head: RequestHead,
    /// The request was HEAD: the response has no body.
    head_only: bool,
    /// The request is an upgrade sent as an extended CONNECT.
    upgrade: Option<Upgrade>,
    /// The server accepted the upgrade: the stream is a tunnel.
    tunnel: bool,
    /// Counts this stream on its connection while it lives.
    session: Rc<Session>,
}

impl std::fmt::Debug for UpstreamStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamStream")
            .field("addr", &self.target.addr)
            .finish_non_exhaustive()
    }
}

impl UpstreamStream {
    /// A stream on `session` (counted on it until dropped).
    pub(super) fn new(session: Rc<Session>, target: Target) -> Self {
        session.opened();
        UpstreamStream {
            send: session.sender(),
            target,
            up: Up::Head(Vec::new()),
            down: Down::Unsent(None),
            head: RequestHead::new(),
            head_only: false,
            upgrade: None,
            tunnel: false,
            session,
        }
    }

    /// Takes head bytes; once the head parses, sends it and takes what follows as body.
    /// Returns how many bytes of `buf` were used.
    fn poll_head(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        // A stream may be opened only when the connection can take one (and not after a
        // GOAWAY or an error: the request then fails before any of it was sent).
        ready!(self.send.poll_ready(cx)).map_err(reset)?;
        let Up::Head(kept) = &mut self.up else {
            return Poll::Ready(Ok(0));
        };
        let before = kept.len();
        let whole: &[u8] = if before == 0 {
            buf
        } else {
            kept.extend_from_slice(buf);
            kept
        };
        let len = match parse_request(whole, &HEAD_LIMITS, &mut self.head) {
            Ok(Status::Complete(len)) => len,
            Ok(Status::Partial) => {
                if before == 0 {
                    kept.extend_from_slice(buf);
                }
                return Poll::Ready(Ok(buf.len()));
            }
            Err(_) => {
                return Poll::Ready(Err(broken("the exchange wrote an invalid request head")))
            }
        };
        let upgrade = Upgrade::of(&self.head, whole);
        match poll_may_send(&self.session, cx, upgrade.is_some()) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => {
                // The same bytes come again with the next write.
                kept.truncate(before);
                return Poll::Pending;
            }
        }
        let mut request = request::translate(&self.head, whole, self.target)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        self.head_only = self.head.method() == Method::Head;
        let (body, reader) = match &upgrade {
            Some(upgrade) => {
                upgrade.apply(&mut request);
                // The tunnel's bytes, once the server accepted, with no end of their own.
                (true, BodyReader::until_close())
            }
            None => (
                request::has_body(&self.head),
                self.head.body_reader(&HEAD_LIMITS),
            ),
        };
        self.upgrade = upgrade;
        let (response, stream) = self.send.send_request(request, !body).map_err(reset)?;
        if let Down::Unsent(Some(waker)) = std::mem::replace(&mut self.down, Down::Head(response)) {
            waker.wake();
        }
        let head_used = len - before;
        self.up = if body {
            Up::Body(Box::new(DataSink::new(stream, reader)))
        } else {
            Up::Done
        };
        let rest = &buf[head_used.min(buf.len())..];
        let body_used = match &mut self.up {
            Up::Body(sink) if !rest.is_empty() => sink.take(rest)?,
            Up::Done if !rest.is_empty() => {
                return Poll::Ready(Err(broken("bytes after a request without a body")))
            }
            _ => 0,
        };
        Poll::Ready(Ok(head_used + body_used))
    }

    /// Waits for the response head and turns it into the HTTP/1.1 bytes to read.
    fn poll_response(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let response = match &mut self.down {
            Down::Unsent(waiting) => {
                *waiting = Some(cx.waker().clone());
                return Poll::Pending;
            }
            Down::Head(future) => ready!(Pin::new(future).poll(cx)).map_err(reset)?,
            Down::Body(_) => return Poll::Ready(Ok(())),
        };
        let (parts, body) = response.into_parts();
        let mut head = Vec::with_capacity(256);
        let framing = match &self.upgrade {
            Some(upgrade) if Upgrade::accepted(parts.status) => {
                upgrade.write_switch(&parts, &mut head);
                self.tunnel = true;
                // DATA as it comes, END_STREAM as the end of the tunnel's bytes.
                BodyFraming::Length
            }
            _ => response::write_head(&parts, body.is_end_stream(), self.head_only, &mut head),
        };
        self.down = Down::Body(RequestSource::new(head, framing, body));
        Poll::Ready(Ok(()))
    }
}

/// Whether a request may go on `session`: at once, unless it is a WebSocket opening and the
/// server's settings are not known yet; an error ([`Unsupported`]) once they are known and do
/// not allow extended CONNECT (see `upgrade.rs`).
fn poll_may_send(session: &Session, cx: &mut Context<'_>, websocket: bool) -> Poll<io::Result<()>> {
    if !websocket || session.extended_connect() {
        return Poll::Ready(Ok(()));
    }
    ready!(session.poll_settled(cx));
    if session.extended_connect() {
        Poll::Ready(Ok(()))
    } else {
        Poll::Ready(Err(io::Error::other(Unsupported)))
    }
}

impl Drop for UpstreamStream {
    fn drop(&mut self) {
        self.session.closed();
    }
}

impl AsyncRead for UpstreamStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_response(cx))?;
        match &mut this.down {
            Down::Body(source) => source.poll_read(cx, buf),
            _ => Poll::Pending,
        }
    }
}

impl AsyncWrite for UpstreamStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match &mut this.up {
            Up::Head(_) => this.poll_head(cx, buf),
            Up::Body(sink) => sink.poll_write(cx, buf),
            Up::Done => Poll::Ready(Err(broken("bytes after the end of the request"))),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().up {
            Up::Body(sink) => {
                ready!(sink.poll_flush(cx))?;
                Poll::Ready(Ok(()))
            }
            Up::Head(_) | Up::Done => Poll::Ready(Ok(())),
        }
    }

    /// Flushes; a tunnel's sending side also ends (END_STREAM after what is buffered). Once
    /// the server ended its side, a reset of the stream only says it takes nothing more (HAProxy
    /// sends END_STREAM then RST_STREAM when its server closed; RFC 9113 §8.1 allows NO_ERROR
    /// for the same): if nothing but END_STREAM was left to send, nothing was lost and the
    /// tunnel's end is orderly.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let mut only_the_end = false;
        if let (true, Up::Body(sink)) = (this.tunnel, &mut this.up) {
            only_the_end = sink.is_empty();
            sink.end();
        }
        let server_ended = matches!(&this.down, Down::Body(source) if source.is_done());
        match ready!(Pin::new(&mut *this).poll_flush(cx)) {
            Err(_) if only_the_end && server_ended => Poll::Ready(Ok(())),
            done => Poll::Ready(done),
        }
    }
}
