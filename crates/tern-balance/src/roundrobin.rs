//! Smooth weighted round-robin (the algorithm nginx uses, and HAProxy's `roundrobin` in effect).
//!
//! Each server carries a `current` score. On every pick, every usable server's score grows by its
//! weight, the highest score wins, and the winner's score drops by the sum of the weights. Over
//! any window of `sum(weights)` picks each server is chosen exactly `weight` times, and the picks
//! are interleaved (weights 5,1,1 give a a b a c a a, not a a a a a b c), which keeps the load on
//! each server smooth. Ties go to the lowest index, so the sequence is deterministic.
//!
//! Cost is O(servers) per pick, fine for the tens of servers a backend usually has; a tree-based
//! variant can replace it behind the same trait if a benchmark asks for it.

use crate::{Algorithm, PickContext, ServerId};

#[derive(Debug, Clone)]
struct Slot {
    weight: i64,
    current: i64,
    usable: bool,
}

/// Smooth weighted round-robin state for one backend in one worker.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    slots: Vec<Slot>,
}

impl RoundRobin {
    /// Creates the state for servers with these weights (0 = drained).
    pub fn new(weights: &[u32]) -> Self {
        let slots = weights
            .iter()
            .map(|&w| Slot {
                weight: i64::from(w),
                current: 0,
                usable: true,
            })
            .collect();
        Self { slots }
    }

    /// Creates the state advanced by `offset` picks, so that worker `i` of `n` starts at a
    /// different point of the same cycle.
    pub fn with_offset(weights: &[u32], offset: usize) -> Self {
        let mut rr = Self::new(weights);
        let total: i64 = rr.slots.iter().map(|s| s.weight).sum();
        let steps = if total > 0 {
            offset % usize::try_from(total).unwrap_or(usize::MAX)
        } else {
            0
        };
        for _ in 0..steps {
            rr.pick(&PickContext::default());
        }
        rr
    }
}

impl Algorithm for RoundRobin {
    fn pick(&mut self, _ctx: &PickContext) -> Option<ServerId> {
        let mut total = 0;
        let mut best: Option<(ServerId, i64)> = None;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if !slot.usable || slot.weight == 0 {
                continue;
            }
            slot.current += slot.weight;
            total += slot.weight;
            // Strictly greater: ties keep the lowest index.
            if best.is_none_or(|(_, score)| slot.current > score) {
                best = Some((i, slot.current));
            }
        }
        let (winner, _) = best?;
        self.slots[winner].current -= total;
        Some(winner)
    }

    fn set_weight(&mut self, server: ServerId, weight: u32) {
        if let Some(slot) = self.slots.get_mut(server) {
            slot.weight = i64::from(weight);
            slot.current = 0;
        }
    }

    fn set_usable(&mut self, server: ServerId, usable: bool) {
        if let Some(slot) = self.slots.get_mut(server) {
            slot.usable = usable;
            slot.current = 0;
        }
    }
}

#[cfg(test)]
mod tests;
