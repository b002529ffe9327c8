//! Forwarding a body: what to write, for what was read.
//!
//! A body framed by length (or by the close) is passed on as it is. A chunked body is
//! **re-framed**: tern writes the data it holds as one chunk of its own (`<hex size>\r\n`, the
//! data, `\r\n`), so every size line a server or client reads was written by tern, in lowercase
//! hex without leading zeros or extensions, for data tern has in hand. Chunk boundaries are
//! therefore not kept: the data of one read (up to [`MAX_RANGES`] chunks of the sender) becomes
//! one chunk, and a chunk that arrives over several reads becomes several (RFC 9112 §7.1 gives
//! boundaries no meaning; HAProxy and nginx re-chunk the same way). At the end tern writes the
//! last chunk `0\r\n`, the trailer fields it keeps ([`crate::trailers`]) and the final CRLF.
//!
//! Nothing is copied: a [`Piece`] holds offsets of the data in the input, and the framing is a
//! [`ChunkHeader`] on the stack and static bytes, so the proxy writes the size line, the data
//! ranges and the chunk end with one vectored write, as it wrote the received bytes before.
//! Gathering several of the sender's chunks into one keeps it at one write per read even when
//! the sender uses tiny chunks.

use std::ops::Range;

use super::{BodyReader, ChunkHeader, Kind, Progress, CHUNK_END};
use crate::error::H1Error;

/// Most data ranges (the sender's chunks) one [`Piece`] gathers: a vectored write takes this
/// many slices and a few more. A read holding more chunks than this is written in several
/// pieces.
pub const MAX_RANGES: usize = 32;

/// What to write for the start of an input (see [`BodyReader::forward`]): the chunk size line
/// ([`Piece::header`]), the data ranges of the input, [`Piece::chunk_end`], and, when
/// [`Piece::ends_chunked`], the reader's [`BodyReader::last_chunk`], in this order.
#[derive(Debug, Clone)]
pub struct Piece {
    /// Bytes at the start of the input the piece stands for (framing and data): drop them
    /// from the input once the piece is written.
    pub used: usize,
    ranges: [(usize, usize); MAX_RANGES],
    count: usize,
    size: usize,
    chunked: bool,
    ends: bool,
}

impl Default for Piece {
    fn default() -> Self {
        Piece {
            used: 0,
            ranges: [(0, 0); MAX_RANGES],
            count: 0,
            size: 0,
            chunked: false,
            ends: false,
        }
    }
}

impl Piece {
    /// The data ranges of the input, in order (none empty).
    pub fn ranges(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.ranges[..self.count].iter().map(|&(s, e)| s..e)
    }

    /// Data bytes in the ranges.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The size line to write before the data: a re-framed body with data in this piece.
    pub fn header(&self) -> Option<ChunkHeader> {
        (self.chunked && self.size > 0).then(|| ChunkHeader::new(self.size))
    }

    /// What follows the data: the CRLF that ends the chunk, or nothing.
    pub fn chunk_end(&self) -> &'static [u8] {
        if self.chunked && self.size > 0 {
            CHUNK_END
        } else {
            &[]
        }
    }

    /// Whether a chunked body ended in this piece: its [`BodyReader::last_chunk`] follows.
    pub fn ends_chunked(&self) -> bool {
        self.chunked && self.ends
    }

    /// Whether the body ended in this piece.
    pub fn ends(&self) -> bool {
        self.ends
    }

    /// Empties the piece (the ranges' storage is left as it is: only `count` of them count).
    pub fn clear(&mut self) {
        (self.used, self.count, self.size) = (0, 0, 0);
        (self.chunked, self.ends) = (false, false);
    }

    fn push(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        self.size += range.len();
        // The caller stops at MAX_RANGES.
        if let Some(slot) = self.ranges.get_mut(self.count) {
            *slot = (range.start, range.end);
            self.count += 1;
        }
    }
}

impl BodyReader {
    /// Forwarding: consumes the start of `input` into `piece` (at most [`MAX_RANGES`] data
    /// ranges; call again with the rest of the input). Bytes after the end of the body are
    /// not consumed.
    pub fn forward(&mut self, input: &[u8], piece: &mut Piece) -> Result<(), H1Error> {
        let was_done = self.is_done();
        piece.clear();
        piece.chunked = matches!(self.kind, Kind::Chunked(_));
        if let Kind::Chunked(c) = &mut self.kind {
            let mut at = 0;
            while at < input.len() && piece.count < MAX_RANGES && !c.is_done() {
                let (n, data) = c.step(&input[at..])?;
                if let Some((s, e)) = data {
                    piece.push(at + s..at + e);
                }
                at += n;
            }
            piece.used = at;
        } else {
            let d = self.decode(input)?;
            piece.push(d.data);
            piece.used = d.used;
        }
        piece.ends = self.is_done() && !was_done;
        Ok(())
    }

    /// [`BodyReader::forward`] over all of `input`, the pieces copied into `out`: for the body
    /// bytes that arrived with a head, which leave with the head in one buffer.
    pub fn forward_into(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<Progress, H1Error> {
        let mut piece = Piece::default();
        let mut used = 0;
        loop {
            self.forward(&input[used..], &mut piece)?;
            if let Some(header) = piece.header() {
                out.extend_from_slice(header.as_bytes());
            }
            for r in piece.ranges() {
                out.extend_from_slice(&input[used..][r]);
            }
            out.extend_from_slice(piece.chunk_end());
            if piece.ends_chunked() {
                out.extend_from_slice(self.last_chunk());
            }
            used += piece.used;
            if piece.used == 0 || self.is_done() {
                return Ok(Progress {
                    used,
                    done: self.is_done(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;
