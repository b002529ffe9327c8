//! Size limits that bound the work and memory one message may cost.
//!
//! Heads are bounded in bytes and in fields (the proxy answers 431 beyond either); a chunked
//! body is bounded in the bytes that carry no data: chunk extensions, which nobody uses, and
//! the trailer section. Without those two limits a client could make tern scan megabytes of
//! framing for a one-byte body.

/// The limits a parse or a body reader enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest head in bytes, request or status line included (431 / 502 beyond).
    pub max_head_size: usize,
    /// Most header fields in a head (431 / 502 beyond); at most 8192 are honoured.
    pub max_headers: usize,
    /// Most bytes of chunk extensions in one chunked body, all chunks together (as hyper).
    pub max_chunk_ext: usize,
    /// Largest trailer section of a chunked body, in bytes.
    pub max_trailer_size: usize,
}

impl Default for Limits {
    /// The configuration's defaults for heads (16 KiB, 100 fields); 16 KiB for extensions and
    /// trailers.
    fn default() -> Self {
        Limits {
            max_head_size: 16 * 1024,
            max_headers: 100,
            max_chunk_ext: 16 * 1024,
            max_trailer_size: 16 * 1024,
        }
    }
}

/// Most header fields a parse makes room for, whatever `max_headers` says: the storage is
/// allocated up front, so an absurd limit must not become an absurd allocation.
const MAX_HEADER_SLOTS: usize = 8192;

impl Limits {
    /// How many fields a head may have: `max_headers`, at most 8192.
    pub(crate) fn header_slots(&self) -> usize {
        self.max_headers.min(MAX_HEADER_SLOTS)
    }

    /// How many bytes of a buffer a head parse may look at: `max_head_size`, and never more
    /// than offsets in a [`crate::Span`] can hold.
    pub(crate) fn head_window(&self) -> usize {
        self.max_head_size.min(u32::MAX as usize)
    }
}
