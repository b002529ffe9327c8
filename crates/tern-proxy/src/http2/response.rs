//! The HTTP/1.1 response the session writes for a stream, turned into HTTP/2 frames.
//!
//! The session writes a response head (its own answer, or the server's rewritten) and the body
//! in HTTP/1.1 framing (`content-length`, or chunked: for an HTTP/1.1 request the relay never
//! delimits a body by closing). This side parses the head once more with `tern-h1`, sends it as
//! HEADERS without the connection-specific fields (RFC 9113 §8.2.2), and sends the body's data
//! as DATA frames as the client's flow-control window opens.
//!
//! The head is parsed where the session wrote it (one write holds it, usually with the body),
//! into one parsed head per worker thread, and the HEADERS values share one copy of the head:
//! copying the head into a buffer of its own, a parsed head per stream (a slot per field the
//! limits allow, kilobytes) and a `Bytes` per field value were three allocations and a copy or
//! more per stream.
//!
//! Memory is bounded per stream: decoded data waits in one buffer of at most [`OUT_LIMIT`](crate::h2body::OUT_LIMIT)
//! bytes; above it, writes are refused (`Pending`) until the window lets some out, so a client
//! that does not read holds back this stream's server only, never another stream.
//! Interim responses (`100 Continue`, which the exchange writes for `Expect`) are dropped: the
//! HTTP/2 request was received without waiting for them.
//!
//! On a WebSocket stream (RFC 8441, `connect.rs`) the session's `101` is where the stream
//! switches: it goes out as a `200` without `sec-websocket-accept`, and every byte the session
//! writes after it is tunnel data, passed as DATA until the session shuts the stream down
//! (END_STREAM) or gives up on it (RST_STREAM with CANCEL).

use std::cell::RefCell;
use std::io;
use std::task::{Context, Poll};

use bytes::Bytes;
use h2::server::SendResponse;
use http::header::SEC_WEBSOCKET_ACCEPT;
use http::{HeaderName, HeaderValue, Response, StatusCode};
use tern_h1::{parse_response, BodyReader, Limits, Method, ResponseBody, ResponseHead, Status};

use crate::exchange::upstream::RESPONSE_LIMITS;
use crate::h2body::{broken, reset, DataSink};

/// What the session's response head may hold: a server's head already within
/// [`RESPONSE_LIMITS`], plus the fields tern adds (cookie persistence, header rules), so
/// twice those bounds; parsing the head once more must never refuse what the relay accepted.
const SINK_LIMITS: Limits = Limits {
    max_head_size: 2 * RESPONSE_LIMITS.max_head_size,
    max_headers: 2 * RESPONSE_LIMITS.max_headers,
    ..RESPONSE_LIMITS
};

/// Where the response is. Most responses reach `Body`: boxing it would cost an allocation per
/// stream for nothing.
#[allow(clippy::large_enum_variant)]
enum State {
    /// Collecting the head; the stream has not answered yet.
    Head(SendResponse<Bytes>),
    /// The head is sent; the body goes out as DATA and trailers.
    Body(DataSink),
    /// The head ended the stream, or the stream was reset.
    Done,
}

/// The response side of one stream.
pub(crate) struct ResponseSink {
    state: State,
    /// The bytes of a head not yet whole (most heads come in one write, never kept).
    head_buf: Vec<u8>,
    method: Method,
    /// A WebSocket stream: a `101` switches it to a tunnel.
    websocket: bool,
    /// The `101` went out (as a `200`): the body is the tunnel's bytes.
    switched: bool,
}

impl std::fmt::Debug for ResponseSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseSink")
            .field("done", &self.is_done())
            .field("switched", &self.switched)
            .finish_non_exhaustive()
    }
}

impl ResponseSink {
    /// The response side of a stream; `websocket`: an extended CONNECT's (RFC 8441).
    pub(crate) fn new(respond: SendResponse<Bytes>, method: Method, websocket: bool) -> Self {
        ResponseSink {
            state: State::Head(respond),
            head_buf: Vec::new(),
            method,
            websocket,
            switched: false,
        }
    }

