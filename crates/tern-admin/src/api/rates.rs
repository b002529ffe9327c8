//! Process-wide rates for `show info`: sessions, requests and TLS handshakes per second.
//!
//! The proxy keeps counters, not rates (a rate on the data path would cost every request a
//! clock read). The API thread samples the totals once a second and keeps the last
//! [`WINDOW`] seconds; a rate is the difference between the newest and the oldest sample over
//! the time between them. A total that goes down (a reload started a new generation's counters)
//! restarts the window rather than reporting a negative rate.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tern_proxy::StatsSnapshot;

/// How often the totals are sampled.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// The span rates are averaged over.
pub const WINDOW: Duration = Duration::from_secs(10);

/// Totals at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sample {
    at: Instant,
    sessions: u64,
    requests: u64,
    tls_handshakes: u64,
}

impl Sample {
    fn of(stats: &StatsSnapshot, at: Instant) -> Self {
        let f = &stats.frontends;
        Self {
            at,
            sessions: f.iter().map(|f| f.sessions).sum(),
            requests: f.iter().map(|f| f.requests).sum(),
            tls_handshakes: f.iter().map(|f| f.tls_full + f.tls_resumed).sum(),
        }
    }

    fn not_below(&self, earlier: &Sample) -> bool {
        self.sessions >= earlier.sessions
            && self.requests >= earlier.requests
            && self.tls_handshakes >= earlier.tls_handshakes
    }
}

/// Per-second rates over the last `window`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSnapshot {
    pub window: Duration,
    pub sessions: f64,
    pub requests: f64,
    pub tls_handshakes: f64,
}

impl RateSnapshot {
    /// `{"window_seconds": .., "sessions_per_second": .., ...}`, or `null` when not known yet.
    pub fn json(rates: Option<&Self>) -> Value {
        match rates {
            None => Value::Null,
            Some(r) => json!({
                "window_seconds": r.window.as_secs_f64(),
                "sessions_per_second": round(r.sessions),
                "requests_per_second": round(r.requests),
                "tls_handshakes_per_second": round(r.tls_handshakes),
            }),
        }
    }
}

fn round(rate: f64) -> f64 {
    (rate * 10.0).round() / 10.0
}

/// The sampled totals, shared by the sampler and the commands.
#[derive(Debug, Clone, Default)]
pub struct Rates {
    samples: Arc<Mutex<VecDeque<Sample>>>,
}

/// What `show info` gets: rates, once two samples exist.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurrentRates(pub Option<RateSnapshot>);

impl CurrentRates {
    pub fn to_json(&self) -> Value {
        RateSnapshot::json(self.0.as_ref())
    }
}

impl Rates {
    /// Records the totals of `stats`, taken at `at`.
    pub fn record(&self, stats: &StatsSnapshot, at: Instant) {
        let sample = Sample::of(stats, at);
        let Ok(mut samples) = self.samples.lock() else {
            return;
        };
        if samples.back().is_some_and(|last| !sample.not_below(last)) {
            samples.clear();
        }
        samples.push_back(sample);
        while samples
            .front()
            .is_some_and(|first| at.saturating_duration_since(first.at) > WINDOW)
        {
            samples.pop_front();
        }
    }

    /// Rates between the oldest and the newest sample.
    pub fn current(&self) -> CurrentRates {
        let Ok(samples) = self.samples.lock() else {
            return CurrentRates(None);
        };
        let (Some(first), Some(last)) = (samples.front(), samples.back()) else {
            return CurrentRates(None);
        };
        let window = last.at.saturating_duration_since(first.at);
        if window.is_zero() {
            return CurrentRates(None);
        }
        let secs = window.as_secs_f64();
        let per_sec = |a: u64, b: u64| b.saturating_sub(a) as f64 / secs;
        CurrentRates(Some(RateSnapshot {
            window,
            sessions: per_sec(first.sessions, last.sessions),
            requests: per_sec(first.requests, last.requests),
            tls_handshakes: per_sec(first.tls_handshakes, last.tls_handshakes),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_proxy::stats::FrontendSnapshot;

    fn stats(requests: u64) -> StatsSnapshot {
        StatsSnapshot {
            frontends: vec![FrontendSnapshot {
                sessions: requests / 2,
                requests,
                tls_full: 1,
                ..FrontendSnapshot::default()
            }],
            ..StatsSnapshot::default()
        }
    }

    #[test]
    fn rate_over_the_window() {
        let rates = Rates::default();
        let t0 = Instant::now();
        assert_eq!(rates.current(), CurrentRates(None));
        rates.record(&stats(0), t0);
        assert_eq!(rates.current(), CurrentRates(None));
        for s in 1..=20u64 {
            rates.record(&stats(s * 100), t0 + Duration::from_secs(s));
        }
        let r = rates.current().0.expect("two samples");
        assert_eq!(r.window, WINDOW);
        assert!((r.requests - 100.0).abs() < 1e-9, "{r:?}");
        assert!((r.sessions - 50.0).abs() < 1e-9, "{r:?}");
        assert_eq!(r.tls_handshakes, 0.0);
    }

    #[test]
    fn a_counter_reset_restarts_the_window() {
        let rates = Rates::default();
        let t0 = Instant::now();
        rates.record(&stats(1000), t0);
        rates.record(&stats(2000), t0 + Duration::from_secs(1));
        rates.record(&stats(10), t0 + Duration::from_secs(2));
        assert_eq!(rates.current(), CurrentRates(None));
        rates.record(&stats(20), t0 + Duration::from_secs(3));
        let r = rates.current().0.expect("two samples");
        assert!((r.requests - 10.0).abs() < 1e-9, "{r:?}");
    }
}
