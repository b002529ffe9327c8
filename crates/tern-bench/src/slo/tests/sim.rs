//! Simulated targets with a known capacity, and a seeded random source, for the search tests.
//!
//! Two models: [`Fluid`] (deterministic backlog growth above capacity, so the pass/fail
//! threshold is known in closed form) and [`Queue`] (an M/D/1 queue simulated request by
//! request: Poisson arrivals, one server with a fixed service time).

use std::time::Duration;

use crate::slo::{Criteria, TrialOutcome};

/// SplitMix64: a tiny, well-mixed generator; enough for reproducible test noise.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xdead_beef)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A trial that met every bound with room to spare.
pub fn perfect(rate: f64) -> TrialOutcome {
    let ms = Duration::from_millis(1);
    TrialOutcome {
        offered: rate,
        achieved: rate,
        completed: (rate * 10.0) as u64,
        errors: 0,
        max_latency: ms,
        quantiles: vec![(0.99, ms), (0.999, ms)],
        client_cpu: None,
        client_bound: false,
        invalid: None,
        window: Duration::from_secs(10),
        elapsed: Duration::from_secs(10),
    }
}

/// A target of capacity C per second whose backlog grows by (r − C) per second above it: the
/// slowest request of a window of W seconds waits (r − C)·W/C. Each trial's capacity is C
/// scaled by a uniform factor in [1 − jitter, 1 + jitter].
#[derive(Debug)]
pub struct Fluid {
    pub capacity: f64,
    pub jitter: f64,
    /// Warm-up plus measured window: how long the backlog can grow.
    pub window: Duration,
    /// Latency of a request that does not wait.
    pub base: Duration,
    pub elapsed: Duration,
    rng: Rng,
}

impl Fluid {
    pub fn new(capacity: f64, seed: u64) -> Self {
        Self {
            capacity,
            jitter: 0.0,
            window: Duration::from_secs(120),
            base: Duration::from_millis(1),
            elapsed: Duration::from_secs(10),
            rng: Rng::new(seed),
        }
    }

    pub fn trial(&mut self, rate: f64) -> TrialOutcome {
        let c = self.capacity * (1.0 + self.jitter * (2.0 * self.rng.unit() - 1.0));
        let window = self.window.as_secs_f64();
        let wait = (rate - c).max(0.0) * window / c;
        let slowest = self.base.as_secs_f64() + wait;
        // Waits grow linearly over the window, so quantile q of them is q of the slowest.
        let at = |q: f64| Duration::from_secs_f64(self.base.as_secs_f64() + q * wait);
        let achieved = rate.min(c);
        TrialOutcome {
            offered: rate,
            achieved,
            completed: (achieved * window) as u64,
            errors: 0,
            max_latency: Duration::from_secs_f64(slowest),
            quantiles: vec![(0.99, at(0.99)), (0.999, at(0.999))],
            client_cpu: None,
            client_bound: false,
            invalid: None,
            window: self.window,
            elapsed: self.elapsed,
        }
    }

    /// The highest passing rate for the lowest and the highest capacity the jitter allows.
    pub fn threshold_range(&self, criteria: &Criteria) -> (f64, f64) {
        let spare = (criteria.max_latency - self.base).as_secs_f64() / self.window.as_secs_f64();
        let threshold = |c: f64| (c * (1.0 + spare)).min(c / criteria.min_achieved);
        (
            threshold(self.capacity * (1.0 - self.jitter)),
            threshold(self.capacity * (1.0 + self.jitter)),
        )
    }
}

/// An M/D/1 queue: Poisson arrivals at the offered rate, one server taking 1/C per request.
/// Requests waiting longer than `timeout` are errors; completions outside the measured window
/// are not counted, as in the real generator.
#[derive(Debug)]
pub struct Queue {
    pub capacity: f64,
    pub warmup: f64,
    pub window: f64,
    pub timeout: f64,
    rng: Rng,
}

impl Queue {
    pub fn new(capacity: f64, seed: u64) -> Self {
        Self {
            capacity,
            warmup: 2.0,
            window: 20.0,
            timeout: 2.0,
            rng: Rng::new(seed),
        }
    }

    pub fn trial(&mut self, rate: f64) -> TrialOutcome {
        let service = 1.0 / self.capacity;
        let end = self.warmup + self.window;
        let (mut t, mut free_at) = (0.0f64, 0.0f64);
        let (mut latencies, mut errors) = (Vec::new(), 0u64);
        loop {
            t += -(1.0 - self.rng.unit()).ln() / rate;
            if t >= end {
                break;
            }
            let done = t.max(free_at) + service;
            free_at = done;
            if done < self.warmup || done >= end {
                continue;
            }
            let latency = done - t;
            if latency > self.timeout {
                errors += 1;
            } else {
                latencies.push(latency);
            }
        }
        latencies.sort_by(f64::total_cmp);
        let n = latencies.len();
        let at = |q: f64| {
            let i = ((q * n as f64).ceil() as usize).clamp(1, n.max(1)) - 1;
            Duration::from_secs_f64(latencies.get(i).copied().unwrap_or(0.0))
        };
        TrialOutcome {
            offered: rate,
            achieved: n as f64 / self.window,
            completed: n as u64,
            errors,
            max_latency: Duration::from_secs_f64(latencies.last().copied().unwrap_or(0.0)),
            quantiles: vec![(0.99, at(0.99)), (0.999, at(0.999))],
            client_cpu: None,
            client_bound: false,
            invalid: None,
            window: Duration::from_secs_f64(self.window),
            elapsed: Duration::from_secs_f64(end),
        }
    }
}
