//! The result of a run: settings, counts, latency percentiles, per-second series, the
//! reference probe, the client's own CPU cost and whether the result is valid; printed for
//! people here, written as JSON by `json.rs` (schema: JSON.md).
//!
//! The settings are part of the report on purpose: a figure without its TLS parameters,
//! load model, CPUs and window is not comparable.

mod text;

use std::time::Duration;

use crate::cpu::CpuTime;
use crate::stats::Stats;
use crate::system::System;
use crate::validity::Validity;

/// Client CPU use above this share of its CPUs marks a run as client-bound (invalid).
pub const CLIENT_BOUND_SHARE: f64 = 0.9;

/// How a run was set up, as reported.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The target URL.
    pub target: String,
    /// Concurrent connections (closed loop) or the connection cap (open loop).
    pub connections: u32,
    /// HTTP/2 (`--h2`): streams in flight per connection; `None` for HTTP/1.1.
    pub streams: Option<u32>,
    /// Requests per connection (0 = unlimited keep-alive).
    pub requests_per_conn: u64,
    /// Client threads.
    pub threads: u32,
    /// CPUs the threads were pinned to (empty: not pinned).
    pub cpus: Vec<usize>,
    /// The measured window.
    pub duration: Duration,
    /// The warm-up before it.
    pub warmup: Duration,
    /// Per-request timeout.
    pub timeout: Duration,
    /// How the server certificate was checked ("none" for plain HTTP).
    pub verify: &'static str,
    /// Open-loop arrivals per second (`None`: closed loop).
    pub rate: Option<f64>,
    /// The ramp before the warm-up.
    pub ramp: Duration,
    /// The client's TLS library ("rustls" or "openssl").
    pub engine: &'static str,
    /// TLS version offered ("1.0" … "1.3", or "1.3,1.2").
    pub tls_version: String,
    /// Key exchange groups offered, in order.
    pub groups: Vec<String>,
    /// Handshakes per client key pair (`--key-share-reuse`; 1 = fresh each time).
    pub key_share_reuse: u32,
    /// Cipher suites asked for (empty: the provider's defaults).
    pub ciphers: Vec<String>,
    /// Signature schemes offered (empty: all the provider verifies).
    pub sigalgs: Vec<String>,
    /// ALPN protocols offered.
    pub alpn: Vec<String>,
    /// SNI sent (for https targets).
    pub sni: Option<String>,
    /// Resumption mode ("ticket", "id") or `None` (off).
    pub resume: Option<&'static str>,
    /// Share of new connections that try to resume.
    pub resume_ratio: f64,
    /// The reference probe's URL and rate.
    pub reference: Option<(String, f64)>,
}

impl Settings {
    /// "HTTP/2" or "HTTP/1.1".
    pub fn protocol(&self) -> &'static str {
        match self.streams {
            Some(_) => "HTTP/2",
            None => "HTTP/1.1",
        }
    }

    /// "open" or "closed".
    pub fn load(&self) -> &'static str {
        if self.rate.is_some() {
            "open"
        } else {
            "closed"
        }
    }
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// The settings of the run.
    pub settings: Settings,
    /// Counters and histograms of all threads.
    pub stats: Stats,
    /// Client CPU time spent in the measured window, if `/proc` was readable.
    pub cpu: Option<CpuTime>,
    /// The reference probe's counters and histograms, with `--ref-url`.
    pub reference: Option<Stats>,
    /// Client CPU seconds in each whole second of the window.
    pub cpu_per_second: Vec<f64>,
    /// CPUs' worth of time the generator may use (threads, pinning and affinity considered).
    pub cpu_capacity: f64,
    /// The part of the window actually measured (shorter than the duration if stopped early).
    pub measured: Duration,
    /// Whether the run was stopped early (Ctrl-C or a stop request): a partial report.
    pub partial: bool,
    /// Versions and machine.
    pub system: System,
    /// Whether the result can be trusted, and why not.
    pub validity: Validity,
}

impl Report {
    /// Completed requests per second of the window.
    pub fn request_rate(&self) -> f64 {
        per_second(self.stats.requests, self.measured)
    }

    /// New connections per second of the window.
    pub fn connection_rate(&self) -> f64 {
        per_second(self.stats.connections, self.measured)
    }

    /// Response bytes per second of the window.
    pub fn byte_rate(&self) -> f64 {
        per_second(self.stats.bytes, self.measured)
    }

    /// All errors, including 4xx/5xx and unknown statuses.
    pub fn error_count(&self) -> u64 {
        error_count(&self.stats)
    }

    /// Client CPU µs per request and per connection.
    pub fn cpu_us_per(&self) -> Option<(f64, f64)> {
        let us = self.cpu?.total().as_secs_f64() * 1e6;
        let per = |n: u64| if n == 0 { 0.0 } else { us / n as f64 };
        Some((per(self.stats.requests), per(self.stats.connections)))
    }

    /// Share of the client's CPU capacity used (1.0 = every usable CPU busy all the time).
    pub fn cpu_share(&self) -> Option<f64> {
        let cpu = self.cpu?.total().as_secs_f64();
        let window = self.measured.as_secs_f64() * self.cpu_capacity;
        (window > 0.0).then(|| cpu / window)
    }

    /// The client's CPU share in each whole second of the window.
    pub fn cpu_share_per_second(&self) -> Vec<f64> {
        self.cpu_per_second
            .iter()
            .map(|s| s / self.cpu_capacity.max(1e-9))
            .collect()
    }

    /// Whether the client used more than [`CLIENT_BOUND_SHARE`] of its CPUs.
    pub fn client_bound(&self) -> bool {
        self.cpu_share().is_some_and(|s| s > CLIENT_BOUND_SHARE)
    }

    /// The report as one JSON object (see crates/tern-bench/JSON.md), keys in schema order.
    pub fn to_json(&self) -> String {
        crate::json::to_string(self)
    }

    /// The report as a JSON value (see crates/tern-bench/JSON.md).
    pub fn to_json_value(&self) -> serde_json::Value {
        crate::json::to_value(self)
    }
}

/// Errors of every kind in `stats`, including 4xx/5xx and unknown statuses.
pub fn error_count(stats: &Stats) -> u64 {
    let status = &stats.status;
    stats.errors.iter().sum::<u64>() + status[3] + status[4] + status[5]
}

/// `n` per second of `window` (0 for an empty window).
pub fn per_second(n: u64, window: Duration) -> f64 {
    let secs = window.as_secs_f64();
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// CPUs' worth of time `threads` client threads can use: at most one CPU each, at most the
/// distinct CPUs they are pinned to, at most the CPUs the process may use.
pub fn cpu_capacity(threads: u32, cpus: &[usize], available: usize) -> f64 {
    let mut distinct = cpus.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let mut capacity = threads as usize;
    if !distinct.is_empty() {
        capacity = capacity.min(distinct.len());
    }
    capacity.min(available.max(1)).max(1) as f64
}

#[cfg(test)]
pub(crate) mod tests;
