//! The profiling report: every thread's table summed per kind, as plain numbers and as a text
//! table laid out like HAProxy's `show profiling` (`calls tot_cpu avg_cpu tot_lat avg_lat`).

use std::fmt;
use std::sync::atomic::Ordering;

use super::{enabled, Kind};
use crate::stats::{Stats, WorkerStats};

/// The profile of one kind, summed over the workers and the health checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileRow {
    pub kind: Kind,
    /// Polls of futures of this kind.
    pub calls: u64,
    /// Time spent in those polls, in nanoseconds (nested phases excluded).
    pub cpu_ns: u64,
    /// Scheduling latency in nanoseconds: from wake-ups to the polls that followed them.
    pub lat_ns: u64,
    /// Wake-ups measured in `lat_ns` (first polls and polls nobody woke have none).
    pub wakes: u64,
}

impl ProfileRow {
    /// The kind's name (`accept`, `tls_handshake`, ...).
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// Mean time per poll, if any poll was measured.
    pub fn avg_cpu_ns(&self) -> Option<u64> {
        self.cpu_ns.checked_div(self.calls)
    }

    /// Mean latency per wake-up, if any was measured.
    pub fn avg_lat_ns(&self) -> Option<u64> {
        self.lat_ns.checked_div(self.wakes)
    }

    /// `name=value` pairs, for the `stats: profile` exit lines.
    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("calls", self.calls),
            ("cpu_ns", self.cpu_ns),
            ("lat_ns", self.lat_ns),
            ("wakes", self.wakes),
        ]
    }
}

/// What `show profiling` shows: whether profiling is on, and a row per kind (every kind, in
/// [`Kind::ALL`] order, zero rows included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileReport {
    pub enabled: bool,
    pub rows: Vec<ProfileRow>,
}

impl ProfileReport {
    /// The report of these rows (e.g. `StatsSnapshot::profile`, merged over generations), with
    /// the current state of the switch.
    pub fn new(rows: Vec<ProfileRow>) -> Self {
        Self {
            enabled: enabled(),
            rows,
        }
    }

    /// The row of `kind`.
    pub fn row(&self, kind: Kind) -> Option<&ProfileRow> {
        self.rows.iter().find(|r| r.kind == kind)
    }

    /// Whether anything was recorded (profiling was on while something ran).
    pub fn is_empty(&self) -> bool {
        self.rows.iter().all(|r| r.calls == 0)
    }
}

/// Adds the rows of `other` to `mine` by kind (an old generation's profile into the current
/// one's).
pub fn absorb(mine: &mut Vec<ProfileRow>, other: &[ProfileRow]) {
    for o in other {
        match mine.iter_mut().find(|m| m.kind == o.kind) {
            Some(m) => {
                m.calls += o.calls;
                m.cpu_ns += o.cpu_ns;
                m.lat_ns += o.lat_ns;
                m.wakes += o.wakes;
            }
            None => mine.push(*o),
        }
    }
}

/// Sums the profiling tables of every worker and of the health checker.
pub fn report(stats: &Stats) -> ProfileReport {
    sum(stats.workers.iter().map(|w| &**w))
}

/// Sums these tables.
pub(crate) fn sum<'a>(tables: impl Iterator<Item = &'a WorkerStats> + Clone) -> ProfileReport {
    let rows = Kind::ALL
        .iter()
        .map(|&kind| {
            let mut row = ProfileRow {
                kind,
                calls: 0,
                cpu_ns: 0,
                lat_ns: 0,
                wakes: 0,
            };
            for w in tables.clone() {
                for table in [&w.profile, &w.offload_profile] {
                    let c = table.kind(kind);
                    row.calls += c.calls.load(Ordering::Relaxed);
                    row.cpu_ns += c.cpu_ns.load(Ordering::Relaxed);
                    row.lat_ns += c.lat_ns.load(Ordering::Relaxed);
                    row.wakes += c.wakes.load(Ordering::Relaxed);
                }
            }
            row
        })
        .collect();
    ProfileReport {
        enabled: enabled(),
        rows,
    }
}

impl fmt::Display for ProfileReport {
    /// Kinds with at least one call, with durations in HAProxy's units (`294.0ns`, `2.477us`,
    /// `9.089s`, `12.44m`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = if self.enabled { "on" } else { "off" };
        writeln!(f, "Tasks activity (profiling {state}):")?;
        writeln!(
            f,
            "  {:<14} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "kind", "calls", "tot_cpu", "avg_cpu", "tot_lat", "avg_lat"
        )?;
        if self.is_empty() {
            return writeln!(f, "  (nothing recorded: turn profiling on to measure)");
        }
        for r in self.rows.iter().filter(|r| r.calls > 0) {
            let opt = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), duration);
            let lat = if r.wakes == 0 {
                "-".to_owned()
            } else {
                duration(r.lat_ns)
            };
            writeln!(
                f,
                "  {:<14} {:>10} {:>10} {:>10} {:>10} {:>10}",
                r.name(),
                r.calls,
                duration(r.cpu_ns),
                opt(r.avg_cpu_ns()),
                lat,
                opt(r.avg_lat_ns()),
            )?;
        }
        Ok(())
    }
}

/// A duration in nanoseconds with four significant digits and HAProxy's units: `ns`, `us`,
/// `ms`, `s`, then `m` and `h` (minutes, hours).
pub(crate) fn duration(ns: u64) -> String {
    const UNITS: [(f64, &str); 6] = [
        (1.0, "ns"),
        (1e3, "us"),
        (1e6, "ms"),
        (1e9, "s"),
        (60e9, "m"),
        (3600e9, "h"),
    ];
    let v = ns as f64;
    let (scale, unit) = UNITS
        .iter()
        .rev()
        .find(|(scale, _)| v >= *scale)
        .copied()
        .unwrap_or(UNITS[0]);
    let x = v / scale;
    let decimals = match x {
        x if x >= 100.0 => 1,
        x if x >= 10.0 => 2,
        _ => 3,
    };
    if unit == "ns" {
        return format!("{ns}.0ns");
    }
    format!("{x:.decimals$}{unit}")
}
