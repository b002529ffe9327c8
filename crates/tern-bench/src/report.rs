//! The result of a run: settings, counts, latency percentiles and the client's own CPU cost,
//! printed for people and written as JSON for scripts.
//!
//! The settings are part of the report on purpose: a figure without its TLS parameters,
//! concurrency, CPUs and window is not comparable. The JSON is written by hand (a fixed,
//! flat schema of numbers and a few strings) to keep the generator's dependencies small.

use std::fmt::{self, Write as _};
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::cpu::CpuTime;
use crate::stats::{ErrorKind, Stats};

/// Client CPU use above this share of its CPUs marks a run as possibly client-bound.
pub const CLIENT_BOUND_SHARE: f64 = 0.9;

/// Percentiles reported for each latency histogram, as (label, quantile).
const PERCENTILES: [(&str, f64); 7] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
    ("p99.999", 0.99999),
    ("p99.9999", 0.999999),
];

/// How a run was set up, as reported.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The target URL.
    pub target: String,
    /// Concurrent connections.
    pub connections: u32,
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
}

impl Report {
    /// Completed requests per second of the window.
    pub fn request_rate(&self) -> f64 {
        per_second(self.stats.requests, self.settings.duration)
    }

    /// New connections per second of the window.
    pub fn connection_rate(&self) -> f64 {
        per_second(self.stats.connections, self.settings.duration)
    }

    /// All errors, including 4xx/5xx and unknown statuses.
    pub fn error_count(&self) -> u64 {
        let status = &self.stats.status;
        self.stats.errors.iter().sum::<u64>() + status[3] + status[4] + status[5]
    }

    /// Client CPU µs per request and per connection.
    pub fn cpu_us_per(&self) -> Option<(f64, f64)> {
        let us = self.cpu?.total().as_secs_f64() * 1e6;
        let per = |n: u64| if n == 0 { 0.0 } else { us / n as f64 };
        Some((per(self.stats.requests), per(self.stats.connections)))
    }

    /// Share of the client threads' CPU capacity used (1.0 = every thread busy all the time).
    pub fn cpu_share(&self) -> Option<f64> {
        let cpu = self.cpu?.total().as_secs_f64();
        let capacity = match self.settings.cpus.len() {
            0 => self.settings.threads as usize,
            n => n.min(self.settings.threads as usize),
        };
        let window = self.settings.duration.as_secs_f64() * capacity as f64;
        (window > 0.0).then(|| cpu / window)
    }

    /// Whether the client used more than [`CLIENT_BOUND_SHARE`] of its CPUs.
    pub fn client_bound(&self) -> bool {
        self.cpu_share().is_some_and(|s| s > CLIENT_BOUND_SHARE)
    }

