//! Per-thread counters and latency histograms, merged once at the end of a run.
//!
//! Each client thread owns its `Stats` (no atomics or locks on the hot path); the main thread
//! adds them up after joining. Only events that complete inside the measured window are
//! recorded, so warm-up and the abandoned in-flight requests at the deadline do not count.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rustls::HandshakeKind;

/// Largest latency a histogram tracks exactly (larger values are clamped): one minute in µs.
const MAX_LATENCY_US: u64 = 60_000_000;

/// Why a request or connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// TCP connect failed (refused, unreachable, out of ports…).
    Connect,
    /// The TLS handshake failed.
    Tls,
    /// A request (with its connect and handshake) exceeded `--timeout`.
    Timeout,
    /// Reading or writing an established connection failed (reset, TLS record error).
    Io,
    /// The response was malformed or the connection closed before it ended.
    Protocol,
}

impl ErrorKind {
    /// All kinds, in report order.
    pub const ALL: [ErrorKind; 5] = [
        ErrorKind::Connect,
        ErrorKind::Tls,
        ErrorKind::Timeout,
        ErrorKind::Io,
        ErrorKind::Protocol,
    ];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Tls => "tls",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Io => "io",
            ErrorKind::Protocol => "protocol",
        }
    }
}

/// The negotiated TLS parameters, recorded from the first handshake of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsParams {
    /// Protocol version, e.g. "TLSv1_3".
    pub version: String,
    /// Cipher suite, e.g. "TLS13_AES_256_GCM_SHA384".
    pub suite: String,
    /// Key exchange group, e.g. "X25519".
    pub group: String,
}

/// Counters and histograms of one thread (or, after merging, of the whole run).
#[derive(Debug, Clone)]
pub struct Stats {
    window_start: Instant,
    window_end: Instant,
    /// Completed responses in the window.
    pub requests: u64,
    /// TCP connections established in the window.
    pub connections: u64,
    /// Full handshakes (including those with a HelloRetryRequest).
    pub full_handshakes: u64,
    /// Full handshakes that needed a HelloRetryRequest.
    pub hello_retries: u64,
    /// Resumed handshakes.
    pub resumed_handshakes: u64,
    /// Errors by [`ErrorKind`], indexed like [`ErrorKind::ALL`].
    pub errors: [u64; 5],
    /// Responses by status class: index 0 = 1xx … 4 = 5xx, 5 = anything else.
    pub status: [u64; 6],
    /// TCP connect latency in µs.
    pub connect: Histogram<u64>,
    /// TLS handshake latency in µs (after connect).
    pub handshake: Histogram<u64>,
    /// Request latency in µs, including the connect and handshake a request waited for.
    pub total: Histogram<u64>,
    /// Completed responses in each whole second of the window.
    pub per_second: Vec<u64>,
    /// Negotiated TLS parameters (first handshake seen).
    pub tls: Option<TlsParams>,
}

impl Stats {
    /// Empty stats for the measured window `[start, end)`.
    pub fn new(window_start: Instant, window_end: Instant) -> Self {
        let seconds = window_end
            .saturating_duration_since(window_start)
            .as_secs_f64();
        Self {
            window_start,
            window_end,
            requests: 0,
            connections: 0,
            full_handshakes: 0,
            hello_retries: 0,
            resumed_handshakes: 0,
            errors: [0; 5],
            status: [0; 6],
            connect: histogram(),
            handshake: histogram(),
            total: histogram(),
            // Whole seconds only: a partial last second would look like a dip.
            per_second: vec![0; seconds.floor() as usize],
            tls: None,
        }
    }

    /// Whether an event finishing at `at` is measured.
    pub fn in_window(&self, at: Instant) -> bool {
        at >= self.window_start && at < self.window_end
    }

    /// Records a successful TCP connect that started at `started`.
    pub fn connected(&mut self, started: Instant, now: Instant) {
        if self.in_window(now) {
            self.connections += 1;
            record(&mut self.connect, now - started);
        }
    }

