//! The HTTP/1.1 response the session writes for a stream, turned into HTTP/2 frames.
//!
//! The session writes a response head (its own answer, or the server's rewritten) and the body
//! in HTTP/1.1 framing (`content-length`, or chunked: for an HTTP/1.1 request the relay never
//! delimits a body by closing). This side parses the head once more with `tern-h1`, sends it as
//! HEADERS without the connection-specific fields (RFC 9113 §8.2.2), and sends the body's data
//! as DATA frames as the client's flow-control window opens.
//!
//! Memory is bounded per stream: decoded data waits in one buffer of at most [`OUT_LIMIT`]
//! bytes; above it, writes are refused (`Pending`) until the window lets some out, so a client
//! that does not read holds back this stream's server only, never another stream.
//! Interim responses (`100 Continue`, which the exchange writes for `Expect`) are dropped: the
//! HTTP/2 request was received without waiting for them.
//!
//! On a WebSocket stream (RFC 8441, `connect.rs`) the session's `101` is where the stream
//! switches: it goes out as a `200` without `sec-websocket-accept`, and every byte the session
//! writes after it is tunnel data, passed as DATA until the session shuts the stream down
//! (END_STREAM) or gives up on it (RST_STREAM with CANCEL).

use std::io;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use h2::server::SendResponse;
use h2::SendStream;
use http::header::SEC_WEBSOCKET_ACCEPT;
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode};
use tern_h1::{parse_response, BodyReader, Limits, Method, ResponseBody, ResponseHead, Status};

use crate::exchange::upstream::RESPONSE_LIMITS;

/// Decoded response data kept for the client's window, at most.
pub(crate) const OUT_LIMIT: usize = 64 * 1024;

/// What the session's response head may hold: a server's head already within
/// [`RESPONSE_LIMITS`], plus the fields tern adds (cookie persistence, header rules), so
/// twice those bounds; parsing the head once more must never refuse what the relay accepted.
const SINK_LIMITS: Limits = Limits {
    max_head_size: 2 * RESPONSE_LIMITS.max_head_size,
    max_headers: 2 * RESPONSE_LIMITS.max_headers,
    ..RESPONSE_LIMITS
};

/// Where the response is.
enum State {
    /// Collecting the head; the stream has not answered yet.
    Head(SendResponse<Bytes>),
    /// The head is sent; data follows until `body` says it ended.
    Body(SendStream<Bytes>),
    /// The last frame went out (or the stream was reset).
    Done,
}

/// The response side of one stream.
pub(crate) struct ResponseSink {
    state: State,
    /// Head bytes collected until they parse.
    head_buf: Vec<u8>,
    head: ResponseHead,
    method: Method,
    body: BodyReader,
    /// Decoded data not yet sent (bounded by [`OUT_LIMIT`]).
    out: BytesMut,
    /// The body ended: END_STREAM goes with the last of `out` (or with the trailers).
    ended: bool,
    /// The chunked body's trailer fields, sent as a HEADERS frame that ends the stream.
    trailers: Option<HeaderMap>,
    /// A WebSocket stream: a `101` switches it to a tunnel.
    websocket: bool,
    /// The `101` went out (as a `200`): the body is the tunnel's bytes.
    switched: bool,
}

impl std::fmt::Debug for ResponseSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseSink")
            .field("pending", &self.out.len())
            .field("ended", &self.ended)
            .field("switched", &self.switched)
            .finish_non_exhaustive()
    }
}

fn broken(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

fn reset(e: h2::Error) -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, e)
}

impl ResponseSink {
    /// The response side of a stream; `websocket`: an extended CONNECT's (RFC 8441).
    pub(crate) fn new(respond: SendResponse<Bytes>, method: Method, websocket: bool) -> Self {
        ResponseSink {
            state: State::Head(respond),
            head_buf: Vec::new(),
            head: ResponseHead::new(),
            method,
            body: BodyReader::none(),
            out: BytesMut::new(),
            ended: false,
            trailers: None,
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
        if self.switched {
            self.ended = true;
        }
    }

    /// Whether the whole response went out (END_STREAM sent).
    pub(crate) fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    /// Ready when the client reset the stream (its reason); registers for the wake-up else.
    pub(crate) fn poll_reset(&mut self, cx: &mut Context<'_>) -> Poll<h2::Reason> {
        let polled = match &mut self.state {
            State::Head(respond) => respond.poll_reset(cx),
            State::Body(send) => send.poll_reset(cx),
            State::Done => return Poll::Ready(h2::Reason::NO_ERROR),
        };
        polled.map(|r| r.unwrap_or(h2::Reason::CANCEL))
    }

    /// Takes bytes of the HTTP/1.1 response.
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.state {
            State::Head(_) => self.take_head(buf).map(|()| buf.len()).into(),
            State::Body(_) => {
                if self.out.len() >= OUT_LIMIT {
                    std::task::ready!(self.poll_send(cx))?;
                    if self.out.len() >= OUT_LIMIT {
                        return Poll::Pending;
                    }
                }
                Poll::Ready(self.take_body(buf))
            }
            State::Done => Poll::Ready(Err(broken("bytes after the end of the response"))),
        }
    }

