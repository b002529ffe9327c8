//! Per-thread counters, latency histograms and per-second series, merged once at the end of a
//! run.
//!
//! Each client thread owns its `Stats` (no atomics or locks on the hot path); the main thread
//! adds them up after joining. Only events that complete inside the measured window are
//! recorded, so the ramp, the warm-up and the requests abandoned in flight at the deadline do not
//! count. A response with a 4xx, 5xx or unknown status is an error: it is counted by class
//! (total and per second) but never enters the latency histograms, which hold successes only.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rustls::HandshakeKind;

use crate::series::Series;

/// Largest latency a histogram tracks exactly (larger values are clamped): one minute in µs.
pub const MAX_LATENCY_US: u64 = 60_000_000;

/// Why a request or connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// TCP connect failed (refused, unreachable, out of ports…).
    Connect,
    /// The TLS handshake failed.
    Tls,
    /// A request (with its connect, handshake and queueing) exceeded `--timeout`.
    Timeout,
    /// Reading or writing an established connection failed (reset, TLS record error).
    Io,
    /// The response was malformed or the connection closed before it ended (truncated).
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

/// Names of the status classes in [`Stats::status`].
pub const STATUS_NAMES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "other"];

/// The negotiated TLS parameters, recorded from the first handshake of the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsParams {
    /// The client's TLS library: "rustls" or "openssl".
    pub engine: &'static str,
    /// Protocol version, e.g. "TLSv1_3" (rustls' spelling, whatever the engine).
    pub version: String,
    /// Cipher suite, e.g. "TLS13_AES_256_GCM_SHA384" or "TLS_RSA_WITH_AES_128_CBC_SHA" (IANA
    /// names, TLS 1.3 ones with rustls' `TLS13_` prefix, whatever the engine).
    pub suite: String,
    /// Key exchange: "RSA" (static, no group), "DHE", "ECDHE", "ECDHE+ML-KEM" or "ML-KEM".
    pub key_exchange: String,
    /// Key exchange group, e.g. "X25519", "secp256r1", "DH2048" (finite field, by size), or
    /// "none" for static RSA.
    pub group: String,
    /// The ALPN protocol the server chose, if any.
    pub alpn: Option<String>,
}

/// Counters and histograms of one thread (or, after merging, of the whole run).
#[derive(Debug, Clone)]
pub struct Stats {
    window_start: Instant,
    window_end: Instant,
    /// Completed responses in the window, whatever their status.
    pub requests: u64,
    /// Completed responses with a 1xx–3xx status: the samples of the latency histograms.
    pub ok: u64,
    /// TCP connections established in the window.
    pub connections: u64,
    /// Full handshakes (including those with a HelloRetryRequest).
    pub full_handshakes: u64,
    /// Full handshakes that needed a HelloRetryRequest.
    pub hello_retries: u64,
    /// Resumed handshakes.
    pub resumed_handshakes: u64,
    /// Handshakes that offered a stored session (with `--resume`); each ended full or resumed.
    pub resume_attempts: u64,
    /// Response bytes received in the window (head and body; plaintext for TLS).
    pub bytes: u64,
    /// Requests sent whose response had not ended at the deadline (or when the run was
    /// stopped): neither requests nor errors. Counted by the HTTP/2 client (`--h2`), whose
    /// streams in flight are the difference between what it sent and what it counted.
    pub abandoned: u64,
    /// Errors by [`ErrorKind`], indexed like [`ErrorKind::ALL`].
    pub errors: [u64; 5],
    /// Responses by status class: index 0 = 1xx … 4 = 5xx, 5 = anything else.
    pub status: [u64; 6],
    /// TCP connect latency in µs.
    pub connect: Histogram<u64>,
    /// TLS handshake latency in µs (after connect).
    pub handshake: Histogram<u64>,
    /// Time to the first response byte in µs, from the request's start (see `total`).
    pub ttfb: Histogram<u64>,
    /// Time to the last response byte in µs, from the request's start: including the connect
    /// and handshake it waited for, and in open loop the time from its intended start.
    pub total: Histogram<u64>,
    /// Completed responses in each whole second of the window (same as `series.requests`).
    pub per_second: Vec<u64>,
    /// Per-second series of the window: connections, requests, bytes, errors, active.
    pub series: Series,
    /// Negotiated TLS parameters (first handshake seen in the window).
    pub tls: Option<TlsParams>,
    /// Counts over the whole run (ramp and warm-up included), for live progress.
    pub(crate) live: Live,
}

