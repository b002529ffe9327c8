//! The small value types every part of the codec shares: [`Span`] (where something is in the
//! read buffer), [`Version`], [`Method`] and the parse [`Status`].
//!
//! A span is two `u32` offsets rather than a `Range<usize>`: it is `Copy`, half the size (a
//! field is two spans, and a head keeps up to `max_headers` of them), and every head the codec
//! accepts is smaller than 4 GiB because parsing looks at no more than `max_head_size` bytes.

use std::ops::Range;

/// A byte range in the buffer a head was parsed from (offsets from its first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// The empty span at offset 0.
    pub const EMPTY: Span = Span { start: 0, end: 0 };

    /// A span from offsets; both are clamped to `u32::MAX` and `end` to at least `start`.
    pub(crate) fn new(start: usize, end: usize) -> Span {
        let start = u32::try_from(start).unwrap_or(u32::MAX);
        let end = u32::try_from(end).unwrap_or(u32::MAX).max(start);
        Span { start, end }
    }

    /// Where `part` lies in `base`, by address; [`Span::EMPTY`] when `part` is not inside
    /// `base` (httparse returns a static `""` for some empty values).
    pub(crate) fn of(base: &[u8], part: &[u8]) -> Span {
        let b = base.as_ptr().addr();
        let p = part.as_ptr().addr();
        match p.checked_sub(b) {
            Some(start) if start + part.len() <= base.len() => Span::new(start, start + part.len()),
            _ => Span::EMPTY,
        }
    }

    /// First offset.
    pub fn start(self) -> usize {
        self.start as usize
    }

    /// One past the last offset.
    pub fn end(self) -> usize {
        self.end as usize
    }

    /// Length in bytes.
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the span covers no byte.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The span as a range.
    pub fn range(self) -> Range<usize> {
        self.start()..self.end()
    }

    /// The bytes of the span in `buf` (the buffer the head was parsed from); empty when the
    /// span does not fit `buf`, so a wrong buffer gives wrong bytes, never a panic.
    pub fn get(self, buf: &[u8]) -> &[u8] {
        buf.get(self.range()).unwrap_or(&[])
    }

    /// The sub-span `from..to`, relative to this span's start (clamped to it).
    pub(crate) fn sub(self, from: usize, to: usize) -> Span {
        let len = self.len();
        Span::new(
            self.start() + from.min(len),
            self.start() + to.min(len).max(from.min(len)),
        )
    }
}

/// Spaces and tabs: optional whitespace around field values and list elements.
pub(crate) fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// A set of bytes as a lookup table: one load per byte instead of a search in a list.
pub(crate) struct ByteSet([bool; 256]);

impl ByteSet {
    /// Alphanumerics plus `extra`.
    pub(crate) const fn alnum_and(extra: &[u8]) -> ByteSet {
        let mut t = ByteSet::of(extra).0;
        let mut b = 0;
        while b < 256 {
            t[b] |= (b as u8).is_ascii_alphanumeric();
            b += 1;
        }
        ByteSet(t)
    }

    /// Exactly the bytes of `set`.
    pub(crate) const fn of(set: &[u8]) -> ByteSet {
        let mut t = [false; 256];
        let mut i = 0;
        while i < set.len() {
            t[set[i] as usize] = true;
            i += 1;
        }
        ByteSet(t)
    }

    pub(crate) fn has(&self, b: u8) -> bool {
        self.0[b as usize]
    }
}

/// `tchar` of RFC 9110 §5.6.2: the characters of a token (a field name, a method, a coding).
static TCHAR: ByteSet = ByteSet::alnum_and(b"!#$%&'*+-.^_`|~");

pub(crate) fn is_tchar(b: u8) -> bool {
    TCHAR.has(b)
}

/// The HTTP version of a message. Only 1.0 and 1.1 exist on the wire; anything else is a
/// malformed head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Version {
    /// HTTP/1.0: no persistent connections unless asked for, no chunked coding.
    Http10,
    /// HTTP/1.1.
    #[default]
    Http11,
}

impl Version {
    pub(crate) fn from_minor(minor: u8) -> Version {
        if minor == 0 {
            Version::Http10
        } else {
            Version::Http11
        }
    }

    /// `HTTP/1.0` or `HTTP/1.1`.
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            Version::Http10 => b"HTTP/1.0",
            Version::Http11 => b"HTTP/1.1",
        }
    }
}

/// A request method: the standard ones by name (RFC 9110 §9.3, RFC 5789), any other token by
/// its span. Methods are case-sensitive: `get` is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    #[default]
    Get,
    Head,
    Post,
    Put,
    Delete,
    Connect,
    Options,
    Trace,
    Patch,
    /// Any other token, with where it is in the buffer.
    Other(Span),
}

impl Method {
    pub(crate) fn from_token(token: &[u8], span: Span) -> Method {
        match token {
            b"GET" => Method::Get,
            b"HEAD" => Method::Head,
            b"POST" => Method::Post,
            b"PUT" => Method::Put,
            b"DELETE" => Method::Delete,
            b"CONNECT" => Method::Connect,
            b"OPTIONS" => Method::Options,
            b"TRACE" => Method::Trace,
            b"PATCH" => Method::Patch,
            _ => Method::Other(span),
        }
    }
}

/// The outcome of parsing a head that was not refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The head is complete and this many bytes long (the body, if any, starts there).
    Complete(usize),
    /// More bytes are needed.
    Partial,
}

#[cfg(test)]
mod tests;
