//! HAProxy's `freq_ctr`: a rate over a period estimated from two counters, the events of the
//! current period and of the previous one.
//!
//! The rate at time `t` into the current period `P` is `curr + prev × (P − t) / P`: the
//! previous period's events are assumed spread evenly, and the part of it still inside the
//! sliding window `[now − P, now]` is counted. The estimate is exact for evenly spread events;
//! otherwise it is off by at most the part of the previous period's count that arrived outside
//! the window (a burst at the start of the previous period is over-counted until it leaves).
//! Periods start when the first event comes and follow on back to back; a gap of two periods
//! or more forgets everything. 12 bytes, no clock of its own.

use tern_balance::Nanos;

/// Events over a sliding period (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FreqCtr {
    /// When the current period started.
    start: Nanos,
    curr: u32,
    prev: u32,
}

impl FreqCtr {
    /// Adds `n` events at `now`.
    pub(crate) fn add(&mut self, now: Nanos, period: Nanos, n: u32) {
        self.rotate(now, period);
        self.curr = self.curr.saturating_add(n);
    }

    /// The estimated events in the last `period` at `now`.
    pub(crate) fn rate(&self, now: Nanos, period: Nanos) -> u64 {
        let mut c = *self;
        c.rotate(now, period);
        let elapsed = now.saturating_sub(c.start).min(period);
        let left = period - elapsed;
        let prev = u128::from(c.prev) * u128::from(left) / u128::from(period.max(1));
        u64::from(c.curr) + u64::try_from(prev).unwrap_or(u64::MAX)
    }

    /// The counter as HAProxy's peers send it at `now`: the milliseconds since its current
    /// period started, that period's count and the previous one's.
    pub(crate) fn to_wire(self, now: Nanos, period: Nanos) -> (u32, u32, u32) {
        let mut c = self;
        if c.start == 0 && c.curr == 0 && c.prev == 0 {
            return (0, 0, 0);
        }
        c.rotate(now, period);
        let ms = now.saturating_sub(c.start) / 1_000_000;
        (u32::try_from(ms).unwrap_or(u32::MAX), c.curr, c.prev)
    }

    /// A counter received from a peer at `now` (see [`FreqCtr::to_wire`]).
    pub(crate) fn from_wire(now: Nanos, elapsed_ms: u32, curr: u32, prev: u32) -> FreqCtr {
        FreqCtr {
            start: now.saturating_sub(u64::from(elapsed_ms) * 1_000_000).max(1),
            curr,
            prev,
        }
    }

    /// Moves to the period holding `now`.
    fn rotate(&mut self, now: Nanos, period: Nanos) {
        let period = period.max(1);
        if self.start == 0 && self.curr == 0 && self.prev == 0 {
            self.start = now.max(1);
            return;
        }
        let elapsed = now.saturating_sub(self.start);
        if elapsed < period {
            return;
        }
        let periods = elapsed / period;
        self.prev = if periods == 1 { self.curr } else { 0 };
        self.curr = 0;
        self.start += periods * period;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    #[test]
    fn counts_within_a_period_then_slides() {
        let mut f = FreqCtr::default();
        let p = 10 * S;
        for i in 0..100 {
            f.add(S + i * 10_000_000, p, 1);
        }
        assert_eq!(f.rate(2 * S, p), 100);
        // Half-way through the next period, half the previous period is still in the window.
        assert_eq!(f.rate(16 * S, p), 50);
        f.add(16 * S, p, 1);
        assert_eq!(f.rate(16 * S, p), 51);
        // Two periods later everything is forgotten.
        assert_eq!(f.rate(40 * S, p), 0);
    }

    #[test]
    fn a_counter_crosses_the_wire_unchanged() {
        let p = 10 * S;
        let mut f = FreqCtr::default();
        f.add(S, p, 3);
        f.add(12 * S, p, 5);
        // At 14 s: 3 s into the period started at 11 s, 5 now and 3 before.
        let wire = f.to_wire(14 * S, p);
        assert_eq!(wire, (3_000, 5, 3));
        // Learnt by a node whose clock reads 100 s: the same rate there, then and later.
        let g = FreqCtr::from_wire(100 * S, wire.0, wire.1, wire.2);
        assert_eq!(g.rate(100 * S, p), f.rate(14 * S, p));
        assert_eq!(g.rate(105 * S, p), f.rate(19 * S, p));
        assert_eq!(FreqCtr::default().to_wire(S, p), (0, 0, 0));
    }

    #[test]
    fn an_even_rate_is_estimated_exactly() {
        // 10 events a second over a 10 s period: 100 in every window.
        let mut f = FreqCtr::default();
        let p = 10 * S;
        let mut now = S;
        for _ in 0..400 {
            f.add(now, p, 1);
            now += S / 10;
        }
        let r = f.rate(now, p);
        assert!((99..=101).contains(&r), "{r}");
    }
}
