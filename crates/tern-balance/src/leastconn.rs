//! `leastconn`: the server with the fewest in-flight streams per unit of weight, ties broken
//! round-robin, in O(log n).
//!
//! Eligible servers sit in an indexed binary heap (`IndexedHeap`) keyed by
//! `(in_flight / weight, sequence)`: the ratio is compared exactly by cross-multiplication, and
//! the sequence number is taken afresh whenever a server's key changes, so among servers with
//! equal load the one that changed longest ago comes first: a server that just took a stream goes
//! to the back of its group, which is round-robin among equals. A pick reads the top;
//! [`Algorithm::on_start`] and [`Algorithm::on_finish`] re-sift one server, O(log n), without
//! allocating. No pick scans the servers, so a thousand servers cost about what ten do.
//!
//! The load is `in_flight / weight`, not `(in_flight + 1) / weight`: the pick never goes to a
//! server that is, right now, more loaded per unit of weight than another eligible one. At low
//! load this spreads evenly whatever the weights (every idle server ties at 0); weights matter
//! once streams pile up. Picking does not count the stream: call `on_start` for it, or repeated
//! picks return the same server.

use std::cmp::Ordering;

use crate::exclude::Exclude;
use crate::heap::IndexedHeap;
use crate::slots::{cmp_ratio, Slots};
use crate::{Algorithm, PickContext, ServerId};

/// A server's place in the order.
#[derive(Debug, Clone, Copy)]
struct Key {
    inflight: u32,
    weight: u32,
    sequence: u64,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_ratio(self.inflight, self.weight, other.inflight, other.weight)
            .then(self.sequence.cmp(&other.sequence))
    }
}

/// Weighted least-connections state.
#[derive(Debug, Clone)]
pub struct LeastConn {
    slots: Slots,
    order: IndexedHeap<Key>,
    next_sequence: u64,
    /// Excluded servers and their keys.
    excluded: Vec<(ServerId, Key)>,
}

impl LeastConn {
    /// Creates the state for servers with these weights, nothing in flight.
    pub fn new(weights: &[u32]) -> Self {
        let mut lc = Self {
            slots: Slots::new(weights),
            order: IndexedHeap::new(weights.len()),
            next_sequence: 0,
            excluded: Vec::new(),
        };
        for i in 0..weights.len() {
            lc.reposition(i);
        }
        lc
    }

    /// Streams in flight on `server`.
    pub fn inflight(&self, server: ServerId) -> u32 {
        self.slots.inflight(server)
    }

    /// Puts `server` (if eligible) under its current load, behind every server of equal load;
    /// takes it out otherwise.
    fn reposition(&mut self, server: ServerId) {
        let weight = self.slots.effective(server);
        if weight == 0 {
            self.order.remove(server);
            return;
        }
        let key = Key {
            inflight: self.slots.inflight(server),
            weight,
            sequence: self.next_sequence,
        };
        self.next_sequence += 1;
        self.order.set(server, key);
    }
}

impl Exclude for LeastConn {
    fn exclude(&mut self, server: ServerId) {
        if let Some(key) = self.order.key(server) {
            self.order.remove(server);
            self.excluded.push((server, key));
        }
    }

    /// Same keys, same sequence numbers: the order is exactly as before.
    fn restore(&mut self) {
        let Self {
            order, excluded, ..
        } = self;
        for (server, key) in excluded.drain(..) {
            order.set(server, key);
        }
    }
}

impl Algorithm for LeastConn {
    fn pick(&mut self, _ctx: &PickContext<'_>) -> Option<ServerId> {
        self.order.peek().map(|(_, server)| server)
    }

    fn set_weight(&mut self, server: ServerId, weight: u32) {
        if self
            .slots
            .set_weight(server, weight)
            .is_some_and(|c| c.changed())
        {
            self.reposition(server);
        }
    }

    fn set_usable(&mut self, server: ServerId, usable: bool) {
        if self
            .slots
            .set_usable(server, usable)
            .is_some_and(|c| c.changed())
        {
            self.reposition(server);
        }
    }

    fn on_start(&mut self, server: ServerId) {
        if self.slots.start(server).is_some() {
            self.reposition(server);
        }
    }

    fn on_finish(&mut self, server: ServerId) {
        if self.slots.finish(server).is_some() {
            self.reposition(server);
        }
    }
}

#[cfg(test)]
mod tests;