    /// Sends what is buffered, as far as the window allows; ready once all of it is out.
    pub(crate) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.out.is_empty() || (self.ended && !self.is_done()) {
            std::task::ready!(self.poll_send(cx))?;
        }
        Poll::Ready(Ok(()))
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
            State::Body(mut send) => send.send_reset(reason),
            State::Done => {}
        }
    }

    /// Collects head bytes; once they parse, sends the head and takes what followed as body.
    fn take_head(&mut self, buf: &[u8]) -> io::Result<()> {
        self.head_buf.extend_from_slice(buf);
        loop {
            let len =
                match parse_response(&self.head_buf, &SINK_LIMITS, &mut self.head, self.method) {
                    Ok(Status::Partial) => return Ok(()),
                    Ok(Status::Complete(len)) => len,
                    Err(_) => return Err(broken("the session wrote an invalid response head")),
                };
            if self.websocket && self.head.status() == 101 {
                return self.switch(len);
            }
            if self.head.is_informational() {
                self.head_buf.drain(..len);
                continue;
            }
            let response = self.translate(self.head.status(), |_| false)?;
            self.body = match self.head.body() {
                ResponseBody::None => BodyReader::none(),
                ResponseBody::Length(n) => BodyReader::length(n),
                ResponseBody::Chunked => BodyReader::chunked(&SINK_LIMITS),
                ResponseBody::UntilClose | ResponseBody::Tunnel => {
                    return Err(broken("a response body delimited by close on a stream"))
                }
            };
            let State::Head(mut respond) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!("take_head runs in the Head state only")
            };
            let end = self.body.is_done();
            let send = respond.send_response(response, end).map_err(reset)?;
            self.ended = end;
            if !end {
                self.state = State::Body(send);
            }
            let rest = self.head_buf.split_off(len);
            self.head_buf = Vec::new();
            if !rest.is_empty() {
                self.take_body(&rest)?;
            }
            return Ok(());
        }
    }

    /// The `101` of `len` bytes that accepted the WebSocket: sends it as a `200` without
    /// `sec-websocket-accept` (RFC 8441 §5; the relay checked it), and takes what followed as
    /// the first tunnel bytes.
    fn switch(&mut self, len: usize) -> io::Result<()> {
        let response = self.translate(200, |name| name == SEC_WEBSOCKET_ACCEPT)?;
        let State::Head(mut respond) = std::mem::replace(&mut self.state, State::Done) else {
            unreachable!("switch runs in the Head state only")
        };
        let send = respond.send_response(response, false).map_err(reset)?;
        self.state = State::Body(send);
        self.body = BodyReader::until_close();
        self.switched = true;
        let rest = self.head_buf.split_off(len);
        self.head_buf = Vec::new();
        if !rest.is_empty() {
            self.take_body(&rest)?;
        }
        Ok(())
    }

    /// The parsed head as an HTTP/2 response with `status`: its end-to-end fields but those
    /// `skip` names.
    fn translate(
        &self,
        status: u16,
        skip: impl Fn(&HeaderName) -> bool,
    ) -> io::Result<Response<()>> {
        let status = StatusCode::from_u16(status)
            .map_err(|_| broken("a response status HTTP/2 cannot carry"))?;
        let mut response = Response::new(());
        *response.status_mut() = status;
        let headers = response.headers_mut();
        for field in self.head.fields() {
            if field.is_hop_by_hop() {
                continue;
            }
            let name = HeaderName::from_bytes(field.name(&self.head_buf))
                .map_err(|_| broken("a response field name HTTP/2 cannot carry"))?;
            if skip(&name) {
                continue;
            }
            let value = HeaderValue::from_bytes(field.value(&self.head_buf))
                .map_err(|_| broken("a response field value HTTP/2 cannot carry"))?;
            headers.append(name, value);
        }
        Ok(response)
    }

    /// Decodes body bytes into `out` (up to [`OUT_LIMIT`]); returns how many were consumed.
    fn take_body(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut used = 0;
        while used < buf.len() && !self.ended && self.out.len() < OUT_LIMIT {
            let d = self
                .body
                .decode(&buf[used..])
                .map_err(|_| broken("the session wrote an invalid response body"))?;
            self.out.extend_from_slice(&buf[used..][d.data]);
            used += d.used;
            self.ended = d.done;
            if d.used == 0 {
                break;
            }
        }
        if self.ended && used < buf.len() {
            return Err(broken("bytes after the end of the response"));
        }
        if self.ended {
            self.trailers = trailers(self.body.last_chunk());
        }
        Ok(used)
    }

    /// Sends some of `out` (and END_STREAM after the last of it) as the window allows.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let State::Body(send) = &mut self.state else {
            return Poll::Ready(Ok(()));
        };
        if self.out.is_empty() {
            if self.ended {
                match self.trailers.take() {
                    Some(fields) => send.send_trailers(fields),
                    None => send.send_data(Bytes::new(), true),
                }
                .map_err(reset)?;
                self.state = State::Done;
            }
            return Poll::Ready(Ok(()));
        }
        send.reserve_capacity(self.out.len());
        let granted = match std::task::ready!(send.poll_capacity(cx)) {
            Some(Ok(n)) => n,
            Some(Err(e)) => return Poll::Ready(Err(reset(e))),
            None => return Poll::Ready(Err(broken("the stream closed"))),
        };
        let chunk = self.out.split_to(granted.min(self.out.len())).freeze();
        let last = self.ended && self.out.is_empty() && self.trailers.is_none();
        send.send_data(chunk, last).map_err(reset)?;
        if last {
            self.state = State::Done;
        }
        Poll::Ready(Ok(()))
    }
}

/// The trailer fields of a chunked body's end as tern wrote it (`0\r\n`, canonical
/// `name: value\r\n` lines, `\r\n`); `None` when there are none.
fn trailers(last_chunk: &[u8]) -> Option<HeaderMap> {
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
