//! `first`: fill servers in their configured order, each up to its `maxconn`.
//!
//! The first eligible server with a free slot gets the stream, so traffic concentrates on as few
//! servers as possible and the others can be powered down or left idle (HAProxy's `first`, meant
//! for elastic pools). A server without a `maxconn` (0) never fills, so everything goes to the
//! first eligible one. Weights only matter as 0 = drained.
//!
//! Servers with a free slot are kept in an ordered set of indices; a pick reads its first
//! element and a start or finish that crosses `maxconn` inserts or removes one index: O(log n)
//! each, with no scan. When every eligible server is full the pick is `None`; the caller queues
//! or refuses (the [`Balancer`](crate::Balancer) reports this as [`NoServer::Full`](crate::NoServer)).

use std::collections::BTreeSet;

use crate::exclude::Exclude;
use crate::slots::Slots;
use crate::{Algorithm, PickContext, ServerId};

/// Fill-in-order state.
#[derive(Debug, Clone)]
pub struct First {
    slots: Slots,
    /// Per-server connection limit; 0 = unlimited.
    maxconn: Vec<u32>,
    /// Eligible servers below their limit.
    open: BTreeSet<u32>,
    excluded: Vec<ServerId>,
}

impl First {
    /// Creates the state for servers with these weights and `maxconn` limits (0 = none; a
    /// missing entry counts as 0).
    pub fn new(weights: &[u32], maxconn: &[u32]) -> Self {
        let mut first = Self {
            slots: Slots::new(weights),
            maxconn: (0..weights.len())
                .map(|i| maxconn.get(i).copied().unwrap_or(0))
                .collect(),
            open: BTreeSet::new(),
            excluded: Vec::new(),
        };
        for i in 0..weights.len() {
            first.update(i);
        }
        first
    }

    /// Streams in flight on `server`.
    pub fn inflight(&self, server: ServerId) -> u32 {
        self.slots.inflight(server)
    }

    /// Whether the server may take one more stream.
    fn has_room(&self, server: ServerId) -> bool {
        let limit = self.maxconn.get(server).copied().unwrap_or(0);
        self.slots.eligible(server) && (limit == 0 || self.slots.inflight(server) < limit)
    }

    fn update(&mut self, server: ServerId) {
        let Ok(index) = u32::try_from(server) else {
            return;
        };
        if self.has_room(server) {
            self.open.insert(index);
        } else {
            self.open.remove(&index);
        }
    }
}

impl Exclude for First {
    fn exclude(&mut self, server: ServerId) {
        if let Ok(index) = u32::try_from(server) {
            self.open.remove(&index);
            self.excluded.push(server);
        }
    }

    fn restore(&mut self) {
        while let Some(server) = self.excluded.pop() {
            self.update(server);
        }
    }
}

impl Algorithm for First {
    fn pick(&mut self, _ctx: &PickContext<'_>) -> Option<ServerId> {
        self.open.first().map(|&s| s as ServerId)
    }

    fn set_weight(&mut self, server: ServerId, weight: u32) {
        if self.slots.set_weight(server, weight).is_some() {
            self.update(server);
        }
    }

    fn set_usable(&mut self, server: ServerId, usable: bool) {
        if self.slots.set_usable(server, usable).is_some() {
            self.update(server);
        }
    }

    fn on_start(&mut self, server: ServerId) {
        if self.slots.start(server).is_some() {
            self.update(server);
        }
    }

    fn on_finish(&mut self, server: ServerId) {
        if self.slots.finish(server).is_some() {
            self.update(server);
        }
    }
}

#[cfg(test)]
mod tests;
