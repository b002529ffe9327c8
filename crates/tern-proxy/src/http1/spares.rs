//! The memory of ended sessions, kept by the worker for the next ones.
//!
//! A session allocates a read buffer (zeroed once, see `buffer.rs`), an output buffer and the
//! parsed head's storage. Over an HTTP/1.1 keep-alive connection that is once per many
//! requests; an HTTP/2 stream is a session of its own, so without reuse every stream would
//! allocate and zero them again (perf under h2load: `memset` and `malloc` were the largest
//! items after the kernel). Each worker keeps up to [`MAX_SPARES`] sets in a decaying list
//! ([`Kept`]): what a burst of streams returns is taken by the next burst, and the memory goes
//! back within seconds when traffic stops. Buffers that grew for a large head are not kept
//! (they go back to the allocator).

use tern_h1::RequestHead;

use crate::buffer::{Buffer, Kept};

/// Sets kept per worker, at most (each about 17 KiB): more than the streams of 16 HTTP/2
/// connections at the default `max_concurrent_streams`.
const MAX_SPARES: usize = 2048;

/// Output buffers larger than this are dropped rather than kept.
const MAX_OUT: usize = 16 * 1024;

/// One session's reusable memory.
#[derive(Debug)]
pub(crate) struct Spare {
    pub buf: Buffer,
    pub out: Vec<u8>,
    pub head: RequestHead,
}

/// The worker's kept sets.
#[derive(Debug)]
pub(crate) struct Spares(Kept<Spare>);

impl Default for Spares {
    fn default() -> Self {
        Self(Kept::new(MAX_SPARES))
    }
}

impl Spares {
    /// A set for a session whose read buffer starts at `size` bytes and may grow to `max`: a
    /// kept one (emptied), or a new one.
    pub(crate) fn take(&self, size: usize, max: usize) -> Spare {
        match self.0.take() {
            Some(mut spare) => {
                spare.buf.reset(max);
                spare.out.clear();
                spare
            }
            None => Spare {
                buf: Buffer::new(size, max),
                out: Vec::new(),
                head: RequestHead::new(),
            },
        }
    }

    /// Keeps `spare` for a later session whose read buffer starts at `size` bytes, unless
    /// enough are kept or its buffers grew.
    pub(crate) fn give(&self, spare: Spare, size: usize) {
        if spare.buf.capacity() == size && spare.out.capacity() <= MAX_OUT {
            self.0.give(spare);
        }
    }

    /// Frees some of the sets no session needed lately (the worker's periodic sweep).
    pub(crate) fn sweep(&self) {
        self.0.sweep();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_given_set_comes_back_empty_and_grown_ones_are_dropped() {
        let spares = Spares::default();
        let mut spare = spares.take(1024, 4096);
        spare.out.extend_from_slice(b"old head");
        spares.give(spare, 1024);
        let again = spares.take(1024, 8192);
        assert!(again.out.is_empty());
        assert!(again.buf.is_empty());
        assert_eq!(again.buf.capacity(), 1024);
        spares.give(
            Spare {
                buf: Buffer::new(2048, 4096),
                ..again
            },
            1024,
        );
        assert_eq!(spares.0.len(), 0, "a grown buffer is not kept");
    }
}
