//! `static-rr`: weighted round-robin from a precomputed table, O(1) per pick.
//!
//! The whole cycle of [`RoundRobin`](crate::roundrobin) (the same smooth interleaving) is laid
//! out once in a table of `sum(weights) / gcd(weights)` entries, and a pick just reads the next
//! entry: the cheapest pick of all, for any number of servers. The price is paid on change: a new
//! weight or a health change rebuilds the table in O(sum(weights) · log n), and restarts the cycle
//! at the same position modulo its new length. Use it where weights are static and servers
//! rarely change state (HAProxy's `static-rr` ignores weight changes altogether; here weight 0
//! must still drain, so changes are applied, just not cheaply). With weights at most 256, the
//! table holds at most 256 entries per server.

use crate::exclude::{Exclude, Excluded};
use crate::roundrobin::RoundRobin;
use crate::slots::{Change, Slots};
use crate::{Algorithm, PickContext, ServerId};

/// Table-driven weighted round-robin.
#[derive(Debug, Clone)]
pub struct StaticRoundRobin {
    slots: Slots,
    table: Vec<u32>,
    position: usize,
    /// Servers in the table.
    live: usize,
    excluded: Excluded,
}

impl StaticRoundRobin {
    /// Creates the table for servers with these weights, starting `offset` picks into the cycle.
    pub fn new(weights: &[u32], offset: usize) -> Self {
        let mut rr = Self {
            slots: Slots::new(weights),
            table: Vec::new(),
            position: offset,
            live: 0,
            excluded: Excluded::default(),
        };
        rr.rebuild();
        rr
    }

    fn rebuild(&mut self) {
        self.table = smooth_table(&self.slots.effective_weights().collect::<Vec<_>>());
        self.live = self.slots.effective_weights().filter(|&w| w > 0).count();
        self.position = match self.table.len() {
            0 => 0,
            n => self.position % n,
        };
    }

    fn apply(&mut self, change: Option<Change>) {
        if change.is_some_and(Change::changed) {
            self.rebuild();
        }
    }
}

/// One smooth round-robin cycle over `weights` divided by their gcd.
pub(crate) fn smooth_table(weights: &[u32]) -> Vec<u32> {
    let divisor = weights.iter().fold(0, |g, &w| gcd(g, w)).max(1);
    let reduced: Vec<u32> = weights.iter().map(|&w| w / divisor).collect();
    let total: usize = reduced.iter().map(|&w| w as usize).sum();
    let mut rr = RoundRobin::new(&reduced);
    let ctx = PickContext::default();
    (0..total)
        .filter_map(|_| rr.pick(&ctx))
        .filter_map(|s| u32::try_from(s).ok())
        .collect()
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl StaticRoundRobin {
    /// The next table entry of a server not excluded; the entries skipped are used up.
    fn pick_excluding(&mut self) -> Option<ServerId> {
        if self.excluded.len() >= self.live {
            return None;
        }
        for _ in 0..self.table.len() {
            let server = *self.table.get(self.position)? as ServerId;
            self.position = (self.position + 1) % self.table.len();
            if !self.excluded.contains(server) {
                return Some(server);
            }
        }
        None
    }
}

impl Exclude for StaticRoundRobin {
    fn exclude(&mut self, server: ServerId) {
        self.excluded.insert(server);
    }

    fn restore(&mut self) {
        self.excluded.clear_each(|_| {});
    }
}

impl Algorithm for StaticRoundRobin {
    fn pick(&mut self, _ctx: &PickContext<'_>) -> Option<ServerId> {
        if !self.excluded.is_empty() {
            return self.pick_excluding();
        }
        let server = *self.table.get(self.position)?;
        self.position += 1;
        if self.position == self.table.len() {
            self.position = 0;
        }
        Some(server as ServerId)
    }

    fn set_weight(&mut self, server: ServerId, weight: u32) {
        let change = self.slots.set_weight(server, weight);
        self.apply(change);
    }

    fn set_usable(&mut self, server: ServerId, usable: bool) {
        let change = self.slots.set_usable(server, usable);
        self.apply(change);
    }
}

#[cfg(test)]
mod tests;