    /// Whether the stream switched to a tunnel (the `101` went out as a `200`).
    pub(crate) fn is_switched(&self) -> bool {
        self.switched
    }

    /// The tunnel's sending side ends: END_STREAM goes after what is buffered (on the next
    /// flush). Nothing changes for a response that is not a tunnel.
    pub(crate) fn end_tunnel(&mut self) {
        if let (true, State::Body(sink)) = (self.switched, &mut self.state) {
            sink.end();
        }
    }

    /// Whether the whole response went out (END_STREAM sent), or the stream was reset.
    pub(crate) fn is_done(&self) -> bool {
        match &self.state {
            State::Head(_) => false,
            State::Body(sink) => sink.is_done(),
            State::Done => true,
        }
    }

    /// Ready when the client reset the stream (its reason); registers for the wake-up else.
    pub(crate) fn poll_reset(&mut self, cx: &mut Context<'_>) -> Poll<h2::Reason> {
        match &mut self.state {
            State::Head(respond) => respond
                .poll_reset(cx)
                .map(|r| r.unwrap_or(h2::Reason::CANCEL)),
            State::Body(sink) if !sink.is_done() => sink.poll_reset(cx),
            State::Body(_) | State::Done => Poll::Ready(h2::Reason::NO_ERROR),
        }
    }

    /// Takes bytes of the HTTP/1.1 response.
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.state {
            State::Head(_) => self.take_head(buf).map(|()| buf.len()).into(),
            State::Body(sink) => sink.poll_write(cx, buf),
            State::Done => Poll::Ready(Err(broken("bytes after the end of the response"))),
        }
    }

    /// Sends what is buffered, as far as the window allows; ready once all of it is out.
    pub(crate) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.state {
            State::Body(sink) => sink.poll_flush(cx),
            State::Head(_) | State::Done => Poll::Ready(Ok(())),
        }
    }

    /// The session gave up on the response (a fault after the head, or before any): the client
    /// must not take what it got for a whole response. A tunnel's failure is a CANCEL, as
    /// RFC 8441 §5 maps a TCP reset.
    pub(crate) fn cancel(&mut self) {
        let reason = if self.switched {
            h2::Reason::CANCEL
        } else {
            h2::Reason::INTERNAL_ERROR
        };
        match std::mem::replace(&mut self.state, State::Done) {
            State::Head(mut respond) => respond.send_reset(reason),
            State::Body(mut sink) if !sink.is_done() => sink.cancel(reason),
            State::Body(_) | State::Done => {}
        }
    }

    /// Takes head bytes; once the head parses, sends it and takes what followed as body. The
    /// usual write holds the whole head (and often the body): it is parsed where it lies, and
    /// only the bytes of an unfinished head are kept.
    fn take_head(&mut self, buf: &[u8]) -> io::Result<()> {
        if self.head_buf.is_empty() {
            return self.parse_head(buf);
        }
        let mut joined = std::mem::take(&mut self.head_buf);
        joined.extend_from_slice(buf);
        self.parse_head(&joined)
    }

    /// Parses the head at the start of `bytes` (after interim responses, dropped) and answers
    /// it, or keeps `bytes` until the head is whole. The parsed head lives in the worker's
    /// [`HEAD`], reused from stream to stream.
    fn parse_head(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut at = 0;
        HEAD.with_borrow_mut(|head| loop {
            let rest = &bytes[at..];
            let len = match parse_response(rest, &SINK_LIMITS, head, self.method) {
                Ok(Status::Partial) => {
                    self.head_buf.extend_from_slice(rest);
                    return Ok(());
                }
                Ok(Status::Complete(len)) => len,
                Err(_) => return Err(broken("the session wrote an invalid response head")),
            };
            let (text, body) = rest.split_at(len);
            if self.websocket && head.status() == 101 {
                return self.switch(head, text, body);
            }
            if head.is_informational() {
                at += len;
                continue;
            }
            return self.answer(head, text, body);
        })
    }

    /// Sends the final head `head` (parsed from `text`) and takes `body`, what followed it.
    fn answer(&mut self, head: &ResponseHead, text: &[u8], body: &[u8]) -> io::Result<()> {
        let response = translate(head, text, head.status(), |_| false)?;
        let reader = match head.body() {
            ResponseBody::None => BodyReader::none(),
            ResponseBody::Length(n) => BodyReader::length(n),
            ResponseBody::Chunked => BodyReader::chunked(&SINK_LIMITS),
            ResponseBody::UntilClose | ResponseBody::Tunnel => {
                return Err(broken("a response body delimited by close on a stream"))
            }
        };
        let State::Head(mut respond) = std::mem::replace(&mut self.state, State::Done) else {
            unreachable!("answer runs in the Head state only")
        };
        let end = reader.is_done();
        let send = respond.send_response(response, end).map_err(reset)?;
        if !end {
            self.state = State::Body(DataSink::new(send, reader));
        }
        self.take_rest(body)
    }

    /// The `101` that accepted the WebSocket: sends it as a `200` without
    /// `sec-websocket-accept` (RFC 8441 §5; the relay checked it), and takes `body`, what
    /// followed it, as the first tunnel bytes.
    fn switch(&mut self, head: &ResponseHead, text: &[u8], body: &[u8]) -> io::Result<()> {
        let response = translate(head, text, 200, |name| name == SEC_WEBSOCKET_ACCEPT)?;
        let State::Head(mut respond) = std::mem::replace(&mut self.state, State::Done) else {
            unreachable!("switch runs in the Head state only")
        };
        let send = respond.send_response(response, false).map_err(reset)?;
        self.state = State::Body(DataSink::new(send, BodyReader::until_close()));
        self.switched = true;
        self.take_rest(body)
    }

    /// Takes `rest`, the bytes after the head, as the first body bytes.
    fn take_rest(&mut self, rest: &[u8]) -> io::Result<()> {
        match &mut self.state {
            State::Body(sink) if !rest.is_empty() => {
                if sink.take(rest)? < rest.len() {
                    return Err(broken(
                        "the session wrote more than a response buffer at once",
                    ));
                }
                Ok(())
            }
            _ if !rest.is_empty() => Err(broken("bytes after the end of the response")),
            _ => Ok(()),
        }
    }
}

