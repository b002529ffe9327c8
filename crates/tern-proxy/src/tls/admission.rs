//! Handshake admission: the full-handshake rate cap (`global.max_tls_handshake_rate`, HAProxy's
//! `maxsslrate`) and the per-source budget (`global.max_tls_handshakes_per_source`).
//!
//! Why: a full handshake costs ~100× the CPU of a request on an established connection. When
//! handshakes arrive faster than the workers can do them, doing them all starves everyone,
//! clients already connected included. With a cap, the handshakes beyond it wait instead of
//! burning CPU, and the time left serves established connections and resumptions.
//!
//! How:
//! - Each worker has its own token bucket holding its share of the process-wide rate (split
//!   evenly; SO_REUSEPORT spreads connections evenly), so admission takes no lock and touches no
//!   shared cache line. Burst: 100 ms worth of tokens (at least one).
//! - A session reads the ClientHello first (`client_hello.rs`). A resumption offer passes
//!   without a token; a full handshake takes one, or waits for one. Waiters queue in arrival
//!   order (a one-permit fair semaphore lets only the oldest sleep on the bucket).
//! - While as many sessions wait for a token as the bucket refills in a second, the worker's
//!   TLS accept loops stop accepting ([`Admission::room`]): further connections wait in the
//!   kernel's accept queue, costing tern nothing.
//! - Waiting counts against the bind's `handshake` timeout; a connection still waiting when it
//!   expires is closed (counted `rate_expired`), never handshaken late.
//! - The per-source budget is a bucket per source address (IPv6: per /64) in a fixed table per
//!   worker, indexed by a keyed hash; sources that collide share a bucket (the table is sized
//!   so that this is rare). A full handshake beyond it is refused at once (closed, counted
//!   `source_refused`): waiting would let one source fill the waiting room.
//!
//! With neither key set there is no `Admission` at all, and sessions take the exact path they
//! took before (no ClientHello read, no allocation, no clock read).

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::net::IpAddr;
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

use tern_config::Global;

/// Source buckets per worker (a power of two).
const SOURCE_SLOTS: usize = 4096;

/// A token bucket owned by one worker thread.
#[derive(Debug)]
struct Bucket {
    per_sec: f64,
    burst: f64,
    tokens: Cell<f64>,
    last: Cell<Instant>,
}

impl Bucket {
    fn new(per_sec: f64, burst: f64, now: Instant) -> Self {
        Self {
            per_sec,
            burst,
            tokens: Cell::new(burst),
            last: Cell::new(now),
        }
    }

    fn refill(&self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.last.get()).as_secs_f64();
        self.last.set(now);
        let tokens = self.tokens.get() + elapsed * self.per_sec;
        self.tokens.set(tokens.min(self.burst));
    }

    fn try_take(&self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens.get() >= 1.0 {
            self.tokens.set(self.tokens.get() - 1.0);
            true
        } else {
            false
        }
    }

    /// Takes a token even if there is none (down to one burst of debt): for a handshake that
    /// turned out full after it was let through as a resumption.
    fn charge(&self, now: Instant) {
        self.refill(now);
        self.tokens.set((self.tokens.get() - 1.0).max(-self.burst));
    }

    /// How long until a token is there.
    fn wait(&self) -> Duration {
        let missing = (1.0 - self.tokens.get()).max(0.0);
        Duration::from_secs_f64(missing / self.per_sec).max(Duration::from_micros(100))
    }
}

/// Per-source buckets, one table per worker.
#[derive(Debug)]
struct Sources {
    per_sec: f64,
    burst: f64,
    slots: Box<[(Cell<f64>, Cell<Instant>)]>,
    hasher: RandomState,
}

impl Sources {
    fn new(per_sec: f64, now: Instant) -> Self {
        // A browser opens several connections at once: allow a second's worth in a burst.
        let burst = per_sec.max(1.0);
        Self {
            per_sec,
            burst,
            slots: (0..SOURCE_SLOTS)
                .map(|_| (Cell::new(burst), Cell::new(now)))
                .collect(),
            hasher: RandomState::new(),
        }
    }

    fn slot(&self, ip: IpAddr) -> &(Cell<f64>, Cell<Instant>) {
        let key: u64 = match ip {
            IpAddr::V4(v4) => u64::from(u32::from(v4)),
            // One IPv6 host usually owns a whole /64.
            IpAddr::V6(v6) => (u128::from(v6) >> 64) as u64 ^ (1 << 63),
        };
        let index = self.hasher.hash_one(key) as usize & (SOURCE_SLOTS - 1);
        &self.slots[index]
    }

