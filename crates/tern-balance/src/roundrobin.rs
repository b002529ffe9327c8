//! `roundrobin`: smooth weighted round-robin in O(log n) per pick, weights changeable at runtime.
//!
//! Each usable server owns a sequence of virtual deadlines spaced `1 / weight` apart, the first
//! half a step in: `1/2w, 3/2w, 5/2w, ...`. A pick takes the server with the earliest deadline
//! (ties to the lowest index) and moves it one step on. Over the virtual interval `(t, t + 1]`
//! every server has exactly `weight` deadlines, and the schedule repeats with period
//! `sum(weights)` picks, so **any** window of `sum(weights)` consecutive picks gives each server
//! exactly its weight, with the picks interleaved (weights 5,1,1 give `a a a b c a a`, never
//! `a a a a a b c`): this is the smoothness of nginx's smooth weighted round-robin, whose plain
//! form costs O(n) per pick.
//!
//! Deadlines are kept as exact fractions `num / 2w` (compared by cross-multiplication in 128
//! bits), so no rounding ever drifts the shares. The servers sit in an indexed binary heap
//! (`IndexedHeap`) keyed by their next deadline: a pick is one sift-down, O(log n), with no
//! allocation.
//!
//! A server whose weight changes, or that comes back up, rejoins at its first deadline after the
//! current virtual time (at most half a step of its new weight away), so it neither gets a burst
//! to catch up nor waits a whole cycle; a drained or down server leaves the heap.

use std::cmp::Ordering;

use crate::exclude::Exclude;
use crate::heap::IndexedHeap;
use crate::slots::{Change, Slots};
use crate::{Algorithm, PickContext, ServerId};

/// A server's next deadline, `num / (2 * weight)`, weight non-zero.
#[derive(Debug, Clone, Copy)]
struct Deadline {
    num: u64,
    weight: u32,
}

impl Ord for Deadline {
    fn cmp(&self, other: &Self) -> Ordering {
        let a = u128::from(self.num) * u128::from(other.weight);
        let b = u128::from(other.num) * u128::from(self.weight);
        a.cmp(&b)
    }
}
impl PartialOrd for Deadline {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Deadline {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Deadline {}

/// Smooth weighted round-robin state for one backend in one worker.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    slots: Slots,
    heap: IndexedHeap<Deadline>,
    /// The virtual time of the last pick (time 0 before the first).
    now: Deadline,
    /// Excluded servers and their deadlines before the refused pick.
    excluded: Vec<(ServerId, Deadline)>,
}

impl RoundRobin {
    /// Creates the state for servers with these weights (0 = drained).
    pub fn new(weights: &[u32]) -> Self {
        let mut rr = Self {
            slots: Slots::new(weights),
            heap: IndexedHeap::new(weights.len()),
            now: Deadline { num: 0, weight: 1 },
            excluded: Vec::new(),
        };
        for i in 0..weights.len() {
            rr.join(i);
        }
        rr
    }

    /// Creates the state advanced by `offset` picks, so that worker `i` of `n` starts at a
    /// different point of the same cycle.
    pub fn with_offset(weights: &[u32], offset: usize) -> Self {
        let mut rr = Self::new(weights);
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let steps = if total > 0 {
            (offset as u64) % total
        } else {
            0
        };
        for _ in 0..steps {
            rr.pick(&PickContext::default());
        }
        rr
    }

    /// Puts an eligible server in the heap at its first deadline after the current time, or
    /// takes an ineligible one out.
    fn join(&mut self, server: ServerId) {
        let weight = self.slots.effective(server);
        if weight == 0 {
            self.heap.remove(server);
            return;
        }
        // Smallest num with num / 2w > now.num / 2 now.weight, i.e. num > now.num * w / now.weight.
        let scaled = u128::from(self.now.num) * u128::from(weight) / u128::from(self.now.weight);
        let num = u64::try_from(scaled).unwrap_or(u64::MAX - 1) + 1;
        self.heap.set(server, Deadline { num, weight });
    }

    fn apply(&mut self, server: ServerId, change: Option<Change>) {
        if change.is_some_and(Change::changed) {
            self.join(server);
        }
    }
}

impl Exclude for RoundRobin {
    /// The refused pick moved the server one step on; it goes back to the deadline it had, so
    /// it keeps its turn for the next pick, and the others keep theirs.
    fn exclude(&mut self, server: ServerId) {
        if let Some(next) = self.heap.key(server) {
            self.heap.remove(server);
            let before = Deadline {
                num: next.num.saturating_sub(2),
                weight: next.weight,
            };
            self.excluded.push((server, before));
        }
    }

    fn restore(&mut self) {
        let Self { heap, excluded, .. } = self;
        for (server, deadline) in excluded.drain(..) {
            heap.set(server, deadline);
        }
    }
}

impl Algorithm for RoundRobin {
    fn pick(&mut self, _ctx: &PickContext<'_>) -> Option<ServerId> {
        let (deadline, server) = self.heap.peek()?;
        self.now = deadline;
        // Next deadline one step (2 in units of 1/2w) on.
        self.heap.replace_top(Deadline {
            num: deadline.num.saturating_add(2),
            weight: deadline.weight,
        });
        Some(server)
    }

    fn set_weight(&mut self, server: ServerId, weight: u32) {
        let change = self.slots.set_weight(server, weight);
        self.apply(server, change);
    }

    fn set_usable(&mut self, server: ServerId, usable: bool) {
        let change = self.slots.set_usable(server, usable);
        self.apply(server, change);
    }
}

#[cfg(test)]
mod tests;