    /// Records a completed handshake; returns false if it was resumed.
    pub fn handshaked(
        &mut self,
        kind: Option<HandshakeKind>,
        took: Duration,
        now: Instant,
    ) -> bool {
        let resumed = kind == Some(HandshakeKind::Resumed);
        if self.in_window(now) {
            match kind {
                Some(HandshakeKind::Resumed) => self.resumed_handshakes += 1,
                Some(HandshakeKind::FullWithHelloRetryRequest) => {
                    self.full_handshakes += 1;
                    self.hello_retries += 1;
                }
                _ => self.full_handshakes += 1,
            }
            record(&mut self.handshake, took);
        }
        !resumed
    }

    /// Records a response with `status` to a request that started at `started`.
    pub fn responded(&mut self, status: u16, started: Instant, now: Instant) {
        if !self.in_window(now) {
            return;
        }
        self.requests += 1;
        let class = match status {
            100..=599 => usize::from(status / 100 - 1),
            _ => 5,
        };
        self.status[class] += 1;
        record(&mut self.total, now - started);
        let second = now.duration_since(self.window_start).as_secs() as usize;
        if let Some(slot) = self.per_second.get_mut(second) {
            *slot += 1;
        }
    }

    /// Records a failure of `kind` observed at `now`.
    pub fn failed(&mut self, kind: ErrorKind, now: Instant) {
        if self.in_window(now) {
            self.errors[kind as usize] += 1;
        }
    }

    /// Errors of one kind.
    pub fn errors_of(&self, kind: ErrorKind) -> u64 {
        self.errors[kind as usize]
    }

    /// Adds another thread's stats into these.
    pub fn merge(&mut self, other: &Stats) {
        self.requests += other.requests;
        self.connections += other.connections;
        self.full_handshakes += other.full_handshakes;
        self.hello_retries += other.hello_retries;
        self.resumed_handshakes += other.resumed_handshakes;
        add_arrays(&mut self.errors, &other.errors);
        add_arrays(&mut self.status, &other.status);
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.connect.add(&other.connect);
        let _ = self.handshake.add(&other.handshake);
        let _ = self.total.add(&other.total);
        for (mine, theirs) in self.per_second.iter_mut().zip(&other.per_second) {
            *mine += theirs;
        }
        if self.tls.is_none() {
            self.tls.clone_from(&other.tls);
        }
    }
}

fn add_arrays<const N: usize>(into: &mut [u64; N], from: &[u64; N]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

fn histogram() -> Histogram<u64> {
    // Constant, valid bounds (1 ≤ low, high ≥ 2·low, 3 significant figures): cannot fail.
    #[allow(clippy::unwrap_used)]
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).unwrap()
}

fn record(h: &mut Histogram<u64>, took: Duration) {
    let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    h.saturating_record(us.clamp(1, MAX_LATENCY_US));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_inside_the_window() {
        let t0 = Instant::now();
        let start = t0 + Duration::from_secs(1);
        let mut stats = Stats::new(start, start + Duration::from_millis(2500));
        assert_eq!(stats.per_second.len(), 2);
        stats.responded(200, t0, t0 + Duration::from_millis(500)); // warm-up
        stats.responded(200, t0, start + Duration::from_millis(10));
        stats.responded(503, start, start + Duration::from_millis(1500));
        stats.responded(200, start, start + Duration::from_millis(2200)); // partial second
        stats.responded(200, start, start + Duration::from_millis(2500)); // at the deadline
        stats.failed(ErrorKind::Timeout, start);
        assert_eq!(stats.requests, 3);
        assert_eq!(stats.status, [0, 2, 0, 0, 1, 0]);
        assert_eq!(stats.per_second, vec![1, 1]);
        assert_eq!(stats.errors_of(ErrorKind::Timeout), 1);
        assert!(!stats.handshaked(Some(HandshakeKind::Resumed), Duration::ZERO, start));
        assert!(stats.handshaked(
            Some(HandshakeKind::FullWithHelloRetryRequest),
            Duration::ZERO,
            start
        ));
        assert_eq!(
            (
                stats.full_handshakes,
                stats.hello_retries,
                stats.resumed_handshakes
            ),
            (1, 1, 1)
        );

        let mut sum = stats.clone();
        sum.merge(&stats);
        assert_eq!(sum.requests, 6);
        assert_eq!(sum.total.len(), 6);
        assert_eq!(sum.per_second, vec![2, 2]);
    }
}
