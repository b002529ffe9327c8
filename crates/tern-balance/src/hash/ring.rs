//! The consistent-hash ring, with optional bounded load.
//!
//! Each eligible server owns `effective_weight × k` points at pseudo-random positions derived
//! from its stable id (not its index), kept sorted. A key belongs to the first point at or after
//! its hash, wrapping around. Since a server's points depend only on its own id and weight,
//! taking one server away leaves every other point where it was: only the keys of the removed
//! server move, spread over the others in proportion to their points. `k` is 100 points per unit
//! of weight (a share accurate to about 10%), lowered for large backends so that the ring stays
//! near 128 Ki points (1 MiB), and never below 1.
//!
//! Finding the first point at or after a hash is a binary search over up to 128 Ki points, which
//! misses the cache at every level on a large ring. A bucket index avoids it: the top bits of the
//! hash select one of about `points / 2` buckets, each holding the position of its first point, so
//! a lookup reads one index entry and scans about two points, O(1) expected.
//!
//! Bounded load (Mirrokni, Thorup and Zadimoghaddam's consistent hashing with bounded loads, as
//! in HAProxy's `hash-balance-factor`): with `T` streams in flight over eligible servers of total
//! weight `W`, a server of weight `w` may take the next stream only while its own count is below
//! `(T + 1) × factor / 100 × w / W` (always when idle). The walk from the key's point skips
//! servers at their bound. With a factor above 100 the bounds add up to more than `T + 1`, so some
//! server always has room and the walk ends; it is O(points) in the worst case, but in practice
//! only a few hot servers are skipped.

use crate::exclude::Excluded;
use crate::rng::mix64;
use crate::slots::Slots;
use crate::ServerId;

/// Points per unit of weight on a small ring.
const POINTS_PER_WEIGHT: u64 = 100;
/// Target ring size from which fewer points per unit of weight are used.
const RING_TARGET: u64 = 1 << 17;
/// Hard limit: beyond it (weights raised far above the configured ones) points are thinned.
const RING_LIMIT: u64 = 1 << 21;

/// One virtual node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Point {
    hash: u32,
    server: u32,
}

/// A consistent-hash ring over one tier's servers.
#[derive(Debug, Clone)]
pub struct Ring {
    points: Vec<Point>,
    /// `buckets[k]`: position of the first point whose hash has top bits `k`.
    buckets: Vec<u32>,
    /// Right shift taking a 32-bit hash to its bucket number.
    shift: u32,
    ids: Vec<u64>,
    per_weight: u64,
    /// 0 = unbounded, else the load factor in percent.
    factor: u32,
    /// Sum of the effective weights at the last rebuild.
    total_weight: u64,
}

impl Ring {
    /// An empty ring for servers with these ids; the points per unit of weight are chosen from
    /// the configured `weights`. Call [`Ring::rebuild`] to place the points.
    pub(crate) fn new(ids: Vec<u64>, weights: &[u32], factor: u32) -> Self {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let per_weight = (RING_TARGET / total.max(1)).clamp(1, POINTS_PER_WEIGHT);
        Self {
            points: Vec::new(),
            buckets: Vec::new(),
            shift: 32,
            ids,
            per_weight,
            factor,
            total_weight: 0,
        }
    }

    /// Places every eligible server's points.
    pub(crate) fn rebuild(&mut self, slots: &Slots) {
        let total: u64 = slots.effective_weights().map(u64::from).sum();
        self.total_weight = total;
        let per_weight = if total * self.per_weight > RING_LIMIT {
            (RING_LIMIT / total.max(1)).max(1)
        } else {
            self.per_weight
        };
        self.points.clear();
        for (server, &id) in self.ids.iter().enumerate() {
            let Ok(index) = u32::try_from(server) else {
                break;
            };
            let base = mix64(id);
            let count = u64::from(slots.effective(server)) * per_weight;
            self.points.extend((0..count).map(|j| Point {
                hash: (mix64(base ^ j) >> 32) as u32,
                server: index,
            }));
        }
        self.points.sort_unstable();
        self.index();
    }

    /// Builds the bucket index: about two points per bucket, a power of two of buckets.
    fn index(&mut self) {
        let bits = (self.points.len() / 2).max(1).ilog2().min(24);
        self.shift = 32 - bits;
        self.buckets.clear();
        let mut at = 0usize;
        for k in 0..1u64 << bits {
            let floor = k << self.shift;
            while at < self.points.len() && u64::from(self.points[at].hash) < floor {
                at += 1;
            }
            // A ring of 2^32 points (32 GiB) cannot be built, so this never saturates.
            self.buckets.push(u32::try_from(at).unwrap_or(u32::MAX));
        }
    }

    /// Position of the first point at or after `target` (wrapping to 0).
    fn first_at_or_after(&self, target: u32) -> usize {
        let k = (u64::from(target) >> self.shift) as usize;
        let lo = self.buckets.get(k).map_or(0, |&b| b as usize);
        let hi = self
            .buckets
            .get(k + 1)
            .map_or(self.points.len(), |&b| b as usize);
        let within = self.points[lo..hi].partition_point(|p| p.hash < target);
        // Every point of later buckets is above target, so `lo + within` is the answer.
        (lo + within) % self.points.len().max(1)
    }

    /// Number of points on the ring.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the ring has no point (no eligible server).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The server for a key hash, skipping servers at their load bound. `total_load` is the
    /// number of streams in flight over eligible servers.
    pub(crate) fn lookup(&self, hash: u64, slots: &Slots, total_load: u64) -> Option<ServerId> {
        let len = self.points.len();
        let target = (hash >> 32) as u32;
        let start = self.first_at_or_after(target);
        let owner = self.points.get(start)?.server as ServerId;
        if self.factor == 0 {
            return Some(owner);
        }
        (0..len)
            .map(|k| self.points[(start + k) % len].server as ServerId)
            .find(|&s| has_room(slots, s, total_load, self.total_weight, self.factor))
            .or(Some(owner))
    }
}

impl Ring {
    /// [`Ring::lookup`] skipping the excluded servers: the first point from the key's of a
    /// server not excluded (and, with bounded load, below its bound if any is).
    pub(crate) fn lookup_excluding(
        &self,
        hash: u64,
        slots: &Slots,
        total_load: u64,
        excluded: &Excluded,
    ) -> Option<ServerId> {
        let len = self.points.len();
        let start = self.first_at_or_after((hash >> 32) as u32);
        let mut first_allowed = None;
        for k in 0..len {
            let server = self.points[(start + k) % len].server as ServerId;
            if excluded.contains(server) {
                continue;
            }
            if self.factor == 0
                || has_room(slots, server, total_load, self.total_weight, self.factor)
            {
                return Some(server);
            }
            first_allowed.get_or_insert(server);
        }
        first_allowed
    }
}

/// Whether `server` is below its bound: `load < (total + 1) × factor × w / (100 × W)`.
pub(crate) fn has_room(
    slots: &Slots,
    server: ServerId,
    total: u64,
    weights: u64,
    factor: u32,
) -> bool {
    let load = u128::from(slots.inflight(server));
    if load == 0 {
        return true;
    }
    let w = u128::from(slots.effective(server));
    load * 100 * u128::from(weights) < u128::from(total + 1) * u128::from(factor) * w
}

#[cfg(test)]
mod tests;
