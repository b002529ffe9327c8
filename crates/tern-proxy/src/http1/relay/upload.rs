//! The upload half of a [`Relay`]: the request head, then the body, to the server.
//!
//! The head (with the body bytes that came with it, already re-framed) leaves from the output
//! buffer; the rest of the body is forwarded from the client buffer a piece at a time
//! (a `Flight`: a chunk size line tern writes, the data ranges, the chunk end, the end of the
//! body), each piece in one vectored write, its bytes dropped from the buffer once written.
//! Bytes after the end of the body stay in the buffer as the next (pipelined) request.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tern_h1::local::CONTINUE;
use tokio::io::AsyncWrite;
use tracing::debug;

use super::flight::{Framing, MAX_SLICES};
use super::{Fault, Relay, Wait};
use crate::listen::client::ClientStream;

impl<S: ClientStream> Relay<'_, S> {
    /// Writes the request head, then forwards body bytes until the body ends or an operation
    /// is pending.
    pub(super) fn pump_upload(&mut self, cx: &mut Context<'_>) -> Result<(), Fault> {
        if self.up.head_len > 0 && !self.send_head(cx)? {
            return Ok(());
        }
        loop {
            if !self.up.flight.is_empty() {
                if !self.write_upload(cx)? {
                    self.up.wait = Wait::Server;
                    return Ok(());
                }
                continue;
            }
            if !self.up.reader.is_done() && !self.c.buf.is_empty() {
                let up = &mut self.up;
                up.reader
                    .forward(self.c.buf.data(), &mut up.flight.piece)
                    .map_err(Fault::BadRequestBody)?;
                up.flight.frame(Framing::Forward);
                if up.flight.piece.ends_chunked() && up.reader.dropped_trailers() > 0 {
                    debug!(
                        fields = up.reader.dropped_trailers(),
                        "request trailer fields dropped"
                    );
                }
                if !up.flight.is_empty() {
                    continue;
                }
            }
            if !self.flush_server(cx)? {
                self.up.wait = Wait::Server;
                return Ok(());
            }
            if self.up.reader.is_done() {
                return Ok(());
            }
            // Everything received was forwarded and consumed, so the buffer is empty: read.
            match self.c.buf.poll_read_from(self.c.io, cx) {
                Poll::Ready(Ok(0)) => {
                    self.up.reader.finish().map_err(|_| Fault::ClientClosed)?;
                }
                Poll::Ready(Ok(_)) => self.client_progress = true,
                Poll::Ready(Err(e)) => return Err(Fault::ClientIo(e)),
                Poll::Pending => {
                    self.up.wait = Wait::Client;
                    return Ok(());
                }
            }
        }
    }

    /// Writes the upload's piece in flight; true once it is out (its bytes are then dropped
    /// from the client buffer), false when the write is pending.
    fn write_upload(&mut self, cx: &mut Context<'_>) -> Result<bool, Fault> {
        let up = &mut self.up;
        loop {
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let n = up
                .flight
                .slices(&[], self.c.buf.data(), up.reader.last_chunk(), &mut slices);
            if n == 0 {
                break;
            }
            match Pin::new(&mut self.s.conn.stream).poll_write_vectored(cx, &slices[..n]) {
                Poll::Ready(Ok(0)) => return Err(Fault::ServerIo(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(written)) => {
                    up.flight.wrote(written);
                    self.server_progress = true;
                    self.server_unflushed = true;
                }
                Poll::Ready(Err(e)) => return Err(Fault::ServerIo(e)),
                Poll::Pending => return Ok(false),
            }
        }
        let used = up.flight.finish();
        self.c.buf.consume(used);
        up.sent += used as u64;
        Ok(true)
    }

    /// Writes the request head from the output buffer; true once it is out. The output buffer
    /// is then free for the client's side.
    fn send_head(&mut self, cx: &mut Context<'_>) -> Result<bool, Fault> {
        let up = &mut self.up;
        while up.head_pos < up.head_len {
            let bytes = &self.c.out[up.head_pos..up.head_len];
            match Pin::new(&mut self.s.conn.stream).poll_write(cx, bytes) {
                Poll::Ready(Ok(0)) => return Err(Fault::ServerIo(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    up.head_pos += n;
                    self.server_progress = true;
                    self.server_unflushed = true;
                }
                Poll::Ready(Err(e)) => return Err(Fault::ServerIo(e)),
                Poll::Pending => {
                    up.wait = Wait::Server;
                    return Ok(false);
                }
            }
        }
        if !self.flush_server(cx)? {
            self.up.wait = Wait::Server;
            return Ok(false);
        }
        let up = &mut self.up;
        (up.head_pos, up.head_len) = (0, 0);
        self.c.out.clear();
        if up.expect {
            self.down.flight.tail = CONTINUE;
        }
        Ok(true)
    }
}