/// Whole-run counters shown by the live progress line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Live {
    /// Completed responses.
    pub requests: u64,
    /// Connections established.
    pub connections: u64,
    /// Errors of every kind, status errors included.
    pub errors: u64,
    /// Response bytes received.
    pub bytes: u64,
    /// Connections open now.
    pub active: u64,
}

impl Stats {
    /// Empty stats for the measured window `[start, end)`.
    pub fn new(window_start: Instant, window_end: Instant) -> Self {
        let seconds = window_end
            .saturating_duration_since(window_start)
            .as_secs_f64();
        // Whole seconds only: a partial last second would look like a dip.
        let whole = seconds.floor() as usize;
        Self {
            window_start,
            window_end,
            requests: 0,
            ok: 0,
            connections: 0,
            full_handshakes: 0,
            hello_retries: 0,
            resumed_handshakes: 0,
            resume_attempts: 0,
            bytes: 0,
            abandoned: 0,
            errors: [0; 5],
            status: [0; 6],
            connect: histogram(),
            handshake: histogram(),
            ttfb: histogram(),
            total: histogram(),
            per_second: vec![0; whole],
            series: Series::new(whole),
            tls: None,
            live: Live::default(),
        }
    }

    /// Whether an event finishing at `at` is measured.
    pub fn in_window(&self, at: Instant) -> bool {
        at >= self.window_start && at < self.window_end
    }

    /// The start of the measured window.
    pub fn window_start(&self) -> Instant {
        self.window_start
    }

    /// The whole second of the window `at` falls in, if any.
    fn second(&self, at: Instant) -> Option<usize> {
        if !self.in_window(at) {
            return None;
        }
        let second = at.duration_since(self.window_start).as_secs() as usize;
        (second < self.per_second.len()).then_some(second)
    }

    /// Records a successful TCP connect that started at `started`.
    pub fn connected(&mut self, started: Instant, now: Instant) {
        self.live.connections += 1;
        if self.in_window(now) {
            self.connections += 1;
            record(&mut self.connect, now - started);
            if let Some(s) = self.second(now) {
                self.series.connections[s] += 1;
            }
        }
    }