    /// The report as one JSON object.
    pub fn to_json(&self) -> String {
        let s = &self.stats;
        let set = &self.settings;
        let mut j = String::with_capacity(4096);
        j.push('{');
        field(&mut j, "target", &quote(&set.target));
        field(
            &mut j,
            "connections_configured",
            &set.connections.to_string(),
        );
        field(
            &mut j,
            "requests_per_conn",
            &set.requests_per_conn.to_string(),
        );
        field(&mut j, "threads", &set.threads.to_string());
        field(&mut j, "cpus", &format!("{:?}", set.cpus));
        field(
            &mut j,
            "duration_s",
            &set.duration.as_secs_f64().to_string(),
        );
        field(&mut j, "warmup_s", &set.warmup.as_secs_f64().to_string());
        field(&mut j, "timeout_s", &set.timeout.as_secs_f64().to_string());
        field(&mut j, "verify", &quote(set.verify));
        let tls = s.tls.as_ref().map_or("null".to_owned(), |t| {
            format!(
                "{{\"version\":{},\"suite\":{},\"group\":{}}}",
                quote(&t.version),
                quote(&t.suite),
                quote(&t.group)
            )
        });
        field(&mut j, "tls", &tls);
        field(&mut j, "requests", &s.requests.to_string());
        field(&mut j, "requests_per_s", &self.request_rate().to_string());
        field(&mut j, "connections", &s.connections.to_string());
        field(
            &mut j,
            "connections_per_s",
            &self.connection_rate().to_string(),
        );
        let hs = format!(
            "{{\"full\":{},\"hello_retry\":{},\"resumed\":{}}}",
            s.full_handshakes, s.hello_retries, s.resumed_handshakes
        );
        field(&mut j, "handshakes", &hs);
        let mut errors = String::from("{");
        for kind in ErrorKind::ALL {
            field(&mut errors, kind.name(), &s.errors_of(kind).to_string());
        }
        close(&mut errors);
        field(&mut j, "errors", &errors);
        field(&mut j, "errors_total", &self.error_count().to_string());
        let mut status = String::from("{");
        for (name, n) in STATUS_NAMES.iter().zip(s.status) {
            field(&mut status, name, &n.to_string());
        }
        close(&mut status);
        field(&mut j, "status", &status);
        let mut latency = String::from("{");
        for (name, h) in [
            ("connect", &s.connect),
            ("handshake", &s.handshake),
            ("total", &s.total),
        ] {
            field(&mut latency, name, &histogram_json(h));
        }
        close(&mut latency);
        field(&mut j, "latency_us", &latency);
        field(&mut j, "per_second", &format!("{:?}", s.per_second));
        field(&mut j, "client_cpu", &self.cpu_json());
        close(&mut j);
        j
    }

    fn cpu_json(&self) -> String {
        let (Some(cpu), Some((per_req, per_conn)), Some(share)) =
            (self.cpu, self.cpu_us_per(), self.cpu_share())
        else {
            return "null".to_owned();
        };
        format!(
            "{{\"user_s\":{},\"system_s\":{},\"us_per_request\":{per_req},\
             \"us_per_connection\":{per_conn},\"share\":{share},\"client_bound\":{}}}",
            cpu.user.as_secs_f64(),
            cpu.system.as_secs_f64(),
            self.client_bound()
        )
    }
}

const STATUS_NAMES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "other"];

fn per_second(n: u64, window: Duration) -> f64 {
    let secs = window.as_secs_f64();
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn histogram_json(h: &Histogram<u64>) -> String {
    let mut j = String::from("{");
    field(&mut j, "count", &h.len().to_string());
    for (label, q) in PERCENTILES {
        field(&mut j, label, &h.value_at_quantile(q).to_string());
    }
    field(&mut j, "max", &h.max().to_string());
    field(&mut j, "mean", &format!("{:.1}", h.mean()));
    close(&mut j);
    j
}

/// Appends `"name":value,` to an object under construction.
fn field(j: &mut String, name: &str, value: &str) {
    let _ = write!(j, "{}:{value},", quote(name));
}

/// Ends an object: replaces a trailing comma with `}`.
fn close(j: &mut String) {
    if j.ends_with(',') {
        j.pop();
    }
    j.push('}');
}

/// A JSON string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, set) = (&self.stats, &self.settings);
        writeln!(f, "target      {}", set.target)?;
        let cpus = match set.cpus.as_slice() {
            [] => "not pinned".to_owned(),
            list => format!("CPUs {list:?}"),
        };
        writeln!(
            f,
            "settings    connections {}, requests/connection {}, threads {} ({cpus}), \
             {:.1} s measured after {:.1} s warm-up, timeout {:.1} s",
            set.connections,
            match set.requests_per_conn {
                0 => "unlimited".to_owned(),
                n => n.to_string(),
            },
            set.threads,
            set.duration.as_secs_f64(),
            set.warmup.as_secs_f64(),
            set.timeout.as_secs_f64()
        )?;
        if let Some(tls) = &s.tls {
            writeln!(
                f,
                "tls         {} {} {}, certificate {}",
                tls.version, tls.suite, tls.group, set.verify
            )?;
        }
        writeln!(
            f,
            "requests    {} ({:.1}/s)   connections {} ({:.1}/s)",
            s.requests,
            self.request_rate(),
            s.connections,
            self.connection_rate()
        )?;
        if s.tls.is_some() || s.full_handshakes + s.resumed_handshakes > 0 {
            writeln!(
                f,
                "handshakes  full {} ({} with HelloRetryRequest), resumed {}",
                s.full_handshakes, s.hello_retries, s.resumed_handshakes
            )?;
        }
        write!(f, "responses  ")?;
        for (name, n) in STATUS_NAMES.iter().zip(s.status) {
            write!(f, " {name} {n}")?;
        }
        write!(f, "\nerrors      {} (", self.error_count())?;
        for (i, kind) in ErrorKind::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{} {}", kind.name(), s.errors_of(*kind))?;
        }
        writeln!(f, ")")?;
        self.fmt_latency(f)?;
        self.fmt_cpu(f)
    }
}

