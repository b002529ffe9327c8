//! Per-server state that every algorithm keeps the same way: the configured weight, whether the
//! server is usable (health), and how many streams it has in flight.
//!
//! Algorithms care about the *effective* weight (the weight if usable, else 0): a change of
//! either input is reported as the effective weight before and after, so each algorithm updates
//! its own index (heap, tree, ring, table) in one place.

use crate::ServerId;

/// Effective weight before and after a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Change {
    pub before: u32,
    pub after: u32,
}

impl Change {
    /// Whether the effective weight actually changed.
    pub(crate) fn changed(self) -> bool {
        self.before != self.after
    }
}

/// Weights, health and in-flight counts of the servers of one algorithm instance.
#[derive(Debug, Clone)]
pub(crate) struct Slots {
    weight: Vec<u32>,
    usable: Vec<bool>,
    inflight: Vec<u32>,
}

impl Slots {
    /// All servers usable, nothing in flight.
    pub(crate) fn new(weights: &[u32]) -> Self {
        Self {
            weight: weights.to_vec(),
            usable: vec![true; weights.len()],
            inflight: vec![0; weights.len()],
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.weight.len()
    }

    /// The weight if the server is usable, else 0; 0 for an unknown id.
    pub(crate) fn effective(&self, server: ServerId) -> u32 {
        match (self.weight.get(server), self.usable.get(server)) {
            (Some(&w), Some(true)) => w,
            _ => 0,
        }
    }

    /// Whether the server may be picked (usable and not drained).
    pub(crate) fn eligible(&self, server: ServerId) -> bool {
        self.effective(server) > 0
    }

    /// Streams in flight on the server (0 for an unknown id).
    pub(crate) fn inflight(&self, server: ServerId) -> u32 {
        self.inflight.get(server).copied().unwrap_or(0)
    }

    /// Effective weights of all servers, in order.
    pub(crate) fn effective_weights(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.effective(i))
    }

    /// Sets the configured weight; `None` for an unknown id.
    pub(crate) fn set_weight(&mut self, server: ServerId, weight: u32) -> Option<Change> {
        let before = self.effective(server);
        *self.weight.get_mut(server)? = weight;
        Some(Change {
            before,
            after: self.effective(server),
        })
    }

    /// Sets the health flag; `None` for an unknown id.
    pub(crate) fn set_usable(&mut self, server: ServerId, usable: bool) -> Option<Change> {
        let before = self.effective(server);
        *self.usable.get_mut(server)? = usable;
        Some(Change {
            before,
            after: self.effective(server),
        })
    }

    /// Counts a stream in; returns the new count, `None` for an unknown id.
    pub(crate) fn start(&mut self, server: ServerId) -> Option<u32> {
        let n = self.inflight.get_mut(server)?;
        *n = n.saturating_add(1);
        Some(*n)
    }

    /// Counts a stream out (never below 0); returns the new count, `None` for an unknown id.
    pub(crate) fn finish(&mut self, server: ServerId) -> Option<u32> {
        let n = self.inflight.get_mut(server)?;
        *n = n.saturating_sub(1);
        Some(*n)
    }
}

/// `a_load / a_weight` compared with `b_load / b_weight`, exactly (weights must be non-zero).
pub(crate) fn cmp_ratio(
    a_load: u32,
    a_weight: u32,
    b_load: u32,
    b_weight: u32,
) -> std::cmp::Ordering {
    (u64::from(a_load) * u64::from(b_weight)).cmp(&(u64::from(b_load) * u64::from(a_weight)))
}

#[cfg(test)]
mod tests;
