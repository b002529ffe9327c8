//! The download half of a [`Relay`]: the response head, then the body, to the client.
//!
//! The response is read into the server connection's buffer and written from there: what goes
//! out is a `Flight` (`flight.rs`): the output buffer (the rewritten head), the body piece of the server
//! buffer with the framing the plan asks for (re-framed chunks, the data alone, or chunks of
//! tern's around a body delimited by close) and a static tail (last chunk, `100 Continue`),
//! written with one vectored write and then flushed. Server buffer bytes are dropped only once
//! written.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tern_h1::{
    parse_response, write_response_edited, write_response_encoded, ClientBody, Edits, H1Error,
    ResponsePlan, Status, LAST_CHUNK,
};
use tracing::debug;

use super::flight::{Framing, MAX_SLICES};
use super::{Fault, Relay, Stage, Wait};
use crate::compress::{self, Encoder};
use crate::exchange::upstream::RESPONSE_LIMITS;
use crate::listen::client::ClientStream;

impl<S: ClientStream> Relay<'_, S> {
    /// Moves the response along until it is complete or an operation is pending.
    pub(super) fn pump_download(&mut self, cx: &mut Context<'_>) -> Result<(), Fault> {
        if self.up.head_len > 0 {
            // The output buffer still holds the request head.
            return Ok(());
        }
        loop {
            match self.down.stage {
                Stage::Head => {
                    // A `100 Continue` goes out before anything else.
                    if !self.write_out(cx)? || !self.read_head(cx)? {
                        return Ok(());
                    }
                }
                Stage::Body => {
                    if !self.write_out(cx)? {
                        return Ok(());
                    }
                    if self.down.body_done {
                        self.down.stage = Stage::Done;
                        if !self.s.conn.buf.is_empty() {
                            // Bytes after the end of the response: the connection is out of step.
                            self.down.reuse_server = false;
                        }
                        return Ok(());
                    }
                    if self.s.conn.buf.is_empty() && !self.fill(cx)? {
                        return Ok(());
                    }
                    self.attach()?;
                }
                Stage::Done => return Ok(()),
            }
        }
    }

    /// Reads until a final response head is parsed (true) or a read is pending (false).
    /// Interim responses (1xx) are dropped: tern answers `Expect` itself. A `101` is where the
    /// connection may stop being HTTP: it is the final head when it accepts an upgrade request
    /// (and names its protocol in `Upgrade`), and the relay then ends in [`End::Switched`]
    /// once it is written; any other `101` is refused, since the client did not ask to switch,
    /// as is one the client stream does not accept (`ClientStream::accepts_switch`).
    ///
    /// [`End::Switched`]: super::End::Switched
    fn read_head(&mut self, cx: &mut Context<'_>) -> Result<bool, Fault> {
        loop {
            let conn = &mut *self.s.conn;
            if !conn.buf.is_empty() {
                let parsed = parse_response(
                    conn.buf.data(),
                    &RESPONSE_LIMITS,
                    &mut conn.head,
                    self.req.method,
                );
                match parsed.map_err(Fault::BadResponse)? {
                    Status::Partial => {}
                    Status::Complete(_) if conn.head.status() == 101 && !self.req.upgrade => {
                        return Err(Fault::BadResponse(H1Error::Malformed(
                            "101 Switching Protocols to a request without Upgrade",
                        )));
                    }
                    Status::Complete(_) if conn.head.status() == 101 && !conn.head.upgrade() => {
                        return Err(Fault::BadResponse(H1Error::Malformed(
                            "101 Switching Protocols without Upgrade",
                        )));
                    }
                    Status::Complete(_)
                        if conn.head.status() == 101
                            && !self.c.io.accepts_switch(&conn.head, conn.buf.data()) =>
                    {
                        return Err(Fault::BadResponse(H1Error::Malformed(
                            "101 Switching Protocols with a wrong Sec-WebSocket-Accept",
                        )));
                    }
                    Status::Complete(n)
                        if conn.head.is_informational() && conn.head.status() != 101 =>
                    {
                        conn.buf.consume(n);
                        continue;
                    }
                    Status::Complete(n) => {
                        self.start_response(n)?;
                        return Ok(true);
                    }
                }
            }
            match conn.buf.poll_read_from(&mut conn.stream, cx) {
                Poll::Ready(Ok(0)) => return Err(Fault::ServerClosed),
                Poll::Ready(Ok(_)) => {
                    self.down.received = true;
                    self.server_progress = true;
                }
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::OutOfMemory => {
                    return Err(Fault::BadResponse(H1Error::HeadTooLarge));
                }
                Poll::Ready(Err(e)) => return Err(Fault::ServerIo(e)),
                Poll::Pending => {
                    self.down.wait = Wait::Server;
                    return Ok(false);
                }
            }
        }
    }

    /// Writes the client's head for the parsed final head into the output buffer: with the
    /// response rules' edits, cookie persistence's fields, and compression's when the response
    /// is compressed (its encoder is then made).
    fn write_head(&mut self) -> Result<ResponsePlan, Fault> {
        let conn = &*self.s.conn;
        let (head, buf) = (&conn.head, conn.buf.data());
        let ruled = self.c.rules.apply(head, buf, self.c.io.sni())?.is_some();
        let offer = self
            .c
            .compress
            .filter(|o| compress::worth_compressing(o, head, buf));
        if let Some(o) = &offer {
            compress::edit_head(o.coding, head, buf, self.c.rules.edits);
        }
        let edits = Edits {
            cookie: self.c.extra.cookie_edit(),
            extra: &self.c.extra.fields,
            headers: (ruled || offer.is_some()).then_some(&*self.c.rules.edits),
        };
        let out = &mut *self.c.out;
        let plan = match offer {
            Some(_) => write_response_encoded(head, buf, &self.req, &edits, out),
            None => write_response_edited(head, buf, &self.req, &edits, out),
        };
        if let (Some(o), ClientBody::Encoded) = (offer, plan.body) {
            let encoder = Encoder::new(o.coding, o.config).map_err(Fault::Encoder)?;
            self.down.encoder = Some(Box::new(encoder));
        }
        Ok(plan)
    }

    /// The final head of `n` bytes is parsed: writes the client's head into the output buffer
    /// and attaches the first body bytes to it.
    fn start_response(&mut self, n: usize) -> Result<(), Fault> {
        self.c.out.clear();
        if (self.stopping)() {
            self.req.keep_alive = false;
        }
        let plan = self.write_head()?;
        let conn = &mut *self.s.conn;
        let switched = plan.body == ClientBody::Tunnel;
        if switched && conn.head.status() != 101 {
            // A CONNECT the server accepted: tern does not relay CONNECT tunnels.
            return Err(Fault::BadResponse(H1Error::Malformed(
                "tunnel not supported",
            )));
        }
        conn.buf.consume(n);
        self.c.buf.consume(std::mem::take(&mut self.request_bytes));
        let d = &mut self.down;
        d.stage = Stage::Body;
        d.status = Some(conn.head.status());
        d.responded_at = Some(tokio::time::Instant::now());
        d.plan = plan.body;
        d.switched = switched;
        d.keep_client = plan.keep_alive;
        d.reuse_server = conn.head.keep_alive();
        d.reader = conn.head.body_reader(&RESPONSE_LIMITS);
        d.body_done = d.reader.is_done();
        if let Err(fault) = self.attach() {
            // The body bytes that came with the head are refused before anything reached the
            // client: it gets a 502 rather than a connection closed without a word.
            self.down.stage = Stage::Head;
            self.down.status = None;
            self.c.out.clear();
            return Err(fault);
        }
        Ok(())
    }

    /// Turns body bytes at the front of the server buffer into output for the client.
    fn attach(&mut self) -> Result<(), Fault> {
        let d = &mut self.down;
        if d.body_done || self.s.conn.buf.is_empty() {
            return Ok(());
        }
        let framing = match d.plan {
            ClientBody::Length(_) | ClientBody::Chunked | ClientBody::UntilClose => {
                Framing::Forward
            }
            ClientBody::Dechunk => Framing::DataOnly,
            ClientBody::Rechunk => Framing::Chunk,
            ClientBody::Encoded => return self.attach_encoded(),
            ClientBody::None | ClientBody::Tunnel => {
                d.body_done = true;
                return Ok(());
            }
        };
        d.reader
            .forward(self.s.conn.buf.data(), &mut d.flight.piece)
            .map_err(Fault::BadResponse)?;
        d.flight.frame(framing);
        d.body_done = d.reader.is_done();
        if d.flight.piece.ends_chunked() && d.reader.dropped_trailers() > 0 {
            debug!(
                fields = d.reader.dropped_trailers(),
                "response trailer fields dropped"
            );
        }
        Ok(())
    }

    /// [`Self::attach`] for a compressed body: the data of the server buffer is fed to the
    /// encoder, flushed, and its output goes to the output buffer as one chunk (with the end
    /// of the coded stream and the reader's last chunk once the body ends); the piece only
    /// says how many server bytes that stands for.
    fn attach_encoded(&mut self) -> Result<(), Fault> {
        let d = &mut self.down;
        let Some(encoder) = d.encoder.as_deref_mut() else {
            return Err(Fault::Encoder(io::Error::other("no encoder")));
        };
        let src = self.s.conn.buf.data();
        let mut used = 0;
        let mut fed = false;
        while used < src.len() && !d.reader.is_done() {
            let rest = src.get(used..).unwrap_or_default();
            let step = d.reader.decode(rest).map_err(Fault::BadResponse)?;
            if let Some(data) = rest.get(step.data).filter(|d| !d.is_empty()) {
                encoder.write(data).map_err(Fault::Encoder)?;
                fed = true;
            }
            if step.used == 0 {
                break;
            }
            used += step.used;
        }
        let out = &mut *self.c.out;
        if d.reader.is_done() {
            encoder.finish_chunk(out).map_err(Fault::Encoder)?;
            out.extend_from_slice(d.reader.last_chunk());
        } else if fed {
            encoder.flush_chunk(out).map_err(Fault::Encoder)?;
        }
        d.flight.piece.clear();
        d.flight.piece.used = used;
        d.flight.frame(Framing::DataOnly);
        d.body_done = d.reader.is_done();
        Ok(())
    }

    /// Reads more of the response body into the (empty) server buffer; false when pending.
    fn fill(&mut self, cx: &mut Context<'_>) -> Result<bool, Fault> {
        let conn = &mut *self.s.conn;
        match conn.buf.poll_read_from(&mut conn.stream, cx) {
            Poll::Ready(Ok(0)) => {
                // End of stream: the end of a body delimited by close, else a truncated one.
                self.down.reader.finish().map_err(|_| Fault::ServerClosed)?;
                self.down.body_done = true;
                self.down.reuse_server = false;
                if self.down.plan == ClientBody::Rechunk {
                    self.down.flight.tail = LAST_CHUNK;
                }
                if let Some(encoder) = self.down.encoder.as_deref_mut() {
                    // Not for now: a body delimited by the close is never compressed.
                    encoder.finish_chunk(self.c.out).map_err(Fault::Encoder)?;
                    self.down.flight.tail = LAST_CHUNK;
                }
                Ok(true)
            }
            Poll::Ready(Ok(_)) => {
                self.server_progress = true;
                Ok(true)
            }
            Poll::Ready(Err(e)) => Err(Fault::ServerIo(e)),
            Poll::Pending => {
                self.down.wait = Wait::Server;
                Ok(false)
            }
        }
    }

    /// Writes the output in flight, then flushes; true once all of it is out.
    fn write_out(&mut self, cx: &mut Context<'_>) -> Result<bool, Fault> {
        let d = &mut self.down;
        loop {
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let n = d.flight.slices(
                self.c.out,
                self.s.conn.buf.data(),
                d.reader.last_chunk(),
                &mut slices,
            );
            if n == 0 {
                break;
            }
            match Pin::new(&mut *self.c.io).poll_write_vectored(cx, &slices[..n]) {
                Poll::Ready(Ok(0)) => return Err(Fault::ClientIo(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(written)) => {
                    d.flight.wrote(written);
                    d.sent += written as u64;
                    d.unflushed = true;
                    self.client_progress = true;
                }
                Poll::Ready(Err(e)) => return Err(Fault::ClientIo(e)),
                Poll::Pending => {
                    d.wait = Wait::Client;
                    return Ok(false);
                }
            }
        }
        let used = d.flight.finish();
        self.s.conn.buf.consume(used);
        self.c.out.clear();
        if d.unflushed && d.body_done && !d.keep_client && !d.switched {
            // The end of the last response: close_notify leaves with it (not after a 101: the
            // tunnel that follows closes the connection when its ends close).
            self.c.io.queue_close();
        }
        if d.unflushed {
            match Pin::new(&mut *self.c.io).poll_flush(cx) {
                Poll::Ready(Ok(())) => d.unflushed = false,
                Poll::Ready(Err(e)) => return Err(Fault::ClientIo(e)),
                Poll::Pending => {
                    // A TLS flush that wrote some bytes is progress: a slow reader is reading.
                    let sent = self.c.io.bytes_sent();
                    if sent != self.last_sent {
                        self.last_sent = sent;
                        self.client_progress = true;
                    }
                    d.wait = Wait::Client;
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}