    /// Records a handshake that offered a stored session.
    pub fn resume_attempted(&mut self, now: Instant) {
        if self.in_window(now) {
            self.resume_attempts += 1;
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

    /// Records a response with `status` to a request that started at `started`, whose last
    /// byte arrived at `now` (the first byte is taken to be `now` too).
    pub fn responded(&mut self, status: u16, started: Instant, now: Instant) {
        self.response(status, started, now, now);
    }

    /// Records a response with `status` to a request that started at `started`, whose first
    /// byte arrived at `first_byte` and last at `now`. Only 1xx–3xx responses are latency
    /// samples; the others are errors of their class.
    pub fn response(&mut self, status: u16, started: Instant, first_byte: Instant, now: Instant) {
        self.live.requests += 1;
        let class = match status {
            100..=599 => usize::from(status / 100 - 1),
            _ => 5,
        };
        if class >= 3 {
            self.live.errors += 1;
        }
        if !self.in_window(now) {
            return;
        }
        self.requests += 1;
        self.status[class] += 1;
        let second = self.second(now);
        if let Some(s) = second {
            self.per_second[s] += 1;
            self.series.requests[s] += 1;
        }
        if class >= 3 {
            if let Some(s) = second {
                self.series.errors[ErrorKind::ALL.len() + class - 3][s] += 1;
            }
            return;
        }
        self.ok += 1;
        record(
            &mut self.ttfb,
            first_byte.saturating_duration_since(started),
        );
        record(&mut self.total, now - started);
    }

    /// Records `n` response bytes received at `now`.
    pub fn received(&mut self, n: usize, now: Instant) {
        self.live.bytes += n as u64;
        if let Some(s) = self.second(now) {
            self.series.bytes[s] += n as u64;
        }
        if self.in_window(now) {
            self.bytes += n as u64;
        }
    }

    /// Records a failure of `kind` observed at `now`.
    pub fn failed(&mut self, kind: ErrorKind, now: Instant) {
        self.live.errors += 1;
        if self.in_window(now) {
            self.errors[kind as usize] += 1;
            if let Some(s) = self.second(now) {
                self.series.errors[kind as usize][s] += 1;
            }
        }
    }

    /// A connection opened (`+1`) or closed (`-1`): the live gauge behind `series.active`.
    pub(crate) fn active_changed(&mut self, opened: bool) {
        if opened {
            self.live.active += 1;
        } else {
            self.live.active = self.live.active.saturating_sub(1);
        }
    }

    /// Samples the open connections for the second ending at `now` (called once a second).
    pub(crate) fn sample_active(&mut self, now: Instant) {
        let Some(elapsed) = now.checked_duration_since(self.window_start) else {
            return;
        };
        // The sample taken at window_start + k s closes second k - 1.
        let k = elapsed.as_millis().saturating_add(500) / 1000;
        if k >= 1 {
            if let Some(slot) = self.series.active.get_mut(k as usize - 1) {
                *slot = self.live.active;
            }
        }
    }

    /// Errors of one kind.
    pub fn errors_of(&self, kind: ErrorKind) -> u64 {
        self.errors[kind as usize]
    }

    /// Keeps only the first `seconds` whole seconds of the per-second series (a run stopped
    /// early).
    pub fn truncate_seconds(&mut self, seconds: usize) {
        self.per_second.truncate(seconds);
        self.series.truncate(seconds);
    }

    /// Adds another thread's stats into these.
    pub fn merge(&mut self, other: &Stats) {
        self.requests += other.requests;
        self.ok += other.ok;
        self.connections += other.connections;
        self.full_handshakes += other.full_handshakes;
        self.hello_retries += other.hello_retries;
        self.resumed_handshakes += other.resumed_handshakes;
        self.resume_attempts += other.resume_attempts;
        self.bytes += other.bytes;
        self.abandoned += other.abandoned;
        add_arrays(&mut self.errors, &other.errors);
        add_arrays(&mut self.status, &other.status);
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.connect.add(&other.connect);
        let _ = self.handshake.add(&other.handshake);
        let _ = self.ttfb.add(&other.ttfb);
        let _ = self.total.add(&other.total);
        for (mine, theirs) in self.per_second.iter_mut().zip(&other.per_second) {
            *mine += theirs;
        }
        self.series.merge(&other.series);
        if self.tls.is_none() {
            self.tls.clone_from(&other.tls);
        }
        self.live.add(&other.live);
    }
}

impl Live {
    /// Adds another thread's counters.
    pub fn add(&mut self, other: &Live) {
        self.requests += other.requests;
        self.connections += other.connections;
        self.errors += other.errors;
        self.bytes += other.bytes;
        self.active += other.active;
    }
}

fn add_arrays<const N: usize>(into: &mut [u64; N], from: &[u64; N]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// An empty latency histogram: 1 µs to one minute, 3 significant figures.
pub fn histogram() -> Histogram<u64> {
    // Constant, valid bounds (1 ≤ low, high ≥ 2·low, 3 significant figures): cannot fail.
    #[allow(clippy::unwrap_used)]
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).unwrap()
}

/// Records a duration in µs, clamped to the histogram's range.
pub fn record(h: &mut Histogram<u64>, took: Duration) {
    let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    h.saturating_record(us.clamp(1, MAX_LATENCY_US));
}

#[cfg(test)]
mod tests;