    /// Takes a token from the source's bucket; `charge` takes it even if there is none.
    fn take(&self, ip: IpAddr, now: Instant, charge: bool) -> bool {
        let (tokens, last) = self.slot(ip);
        let elapsed = now.saturating_duration_since(last.get()).as_secs_f64();
        last.set(now);
        let t = (tokens.get() + elapsed * self.per_sec).min(self.burst);
        if t >= 1.0 || charge {
            tokens.set((t - 1.0).max(-self.burst));
            true
        } else {
            tokens.set(t);
            false
        }
    }
}

/// One worker's handshake admission state.
#[derive(Debug)]
pub(crate) struct Admission {
    rate: Option<Bucket>,
    sources: Option<Sources>,
    /// Waiters for a rate token line up here; only the holder sleeps on the bucket.
    turnstile: Semaphore,
    waiting: Cell<usize>,
    /// Accept loops pause while this many sessions wait for a token.
    waiting_limit: usize,
    room: Notify,
}

/// How a full handshake got its token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admitted {
    AtOnce,
    Delayed,
    /// The client left while waiting: no token was taken.
    Abandoned,
}

impl Admission {
    /// The admission state of one of `workers` workers; `None` when no cap is configured.
    pub(crate) fn new(global: &Global, workers: usize) -> Option<Self> {
        if global.max_tls_handshake_rate.is_none() && global.max_tls_handshakes_per_source.is_none()
        {
            return None;
        }
        let now = Instant::now();
        let share = |n: u32| f64::from(n) / workers.max(1) as f64;
        let rate = global.max_tls_handshake_rate.map(|n| {
            let per_sec = share(n);
            Bucket::new(per_sec, (per_sec / 10.0).max(1.0), now)
        });
        let waiting_limit = rate.as_ref().map_or(usize::MAX, |b| {
            // About a second of handshakes (at least 16) waits in tern; the rest in the kernel.
            (b.per_sec.ceil() as usize).clamp(16, 4096)
        });
        Some(Self {
            rate,
            sources: global
                .max_tls_handshakes_per_source
                .map(|n| Sources::new(share(n), now)),
            turnstile: Semaphore::new(1),
            waiting: Cell::new(0),
            waiting_limit,
            room: Notify::new(),
        })
    }

    /// Whether the rate cap is on (the accept loops then wait for [`Admission::room`]).
    pub(crate) fn has_rate_cap(&self) -> bool {
        self.rate.is_some()
    }

    /// Takes a full handshake from `ip`'s budget; `false` if the source is over it.
    pub(crate) fn source_allows(&self, ip: IpAddr) -> bool {
        self.sources
            .as_ref()
            .is_none_or(|s| s.take(ip, Instant::now(), false))
    }

    /// Waits for a rate token for a full handshake (at once if the cap is off). `left` says
    /// whether the client has gone; it is asked before each token is taken after a wait, so a
    /// client that gave up while queued costs neither a token nor a handshake.
    pub(crate) async fn full_handshake(&self, left: impl Fn() -> bool) -> Admitted {
        let Some(bucket) = &self.rate else {
            return Admitted::AtOnce;
        };
        if self.turnstile.available_permits() > 0 && bucket.try_take(Instant::now()) {
            return Admitted::AtOnce;
        }
        let _waiting = Waiting::new(self);
        // Never closed; if it were, waiting on the bucket alone is still correct.
        let _turn = self.turnstile.acquire().await.ok();
        // Each pass sleeps until the bucket should hold a token; only a charge made meanwhile
        // (a failed resumption) can push it further, and the handshake timeout bounds the wait.
        loop {
            if left() {
                return Admitted::Abandoned;
            }
            if bucket.try_take(Instant::now()) {
                return Admitted::Delayed;
            }
            tokio::time::sleep(bucket.wait()).await;
        }
    }

    /// Charges a handshake that was let through as a resumption but turned out full.
    pub(crate) fn charge_full(&self, ip: IpAddr) {
        let now = Instant::now();
        if let Some(bucket) = &self.rate {
            bucket.charge(now);
        }
        if let Some(sources) = &self.sources {
            sources.take(ip, now, true);
        }
    }

    /// Resolves when fewer sessions wait for a token than the waiting room holds.
    pub(crate) async fn room(&self) {
        // Bounded: each pass waits for a waiter to leave.
        loop {
            let left = self.room.notified();
            tokio::pin!(left);
            left.as_mut().enable();
            if self.waiting.get() < self.waiting_limit {
                return;
            }
            left.await;
        }
    }
}

/// Counts a session waiting for a token while alive.
struct Waiting<'a>(&'a Admission);

impl<'a> Waiting<'a> {
    fn new(a: &'a Admission) -> Self {
        a.waiting.set(a.waiting.get() + 1);
        Self(a)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let a = self.0;
        a.waiting.set(a.waiting.get().saturating_sub(1));
        if a.waiting.get() < a.waiting_limit {
            a.room.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests;
