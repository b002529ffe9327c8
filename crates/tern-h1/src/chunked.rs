//! The chunked coding (RFC 9112 §7.1) as a byte-at-a-time state machine that can stop at any
//! byte and resume with the next input, so a body may arrive in pieces of any size.
//!
//! ```text
//! chunked-body   = *chunk last-chunk trailer-section CRLF
//! chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//! last-chunk     = 1*("0") [ chunk-ext ] CRLF
//! ```
//!
//! Only framing bytes are looked at one by one; chunk data is skipped (or handed out) in one
//! step. The decoder is strict where lenient parsers have been used to smuggle requests:
//! - every line ends in CRLF: a bare LF or CR anywhere in the framing is an error, since a
//!   server that accepts a bare LF as a line end would see a different chunk boundary;
//! - the chunk size is hex with overflow checked (`fffffffffffffffff` is an error, not 0 or
//!   2^64-1), and at least one digit;
//! - spaces or tabs may follow the size only before an extension or the CRLF (as hyper);
//! - extensions are skipped but bounded in total (`max_chunk_ext`) and may hold no control
//!   bytes; trailer lines must be `name:value` with a token name and no obs-fold, and the
//!   section is bounded (`max_trailer_size`): trailers are passed on as they are, so what
//!   crosses must parse the same way for every reader.

use crate::error::H1Error;
use crate::limits::Limits;
use crate::span::{is_ows, is_tchar};

/// Where the decoder is in the grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first digit of a chunk size.
    SizeStart,
    /// In the digits.
    Size,
    /// Spaces after the digits.
    SizeWs,
    /// In a chunk extension.
    Ext,
    /// After the CR of a size line.
    SizeLf,
    /// In chunk data (`remaining` bytes left).
    Data,
    /// After chunk data: expecting CR.
    DataCr,
    /// Expecting the LF after chunk data.
    DataLf,
    /// At the start of a trailer line, or of the final CRLF.
    TrailerStart,
    /// In a trailer field name.
    TrailerName,
    /// In a trailer field value.
    TrailerValue,
    /// After the CR of a trailer line.
    TrailerLf,
    /// After the CR of the final empty line.
    EndLf,
    /// The body is complete.
    Done,
}

/// A chunked-body decoder.
#[derive(Debug, Clone)]
pub(crate) struct Chunked {
    state: State,
    size: u64,
    ext_left: usize,
    trailers_left: usize,
}

impl Chunked {
    pub(crate) fn new(limits: &Limits) -> Self {
        Chunked {
            state: State::SizeStart,
            size: 0,
            ext_left: limits.max_chunk_ext,
            trailers_left: limits.max_trailer_size,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Consumes framing from `input` until chunk data is reached (then returns the data's
    /// range, which is consumed too), the body ends, or the input does. Returns the bytes
    /// consumed and the data range, if any.
    pub(crate) fn step(
        &mut self,
        input: &[u8],
    ) -> Result<(usize, Option<(usize, usize)>), H1Error> {
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Data {
                let avail = input.len() - i;
                let take = usize::try_from(self.size).map_or(avail, |s| s.min(avail));
                self.size -= take as u64;
                if self.size == 0 {
                    self.state = State::DataCr;
                }
                return Ok((i + take, Some((i, i + take))));
            }
            if self.state == State::Done {
                break;
            }
            self.byte(input[i])?;
            i += 1;
        }
        Ok((i, None))
    }

    /// One framing byte.
    fn byte(&mut self, b: u8) -> Result<(), H1Error> {
        use State::*;
        self.state = match (self.state, b) {
            (SizeStart | Size, _) if b.is_ascii_hexdigit() => {
                self.size = self
                    .size
                    .checked_mul(16)
                    .and_then(|s| s.checked_add(u64::from(hex(b))))
                    .ok_or(H1Error::InvalidChunk("chunk size overflows"))?;
                Size
            }
            (SizeStart, _) => return Err(H1Error::InvalidChunk("chunk size expected")),
            (Size | SizeWs, b) if is_ows(b) => SizeWs,
            (Size | SizeWs, b';') => self.ext()?,
            (Size | SizeWs, b'\r') => SizeLf,
            (Size | SizeWs, _) => {
                return Err(H1Error::InvalidChunk("invalid byte after chunk size"))
            }
            (Ext, b'\r') => SizeLf,
            (Ext, b) if b == b'\t' || b >= 0x20 && b != 0x7f => self.ext()?,
            (Ext, _) => return Err(H1Error::InvalidChunk("invalid byte in chunk extension")),
            (SizeLf, b'\n') if self.size == 0 => TrailerStart,
            (SizeLf, b'\n') => Data,
            (SizeLf, _) => return Err(H1Error::InvalidChunk("CR without LF")),
            (DataCr, b'\r') => DataLf,
            (DataCr, _) => return Err(H1Error::InvalidChunk("chunk data longer than its size")),
            (DataLf, b'\n') => SizeStart,
            (DataLf, _) => return Err(H1Error::InvalidChunk("CR without LF")),
            (TrailerStart, b'\r') => self.trailer(EndLf)?,
            (TrailerStart, b) if is_tchar(b) => self.trailer(TrailerName)?,
            (TrailerStart, _) => return Err(H1Error::InvalidChunk("invalid trailer line")),
            (TrailerName, b) if is_tchar(b) => self.trailer(TrailerName)?,
            (TrailerName, b':') => self.trailer(TrailerValue)?,
            (TrailerName, _) => return Err(H1Error::InvalidChunk("invalid trailer field name")),
            (TrailerValue, b'\r') => self.trailer(TrailerLf)?,
            (TrailerValue, b) if b == b'\t' || b >= 0x20 && b != 0x7f => {
                self.trailer(TrailerValue)?
            }
            (TrailerValue, _) => return Err(H1Error::InvalidChunk("invalid trailer field value")),
            (TrailerLf, b'\n') => self.trailer(TrailerStart)?,
            (TrailerLf, _) => return Err(H1Error::InvalidChunk("CR without LF")),
            (EndLf, b'\n') => Done,
            (EndLf, _) => return Err(H1Error::InvalidChunk("CR without LF")),
            // `step` stops at Data and Done.
            (Data | Done, _) => self.state,
        };
        Ok(())
    }

    /// Counts one extension byte against the limit.
    fn ext(&mut self) -> Result<State, H1Error> {
        self.ext_left = self
            .ext_left
            .checked_sub(1)
            .ok_or(H1Error::ChunkExtTooLong)?;
        Ok(State::Ext)
    }

    /// Counts one trailer-section byte against the limit.
    fn trailer(&mut self, next: State) -> Result<State, H1Error> {
        self.trailers_left = self
            .trailers_left
            .checked_sub(1)
            .ok_or(H1Error::TrailersTooLarge)?;
        Ok(next)
    }
}

/// The value of a hex digit (the caller checked it is one).
fn hex(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b.wrapping_sub(b'A').wrapping_add(10),
    }
}

#[cfg(test)]
mod tests;