thread_local! {
    /// The parsed response head of the stream being answered: parsing reserves a slot per
    /// field the limits allow (kilobytes), so one head per worker thread is reused rather than
    /// one allocated per stream. Only borrowed while a head is parsed and sent (no `await`).
    static HEAD: RefCell<ResponseHead> = RefCell::new(ResponseHead::new());
}

/// The head `head`, parsed from `text`, as an HTTP/2 response with `status`: its end-to-end
/// fields but those `skip` names. The values share one copy of the head (one allocation, not
/// one per field).
fn translate(
    head: &ResponseHead,
    text: &[u8],
    status: u16,
    skip: impl Fn(&HeaderName) -> bool,
) -> io::Result<Response<()>> {
    let status = StatusCode::from_u16(status)
        .map_err(|_| broken("a response status HTTP/2 cannot carry"))?;
    let mut response = Response::new(());
    *response.status_mut() = status;
    let shared = Bytes::copy_from_slice(text);
    let headers = response.headers_mut();
    for field in head.fields() {
        if field.is_hop_by_hop() {
            continue;
        }
        let name = HeaderName::from_bytes(field.name(text))
            .map_err(|_| broken("a response field name HTTP/2 cannot carry"))?;
        if skip(&name) {
            continue;
        }
        let value = HeaderValue::from_maybe_shared(shared.slice(field.value_span().range()))
            .map_err(|_| broken("a response field value HTTP/2 cannot carry"))?;
        headers.append(name, value);
    }
    Ok(response)
}
