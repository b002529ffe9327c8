//! Message bodies: where one ends, in the bytes that follow its head, and the framing tern
//! writes when it forwards one.
//!
//! A [`BodyReader`] is fed whatever the socket produced, in pieces of any size, and works in
//! three modes:
//! - **advance** ([`BodyReader::advance`]): only learns how much of the input belongs to this
//!   message and whether the message ended, for a body tern reads but does not forward (a
//!   request it answers itself). This costs O(framing bytes), not O(body).
//! - **decode** ([`BodyReader::decode`]): hands out the data ranges of the body without the
//!   chunk framing, one range per call.
//! - **forward** ([`BodyReader::forward`], `forward.rs`): what to write on for the input: the
//!   bytes as they are for a body framed by length, or the data re-framed as chunks of tern's
//!   own for a chunked body (the sender's size lines, extensions and trailer lines are never
//!   passed on as written). An HTTP/1.0 client gets only the data ranges.
//!
//! Either way nothing is copied: the results are offsets into the input. Bytes after the end of
//! the message are not consumed; they belong to the next message (pipelining) or are an error
//! for the caller to judge.

use std::ops::Range;

use crate::chunked::Chunked;
use crate::error::H1Error;
use crate::limits::Limits;

mod forward;

pub use forward::{Piece, MAX_RANGES};

/// How far [`BodyReader::advance`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes at the start of the input that belong to the body (forward them as they are).
    pub used: usize,
    /// Whether the body ended within them.
    pub done: bool,
}

/// What one [`BodyReader::decode`] call found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes at the start of the input that were consumed (framing and data).
    pub used: usize,
    /// Body data within the consumed bytes (empty when the call consumed only framing).
    pub data: Range<usize>,
    /// Whether the body ended.
    pub done: bool,
}

#[derive(Debug, Clone)]
enum Kind {
    Length(u64),
    Chunked(Chunked),
    UntilClose,
    Ended,
}

/// Finds the end of one message body (RFC 9112 §6.3).
#[derive(Debug, Clone)]
pub struct BodyReader {
    kind: Kind,
}

impl BodyReader {
    /// A message without a body: done from the start.
    pub fn none() -> Self {
        BodyReader { kind: Kind::Ended }
    }

    /// A body of exactly `n` bytes.
    pub fn length(n: u64) -> Self {
        let kind = if n == 0 { Kind::Ended } else { Kind::Length(n) };
        BodyReader { kind }
    }

    /// A chunked body, bounded in extensions and trailers by `limits`.
    pub fn chunked(limits: &Limits) -> Self {
        BodyReader {
            kind: Kind::Chunked(Chunked::new(limits)),
        }
    }

    /// A body that ends when the connection does.
    pub fn until_close() -> Self {
        BodyReader {
            kind: Kind::UntilClose,
        }
    }

    /// Whether the whole body has been seen.
    pub fn is_done(&self) -> bool {
        match &self.kind {
            Kind::Ended => true,
            Kind::Chunked(c) => c.is_done(),
            Kind::Length(_) | Kind::UntilClose => false,
        }
    }

    /// The end of a chunked body as tern writes it: the last chunk `0\r\n`, the trailer fields
    /// kept (canonical, see `trailers.rs`) and the final CRLF; [`LAST_CHUNK`] until the
    /// body is complete, and for other bodies.
    pub fn last_chunk(&self) -> &[u8] {
        match &self.kind {
            Kind::Chunked(c) => c.trailers().last_chunk(),
            _ => LAST_CHUNK,
        }
    }

    /// How many trailer fields were dropped so far (see `trailers.rs`).
    pub fn dropped_trailers(&self) -> usize {
        match &self.kind {
            Kind::Chunked(c) => c.trailers().dropped(),
            _ => 0,
        }
    }

    /// Bytes still expected, when the framing says (content-length bodies).
    pub fn remaining(&self) -> Option<u64> {
        match &self.kind {
            Kind::Length(n) => Some(*n),
            Kind::Ended => Some(0),
            Kind::Chunked(_) | Kind::UntilClose => None,
        }
    }

    /// How much of `input` belongs to the body, and whether it ended there.
    pub fn advance(&mut self, input: &[u8]) -> Result<Progress, H1Error> {
        if let Kind::Chunked(c) = &mut self.kind {
            let mut used = 0;
            while used < input.len() && !c.is_done() {
                let (n, _) = c.step(&input[used..])?;
                used += n;
            }
            return Ok(Progress {
                used,
                done: c.is_done(),
            });
        }
        let d = self.decode(input)?;
        Ok(Progress {
            used: d.used,
            done: d.done,
        })
    }

    /// Decode: consumes framing up to the next data and returns that data's range (at most one
    /// range per call; call again with the rest of the input).
    pub fn decode(&mut self, input: &[u8]) -> Result<Decoded, H1Error> {
        let (used, data) = match &mut self.kind {
            Kind::Ended => (0, 0..0),
            Kind::UntilClose => (input.len(), 0..input.len()),
            Kind::Length(left) => {
                let take = usize::try_from(*left).map_or(input.len(), |l| l.min(input.len()));
                *left -= take as u64;
                if *left == 0 {
                    self.kind = Kind::Ended;
                }
                (take, 0..take)
            }
            Kind::Chunked(c) => {
                let (used, data) = c.step(input)?;
                (used, data.map_or(used..used, |(s, e)| s..e))
            }
        };
        Ok(Decoded {
            used,
            data,
            done: self.is_done(),
        })
    }

    /// The connection ended (EOF): fine for a body delimited by close (which is then done),
    /// [`H1Error::Truncated`] for any other body not yet complete.
    pub fn finish(&mut self) -> Result<(), H1Error> {
        match &self.kind {
            Kind::UntilClose => {
                self.kind = Kind::Ended;
                Ok(())
            }
            _ if self.is_done() => Ok(()),
            _ => Err(H1Error::Truncated),
        }
    }
}

/// The CRLF that ends a chunk's data.
pub const CHUNK_END: &[u8] = b"\r\n";

/// The last chunk and an empty trailer section: the end of a chunked body.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// The size line of one chunk (`1a2b\r\n`), built on the stack, for writing a chunk as three
/// slices (header, data, [`CHUNK_END`]) without copying the data. A size of 0 would end the
/// body: write [`LAST_CHUNK`] for that instead and skip empty data.
#[derive(Debug, Clone, Copy)]
pub struct ChunkHeader {
    buf: [u8; 18],
    start: u8,
}

impl ChunkHeader {
    /// The size line for `size` bytes of data.
    pub fn new(size: usize) -> Self {
        let mut buf = [0u8; 18];
        buf[16] = b'\r';
        buf[17] = b'\n';
        let mut i = 16;
        let mut n = size as u64;
        loop {
            i -= 1;
            buf[i] = b"0123456789abcdef"[(n & 0xf) as usize];
            n >>= 4;
            if n == 0 {
                break;
            }
        }
        ChunkHeader {
            buf,
            start: i as u8,
        }
    }

    /// The line's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[usize::from(self.start)..]
    }
}

/// Appends `data` as one chunk (size line, data, CRLF) to `out`; nothing for empty data.
pub fn encode_chunk(data: &[u8], out: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    out.extend_from_slice(ChunkHeader::new(data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(CHUNK_END);
}

#[cfg(test)]
mod tests;
