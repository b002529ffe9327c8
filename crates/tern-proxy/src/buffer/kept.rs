//! Memory of ended sessions and exchanges, kept by a worker for the next ones.
//!
//! Allocating and zeroing a read buffer per HTTP/2 stream was among the largest costs under
//! h2load (`memset`, `malloc`), so ended sessions hand their buffers back and new ones take them
//! (most recently used first, still warm in the cache). How many to keep is a trade: a cap at
//! the usual number of streams in flight would have every burst above it allocate again, while
//! a high cap alone would hold a burst's memory for ever. So the cap is high and the list
//! decays: each [`Kept::sweep`] (the worker's one-second tick) frees half of the entries that no
//! one took since the previous sweep, and a worker whose traffic stopped returns its memory
//! within seconds.

use std::cell::{Cell, RefCell};

/// A bounded, decaying list of reusable values.
#[derive(Debug)]
pub(crate) struct Kept<T> {
    /// The values, the most recently given last (taken first).
    list: RefCell<Vec<T>>,
    /// The fewest values the list held since the last sweep: that many were not needed.
    unused: Cell<usize>,
    max: usize,
}

impl<T> Kept<T> {
    /// An empty list that keeps up to `max` values.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            list: RefCell::new(Vec::new()),
            unused: Cell::new(0),
            max,
        }
    }

    /// The most recently given value, if any.
    pub(crate) fn take(&self) -> Option<T> {
        let mut list = self.list.borrow_mut();
        let value = list.pop();
        self.unused.set(self.unused.get().min(list.len()));
        value
    }

    /// Keeps `value` unless the list is full (then it is dropped).
    pub(crate) fn give(&self, value: T) {
        let mut list = self.list.borrow_mut();
        if list.len() < self.max {
            list.push(value);
        }
    }

    /// Frees half of the values no one needed since the last sweep (the least recently given).
    pub(crate) fn sweep(&self) {
        let mut list = self.list.borrow_mut();
        let spare = self.unused.get().min(list.len());
        list.drain(..spare.div_ceil(2));
        self.unused.set(list.len());
    }

    /// Frees everything (the worker is stopping).
    pub(crate) fn clear(&self) {
        self.list.borrow_mut().clear();
        self.unused.set(0);
    }

    /// How many values are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.list.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_last_given_and_drops_beyond_the_cap() {
        let kept = Kept::new(2);
        kept.give(1);
        kept.give(2);
        kept.give(3);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept.take(), Some(2));
        assert_eq!(kept.take(), Some(1));
        assert_eq!(kept.take(), None);
    }

    #[test]
    fn sweeps_free_half_of_what_was_not_needed() {
        let kept = Kept::new(100);
        (0..8).for_each(|v| kept.give(v));
        kept.sweep(); // the first sweep only starts the count
        assert_eq!(kept.len(), 8);
        // Two taken and given back: six were not needed; three go, the oldest.
        let (a, b) = (kept.take(), kept.take());
        kept.give(b.unwrap_or_default());
        kept.give(a.unwrap_or_default());
        kept.sweep();
        assert_eq!(kept.len(), 5);
        assert_eq!(kept.take(), Some(7), "the most recent stay");
        // No traffic: the list empties within a few sweeps.
        (0..4).for_each(|_| kept.sweep());
        assert_eq!(kept.len(), 0);
    }
}
