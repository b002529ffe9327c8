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
//! step. tern never passes this framing on: the proxy writes each piece of data it forwards as
//! a chunk of its own (`body::forward`), and the trailer section field by field
//! ([`crate::trailers`]). The decoder is still strict, since a message tern reads one way must
//! not be one a server behind another proxy reads another way:
//! - every line ends in CRLF: a bare LF or CR anywhere in the framing is an error, since a
//!   server that accepts a bare LF as a line end would see a different chunk boundary;
//! - the chunk size is hex with overflow checked (`fffffffffffffffff` is an error, not 0 or
//!   2^64-1), and at least one digit. A size that fits is never passed on as such (tern writes
//!   the sizes of the data it holds), so no bound tighter than 64 bits is needed;
//! - extensions must follow their grammar (`ext.rs`; whitespace only where it has BWS, so none
//!   right before the CRLF) and are dropped;
//! - the bytes of a size line that carry no size (extensions, whitespace, leading zeros) are
//!   bounded over the whole body (`max_chunk_ext`), as tern reads them without passing them on;
//! - trailer lines must be `name:value` with a token name, no control bytes in the value and no
//!   obs-fold, and the section is bounded (`max_trailer_size`).

use crate::error::H1Error;
use crate::limits::Limits;
use crate::span::is_tchar;
use crate::trailers::Trailers;

mod ext;

use ext::{Ext, Next};

/// Where the decoder is in the grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first digit of a chunk size.
    SizeStart,
    /// In the digits.
    Size,
    /// After the digits, in the extensions.
    Ext(Ext),
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
    trailers: Trailers,
}

impl Chunked {
    pub(crate) fn new(limits: &Limits) -> Self {
        Chunked {
            state: State::SizeStart,
            size: 0,
            ext_left: limits.max_chunk_ext,
            trailers_left: limits.max_trailer_size,
            trailers: Trailers::default(),
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The trailer section as it is passed on (see [`crate::trailers`]).
    pub(crate) fn trailers(&self) -> &Trailers {
        &self.trailers
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
        self.state = match self.state {
            SizeStart | Size => self.size_byte(b)?,
            Ext(e) => match e.next(b).map_err(H1Error::InvalidChunk)? {
                Next::Ext(e) => self.ext(Ext(e))?,
                Next::End => SizeLf,
            },
            SizeLf | DataCr | DataLf => self.line_end(b)?,
            TrailerStart | TrailerName | TrailerValue | TrailerLf | EndLf => {
                self.trailer_byte(b)?
            }
            // `step` stops at Data and Done.
            Data | Done => self.state,
        };
        Ok(())
    }

    /// A byte of the size, or the first after it.
    fn size_byte(&mut self, b: u8) -> Result<State, H1Error> {
        let first = self.state == State::SizeStart;
        if b.is_ascii_hexdigit() {
            if !first && self.size == 0 && b == b'0' {
                // A leading zero: framing that carries nothing, bounded like extensions.
                self.ext(State::Size)?;
            }
            self.size = self
                .size
                .checked_mul(16)
                .and_then(|s| s.checked_add(u64::from(hex(b))))
                .ok_or(H1Error::InvalidChunk("chunk size overflows"))?;
            return Ok(State::Size);
        }
        if first {
            return Err(H1Error::InvalidChunk("chunk size expected"));
        }
        match b {
            b'\r' => Ok(State::SizeLf),
            b';' => self.ext(State::Ext(Ext::NameStart)),
            b' ' | b'\t' => self.ext(State::Ext(Ext::Bws)),
            _ => Err(H1Error::InvalidChunk("invalid byte after chunk size")),
        }
    }

    /// The LF of a size line, or the CRLF after chunk data.
    fn line_end(&mut self, b: u8) -> Result<State, H1Error> {
        use State::*;
        Ok(match (self.state, b) {
            (SizeLf, b'\n') if self.size == 0 => TrailerStart,
            (SizeLf, b'\n') => Data,
            (DataCr, b'\r') => DataLf,
            (DataCr, _) => return Err(H1Error::InvalidChunk("chunk data longer than its size")),
            (DataLf, b'\n') => SizeStart,
            _ => return Err(H1Error::InvalidChunk("CR without LF")),
        })
    }

    /// A byte of the trailer section: checked, counted, and handed to [`Trailers`].
    fn trailer_byte(&mut self, b: u8) -> Result<State, H1Error> {
        use State::*;
        let next = match (self.state, b) {
            (TrailerStart, b'\r') => EndLf,
            (TrailerStart, b) if is_tchar(b) => {
                self.trailers.start_line(b);
                TrailerName
            }
            (TrailerStart, _) => return Err(H1Error::InvalidChunk("invalid trailer line")),
            (TrailerName, b) if is_tchar(b) => {
                self.trailers.name_byte(b);
                TrailerName
            }
            (TrailerName, b':') => {
                self.trailers.colon();
                TrailerValue
            }
            (TrailerName, _) => return Err(H1Error::InvalidChunk("invalid trailer field name")),
            (TrailerValue, b'\r') => {
                self.trailers.end_line();
                TrailerLf
            }
            (TrailerValue, b) if b == b'\t' || b >= 0x20 && b != 0x7f => {
                self.trailers.value_byte(b);
                TrailerValue
            }
            (TrailerValue, _) => return Err(H1Error::InvalidChunk("invalid trailer field value")),
            (TrailerLf, b'\n') => TrailerStart,
            (EndLf, b'\n') => {
                self.trailers.finish();
                Done
            }
            _ => return Err(H1Error::InvalidChunk("CR without LF")),
        };
        // The final LF completes the body and is not counted.
        if next != Done {
            self.trailers_left = self
                .trailers_left
                .checked_sub(1)
                .ok_or(H1Error::TrailersTooLarge)?;
        }
        Ok(next)
    }

    /// Counts one size-line byte that carries no size against the limit.
    fn ext(&mut self, next: State) -> Result<State, H1Error> {
        self.ext_left = self
            .ext_left
            .checked_sub(1)
            .ok_or(H1Error::ChunkExtTooLong)?;
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
