//! The download half of a [`Relay`]: the response head, then the body, to the client.
//!
//! The response is read into the server connection's buffer and written from there: what goes
//! out is described as a piece of the output buffer (the rewritten head, or chunk framing tern
//! adds), a range of the server buffer (body bytes, passed through as received) and a static
//! tail (chunk end, last chunk, `100 Continue`), written with one vectored write and then
//! flushed. Server buffer bytes are dropped only once written.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tern_h1::{
    parse_response, write_response_edited, ChunkHeader, ClientBody, Edits, H1Error, Status,
    CHUNK_END, LAST_CHUNK,
};

use super::{Fault, Relay, Stage, Wait};
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
    /// Interim responses (1xx) are dropped: tern answers `Expect` itself; a `101` is refused,
    /// since tern strips `Upgrade` and cannot relay another protocol.
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
                    Status::Complete(_) if conn.head.status() == 101 => {
                        return Err(Fault::BadResponse(H1Error::Malformed(
                            "101 Switching Protocols to a request without Upgrade",
                        )));
                    }
                    Status::Complete(n) if conn.head.is_informational() => {
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

    /// The final head of `n` bytes is parsed: writes the client's head into the output buffer
    /// and attaches the first body bytes to it.
    fn start_response(&mut self, n: usize) -> Result<(), Fault> {
        let conn = &mut *self.s.conn;
        let out = &mut *self.c.out;
        out.clear();
        if (self.stopping)() {
            self.req.keep_alive = false;
        }
        let headers = self
            .c
            .rules
            .apply(&conn.head, conn.buf.data(), self.c.io.sni());
        let edits = Edits {
            cookie: self.c.extra.cookie_edit(),
            extra: &self.c.extra.fields,
            headers,
        };
        let plan = write_response_edited(&conn.head, conn.buf.data(), &self.req, &edits, out);
        if plan.body == ClientBody::Tunnel {
            // A CONNECT the server accepted: tern does not relay tunnels.
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
        d.keep_client = plan.keep_alive;
        d.reuse_server = conn.head.keep_alive();
        d.reader = conn.head.body_reader(&RESPONSE_LIMITS);
        d.body_done = d.reader.is_done();
        d.out_pos = 0;
        self.attach()
    }

    /// Turns body bytes at the front of the server buffer into output for the client.
    fn attach(&mut self) -> Result<(), Fault> {
        let d = &mut self.down;
        if d.body_done || self.s.conn.buf.is_empty() {
            return Ok(());
        }
        let out = &mut *self.c.out;
        if d.out_pos == out.len() {
            out.clear();
            d.out_pos = 0;
        }
        let input = self.s.conn.buf.data();
        let bad = Fault::BadResponse;
        let (off, len, consume) = match d.plan {
            ClientBody::Length(_) | ClientBody::Chunked | ClientBody::UntilClose => {
                let p = d.reader.advance(input).map_err(bad)?;
                d.body_done = p.done;
                (0, p.used, p.used)
            }
            ClientBody::Dechunk => {
                let p = d.reader.decode(input).map_err(bad)?;
                d.body_done = p.done;
                (p.data.start, p.data.len(), p.used)
            }
            ClientBody::Rechunk => {
                out.extend_from_slice(ChunkHeader::new(input.len()).as_bytes());
                d.tail = CHUNK_END;
                d.tail_pos = 0;
                (0, input.len(), input.len())
            }
            ClientBody::None | ClientBody::Tunnel => {
                d.body_done = true;
                (0, 0, 0)
            }
        };
        (d.data_off, d.data, d.data_pos, d.consume) = (off, len, 0, consume);
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
                    self.c.out.clear();
                    self.c.out.extend_from_slice(LAST_CHUNK);
                    self.down.out_pos = 0;
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
            let out = &self.c.out[d.out_pos..];
            let data = &self.s.conn.buf.data()[d.data_off..][d.data_pos..d.data];
            let tail = &d.tail[d.tail_pos..];
            if out.is_empty() && data.is_empty() && tail.is_empty() {
                break;
            }
            let slices = [IoSlice::new(out), IoSlice::new(data), IoSlice::new(tail)];
            match Pin::new(&mut *self.c.io).poll_write_vectored(cx, &slices) {
                Poll::Ready(Ok(0)) => return Err(Fault::ClientIo(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    let n_out = n.min(out.len());
                    let n_data = (n - n_out).min(data.len());
                    d.out_pos += n_out;
                    d.data_pos += n_data;
                    d.tail_pos += n - n_out - n_data;
                    d.sent += n as u64;
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
        if d.consume > 0 {
            self.s.conn.buf.consume(d.consume);
            (d.data_off, d.data, d.data_pos, d.consume) = (0, 0, 0, 0);
        }
        if d.unflushed && d.body_done && !d.keep_client {
            // The end of the last response: close_notify leaves with it.
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
