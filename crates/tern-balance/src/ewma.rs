//! `ewma`: peak-EWMA of response time × (in-flight + 1), best of two random picks.
//!
//! Each server carries an estimate of its response time. A response slower than the estimate
//! replaces it at once (the *peak*: a server turning slow is avoided after one slow answer); a
//! faster one is blended in with weight `1 - e^(-Δt/τ)`, where Δt is the time since the previous
//! update and τ the decay, so the estimate follows a time-weighted moving average rather than a
//! per-response one. With no response at all the estimate relaxes towards 0 with the same time
//! constant, so a server that was avoided is eventually tried again and gets a fresh sample.
//! Before its first response a server is assumed to answer in `initial_rtt`.
//!
//! The cost of a server is `(estimate + 1 ns) × (in_flight + 1)`: expected wait for one more
//! stream given those ahead of it (the 1 ns keeps a fully relaxed estimate from hiding the
//! queue). Comparing all servers would cost O(n) and herd every balancer onto the same fastest
//! server; instead two servers are drawn in proportion to their weights (Fenwick tree, O(log n))
//! and the cheaper one wins, which keeps the load near optimal (the power of two choices) in
//! O(log n). The clock is the caller's ([`PickContext::now`] and `on_response`'s `now`), and the
//! draws come from a seeded generator, so simulations replay. This is the balancer of Finagle and
//! Linkerd; none of HAProxy, nginx or Envoy ships it in this form.

use std::time::Duration;

use crate::context::Nanos;
use crate::exclude::{Exclude, Excluded};
use crate::fenwick::Fenwick;
use crate::rng::Rng;
use crate::slots::Slots;
use crate::{Algorithm, PickContext, ServerId};

/// Default decay time constant τ.
pub const DEFAULT_DECAY: Duration = Duration::from_secs(10);
/// Default response time assumed before a server's first response.
pub const DEFAULT_INITIAL_RTT: Duration = Duration::from_millis(30);

/// Redraws allowed when the second draw hits the first server.
const REDRAWS: u32 = 3;

/// A response-time estimate in nanoseconds and when it was last updated.
#[derive(Debug, Clone, Copy)]
struct Estimate {
    nanos: f64,
    /// `None` until the first response.
    stamp: Option<Nanos>,
}

/// Peak-EWMA state.
#[derive(Debug, Clone)]
pub struct Ewma {
    slots: Slots,
    tree: Fenwick,
    rng: Rng,
    estimates: Vec<Estimate>,
    decay_nanos: f64,
    excluded: Excluded,
}

impl Ewma {
    /// Creates the state for servers with these weights. A zero `decay` is taken as 1 ns (every
    /// new sample replaces the estimate).
    pub fn new(weights: &[u32], decay: Duration, initial_rtt: Duration, seed: u64) -> Self {
        let initial = Estimate {
            nanos: initial_rtt.as_nanos() as f64,
            stamp: None,
        };
        Self {
            slots: Slots::new(weights),
            tree: Fenwick::new(weights.iter().copied()),
            rng: Rng::new(seed),
            estimates: vec![initial; weights.len()],
            decay_nanos: (decay.as_nanos() as f64).max(1.0),
            excluded: Excluded::default(),
        }
    }

    /// Streams in flight on `server`.
    pub fn inflight(&self, server: ServerId) -> u32 {
        self.slots.inflight(server)
    }

    /// The response-time estimate of `server` at `now`, in nanoseconds (0 for an unknown id).
    pub fn estimate(&self, server: ServerId, now: Nanos) -> f64 {
        let Some(e) = self.estimates.get(server) else {
            return 0.0;
        };
        match e.stamp {
            None => e.nanos,
            Some(t) => e.nanos * self.weight_of_past(t, now),
        }
    }

    /// The cost of one more stream on `server` at `now`.
    pub fn cost(&self, server: ServerId, now: Nanos) -> f64 {
        (self.estimate(server, now) + 1.0) * (f64::from(self.slots.inflight(server)) + 1.0)
    }

    /// `e^(-Δt/τ)`: how much of an estimate made at `then` is left at `now`.
    fn weight_of_past(&self, then: Nanos, now: Nanos) -> f64 {
        let elapsed = now.saturating_sub(then) as f64;
        (-elapsed / self.decay_nanos).exp()
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

impl Exclude for Ewma {
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

impl Algorithm for Ewma {
    fn pick(&mut self, ctx: &PickContext<'_>) -> Option<ServerId> {
        if self.tree.total() == 0 {
            return None;
        }
        let a = self.draw();
        let mut b = self.draw();
        for _ in 0..REDRAWS {
            if b != a {
                break;
            }
            b = self.draw();
        }
        if self.cost(b, ctx.now) < self.cost(a, ctx.now) {
            Some(b)
        } else {
            Some(a)
        }
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

    fn on_response(&mut self, server: ServerId, latency: Duration, now: Nanos) {
        let Some(&old) = self.estimates.get(server) else {
            return;
        };
        let sample = latency.as_nanos() as f64;
        let nanos = match old.stamp {
            None => sample,
            Some(then) => {
                let keep = self.weight_of_past(then, now);
                let current = old.nanos * keep;
                if sample > current {
                    sample
                } else {
                    current + sample * (1.0 - keep)
                }
            }
        };
        self.estimates[server] = Estimate {
            nanos,
            stamp: Some(now.max(old.stamp.unwrap_or(0))),
        };
    }
}

#[cfg(test)]
mod tests;
