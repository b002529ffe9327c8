//! One vectored write in the making, for either direction of a relay.
//!
//! What goes out for a piece of a body is, in order: framing that precedes it (the response
//! head, kept by the caller), the chunk size line tern writes, the data ranges of the source
//! buffer ([`Piece`]), the chunk end, the end of a chunked body (the reader's last chunk and
//! trailers) and a static tail (`100 Continue`, the last chunk of a body chunked by tern). A
//! [`Flight`] holds this as offsets and small values, since the buffers it points into are
//! borrowed anew at each poll; it rebuilds the slices still to write after a partial write by
//! skipping what was written. The source bytes are dropped only once all of it is written.

use std::io::IoSlice;

use tern_h1::{ChunkHeader, Piece, CHUNK_END, MAX_RANGES};

/// Most slices one write has: the prefix, the size line, the ranges, the chunk end, the end
/// of the body and the tail.
pub(super) const MAX_SLICES: usize = MAX_RANGES + 5;

/// How a piece of body is framed on its way out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    /// As [`tern_h1::BodyReader::forward`] says: re-framed chunks for a chunked body, the bytes
    /// as they are otherwise.
    Forward,
    /// The data alone (a chunked body for an HTTP/1.0 client).
    DataOnly,
    /// The data as one chunk of tern's (a body the server ends by closing, to an HTTP/1.1
    /// client).
    Chunk,
}

/// What one write still has to send (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Flight {
    pub piece: Piece,
    header: Option<ChunkHeader>,
    chunk_end: &'static [u8],
    /// The end of the chunked body follows the data.
    last: bool,
    pub tail: &'static [u8],
    /// Bytes of all this written so far.
    written: usize,
}

impl Flight {
    /// Frames the data of `self.piece` (just filled by the reader).
    pub(super) fn frame(&mut self, framing: Framing) {
        const NONE: &[u8] = &[];
        let p = &self.piece;
        (self.header, self.chunk_end, self.last) = match framing {
            Framing::Forward => (p.header(), p.chunk_end(), p.ends_chunked()),
            Framing::Chunk if p.size() > 0 => (Some(ChunkHeader::new(p.size())), CHUNK_END, false),
            Framing::DataOnly | Framing::Chunk => (None, NONE, false),
        };
        self.written = 0;
    }

    /// Whether nothing is set: no body bytes to write or drop, no tail.
    pub(super) fn is_empty(&self) -> bool {
        self.piece.used == 0 && self.tail.is_empty()
    }

    /// Fills `slices` with what is left to write: `prefix`, then the piece's framing and its
    /// data in `src`, then `last` (the reader's end of body) if the piece ends a chunked body,
    /// then the tail. Returns how many slices are used (0: all written).
    pub(super) fn slices<'a>(
        &'a self,
        prefix: &'a [u8],
        src: &'a [u8],
        last: &'a [u8],
        slices: &mut [IoSlice<'a>; MAX_SLICES],
    ) -> usize {
        let header = self.header.as_ref().map_or(&[][..], ChunkHeader::as_bytes);
        let data = self.piece.ranges().map(|r| src.get(r).unwrap_or_default());
        let last = if self.last { last } else { &[] };
        let parts =
            [prefix, header]
                .into_iter()
                .chain(data)
                .chain([self.chunk_end, last, self.tail]);
        let mut skip = self.written;
        let mut n = 0;
        for part in parts {
            let left = part.get(skip..).unwrap_or_default();
            skip = skip.saturating_sub(part.len());
            if !left.is_empty() {
                // MAX_SLICES counts every part there can be.
                if let Some(slot) = slices.get_mut(n) {
                    *slot = IoSlice::new(left);
                    n += 1;
                }
            }
        }
        n
    }

    /// `n` more bytes were written.
    pub(super) fn wrote(&mut self, n: usize) {
        self.written += n;
    }

    /// All of it was written: clears it and returns how many source bytes to drop.
    pub(super) fn finish(&mut self) -> usize {
        let used = self.piece.used;
        self.piece.clear();
        (self.header, self.chunk_end, self.last) = (None, &[], false);
        (self.tail, self.written) = (&[], 0);
        used
    }
}

#[cfg(test)]
mod tests;