impl Report {
    fn fmt_latency(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "latency µs ")?;
        for (label, _) in &PERCENTILES[..5] {
            write!(f, " {label:>8}")?;
        }
        writeln!(f, " {:>8} {:>8}", "max", "mean")?;
        let s = &self.stats;
        for (name, h) in [
            ("connect", &s.connect),
            ("handshake", &s.handshake),
            ("total", &s.total),
        ] {
            if h.is_empty() {
                continue;
            }
            write!(f, "  {name:<9}")?;
            for (_, q) in &PERCENTILES[..5] {
                write!(f, " {:>8}", h.value_at_quantile(*q))?;
            }
            writeln!(f, " {:>8} {:>8.0}", h.max(), h.mean())?;
        }
        let busy = s.per_second.iter().copied();
        if let (Some(min), Some(max)) = (busy.clone().min(), busy.max()) {
            writeln!(f, "per second  min {min}, max {max} responses")?;
        }
        Ok(())
    }

    fn fmt_cpu(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (Some(cpu), Some((per_req, per_conn)), Some(share)) =
            (self.cpu, self.cpu_us_per(), self.cpu_share())
        else {
            return writeln!(f, "client cpu  unavailable (/proc/self/stat not readable)");
        };
        writeln!(
            f,
            "client cpu  user {:.2} s + system {:.2} s = {:.0}% of its CPUs; \
             {per_req:.1} µs per request, {per_conn:.1} µs per connection",
            cpu.user.as_secs_f64(),
            cpu.system.as_secs_f64(),
            share * 100.0
        )?;
        if self.client_bound() {
            writeln!(
                f,
                "WARNING     the client used more than {:.0}% of its CPUs: the result may be \
                 limited by the client, not the server (add --threads/--cpus)",
                CLIENT_BOUND_SHARE * 100.0
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn json_is_well_formed_enough() {
        let now = Instant::now();
        let mut stats = Stats::new(now, now + Duration::from_secs(1));
        stats.responded(200, now, now + Duration::from_millis(3));
        let report = Report {
            settings: Settings {
                target: "http://a\"b/".into(),
                connections: 1,
                requests_per_conn: 0,
                threads: 1,
                cpus: vec![1],
                duration: Duration::from_secs(1),
                warmup: Duration::ZERO,
                timeout: Duration::from_secs(2),
                verify: "none",
            },
            stats,
            cpu: Some(CpuTime {
                user: Duration::from_millis(950),
                system: Duration::ZERO,
            }),
        };
        let json = report.to_json();
        assert!(
            json.starts_with("{\"target\":\"http://a\\\"b/\","),
            "{json}"
        );
        assert!(json.contains("\"requests\":1,"));
        assert!(
            json.contains("\"p99.9999\":300"),
            "3 ms, within histogram precision"
        );
        assert!(json.contains("\"client_bound\":true}"));
        assert_eq!(json.matches('{').count(), json.matches('}').count());
        assert!(!json.contains(",}"));
        assert!(report.to_string().contains("WARNING"));
    }
}
