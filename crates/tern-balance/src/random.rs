//! `random(N)`: the power of N choices. Draw N servers at random in proportion to their weights
//! and keep the least loaded (fewest in flight per unit of weight; ties to the earlier draw).
//!
//! One draw is plain weighted random; two draws (the default, as in HAProxy 3.3+) already cut the
//! maximum load exponentially compared with one, without the herd effect of a global
//! least-connections choice when many balancers share servers. Draws come from a Fenwick tree
//! over the effective weights (O(log n) per draw, O(log n) per weight change) and a seeded
//! SplitMix64 generator, so a run replays from its seed. A drained or down server has an empty
//! interval in the tree and is never drawn.

use crate::exclude::{Exclude, Excluded};
use crate::fenwick::Fenwick;
use crate::rng::Rng;
use crate::slots::{cmp_ratio, Slots};
use crate::{Algorithm, PickContext, ServerId};

/// Default number of draws.
pub const DEFAULT_DRAWS: u32 = 2;

/// Power-of-N-choices state.
#[derive(Debug, Clone)]
pub struct Random {
    slots: Slots,
    tree: Fenwick,
    rng: Rng,
    draws: u32,
    excluded: Excluded,
}

impl Random {
    /// Creates the state for servers with these weights; `draws` is at least 1.
    pub fn new(weights: &[u32], draws: u32, seed: u64) -> Self {
        Self {
            slots: Slots::new(weights),
            tree: Fenwick::new(weights.iter().copied()),
            rng: Rng::new(seed),
            draws: draws.max(1),
            excluded: Excluded::default(),
        }
    }

    /// Streams in flight on `server`.
    pub fn inflight(&self, server: ServerId) -> u32 {
        self.slots.inflight(server)
    }

    /// One weighted draw; the tree total must be non-zero.
    fn draw(&mut self) -> ServerId {
        let r = self.rng.below(self.tree.total());
        self.tree.find(r)
    }

    fn refresh(&mut self, server: ServerId) {
        self.tree.set(server, self.slots.effective(server));
    }
}

impl Exclude for Random {
    fn exclude(&mut self, server: ServerId) {
        self.tree.set(server, 0);
        self.excluded.insert(server);
    }

    fn restore(&mut self) {
        let Self {
            excluded,
            tree,
            slots,
            ..
        } = self;
        excluded.clear_each(|s| tree.set(s, slots.effective(s)));
    }
}

impl Algorithm for Random {
    fn pick(&mut self, _ctx: &PickContext<'_>) -> Option<ServerId> {
        if self.tree.total() == 0 {
            return None;
        }
        let mut best = self.draw();
        for _ in 1..self.draws {
            let other = self.draw();
            let (a, b) = (&self.slots, best);
            if cmp_ratio(
                a.inflight(other),
                a.effective(other),
                a.inflight(b),
                a.effective(b),
            )
            .is_lt()
            {
                best = other;
            }
        }
        Some(best)
    }

    fn set_weight(&mut self, server: ServerId, weight: u32) {
        if self.slots.set_weight(server, weight).is_some() {
            self.refresh(server);
        }
    }

    fn set_usable(&mut self, server: ServerId, usable: bool) {
        if self.slots.set_usable(server, usable).is_some() {
            self.refresh(server);
        }
    }

    fn on_start(&mut self, server: ServerId) {
        self.slots.start(server);
    }

    fn on_finish(&mut self, server: ServerId) {
        self.slots.finish(server);
    }
}

#[cfg(test)]
mod tests;
