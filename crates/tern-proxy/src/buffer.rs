//! The read buffer of one side of a connection: heads are parsed in place in it, bodies pass
//! through it.
//!
//! A buffer is a window `start..end` over initialised memory. Reads append at `end`; the proxy
//! consumes from `start` as bytes are forwarded or a head is handled, and once everything is
//! consumed both offsets return to 0, so the common case never copies. Bytes left after a
//! message (a pipelined request) stay in place for the next turn of the loop.
//!
//! The memory starts at a working size and grows, up to a maximum, only when one head does not
//! fit (the configured `max_head_size` may be larger than what most connections need). It is
//! zeroed once when allocated or grown: reads then go straight into it without a per-read
//! initialisation, and no `unsafe` is needed.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

mod kept;
pub(crate) use kept::Kept;

/// A growable read buffer.
#[derive(Debug)]
pub(crate) struct Buffer {
    data: Vec<u8>,
    start: usize,
    end: usize,
    max: usize,
}

impl Buffer {
    /// A buffer of `size` bytes that may grow to `max` (at least `size`).
    pub(crate) fn new(size: usize, max: usize) -> Self {
        Self {
            data: vec![0; size],
            start: 0,
            end: 0,
            max: max.max(size),
        }
    }

    /// A buffer with no memory, for a session's fields once their memory went back to the
    /// worker.
    pub(crate) fn empty() -> Self {
        Self {
            data: Vec::new(),
            start: 0,
            end: 0,
            max: 0,
        }
    }

    /// Empties the buffer for another session, which may grow it to `max`.
    pub(crate) fn reset(&mut self, max: usize) {
        self.clear();
        self.max = max.max(self.data.len());
    }

    /// The memory's size.
    pub(crate) fn capacity(&self) -> usize {
        self.data.len()
    }

    /// The bytes received and not yet consumed.
    pub(crate) fn data(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Drops `n` bytes from the front (at most what is there).
    pub(crate) fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Drops everything.
    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Makes room after `end`: moves the data to the front, or grows the memory. False when
    /// the buffer holds `max` bytes already.
    fn make_room(&mut self) -> bool {
        if self.end < self.data.len() {
            return true;
        }
        if self.start > 0 {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            return true;
        }
        if self.data.len() < self.max {
            let size = (self.data.len() * 2).clamp(1, self.max);
            self.data.resize(size, 0);
            return true;
        }
        false
    }

    /// Reads once from `io` into the free space. `Ok(0)` is end of stream; an error of kind
    /// `OutOfMemory` means the buffer is full (holds `max` bytes).
    pub(crate) fn poll_read_from<R: AsyncRead + Unpin>(
        &mut self,
        io: &mut R,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<usize>> {
        if !self.make_room() {
            return Poll::Ready(Err(io::ErrorKind::OutOfMemory.into()));
        }
        let mut rb = ReadBuf::new(&mut self.data[self.end..]);
        ready!(Pin::new(io).poll_read(cx, &mut rb))?;
        let n = rb.filled().len();
        self.end += n;
        Poll::Ready(Ok(n))
    }

    /// Appends `bytes` read elsewhere (into the stack while the connection held no buffer);
    /// false when they do not fit within `max`.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> bool {
        if self.data.len() - self.end < bytes.len() {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            let need = self.end + bytes.len();
            if need > self.max {
                return false;
            }
            if need > self.data.len() {
                self.data
                    .resize(need.next_power_of_two().clamp(need, self.max), 0);
            }
        }
        self.data[self.end..self.end + bytes.len()].copy_from_slice(bytes);
        self.end += bytes.len();
        true
    }

    /// A mutable view of the whole free space, for a synchronous read (`try_read`).
    pub(crate) fn spare(&mut self) -> &mut [u8] {
        self.make_room();
        &mut self.data[self.end..]
    }
}

#[cfg(test)]
mod tests;
