//! The three reports: `report.md` (tables to read and paste), `report.html` (the same tables
//! with inline SVG charts, one self-contained file) and `report.json` (everything, including
//! every run's own `tern bench` report).
//!
//! Per workload and target the tables give the median over runs with the min–max spread, and
//! the ratio to tern measured in the same suite run: on a shared machine the absolute figures
//! drift, the side-by-side ratios are the result (docs: benchmarking rules 7 and 8).

pub mod charts;
mod html;
mod markdown;
pub mod svg;
pub mod tables;

#[cfg(test)]
mod tests;

use std::path::Path;

use anyhow::Context as _;

use crate::results::{Measured, Outcome, Percentiles, SuiteReport, WorkloadResult};

pub use html::render as render_html;
pub use markdown::render as render_markdown;

/// Writes report.md, report.html and report.json into `out`.
pub fn write_all(report: &SuiteReport, out: &Path) -> anyhow::Result<()> {
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    write("report.md", render_markdown(report))?;
    write("report.html", render_html(report))?;
    // Compact: every run embeds its generator report (percentile curves, per-second series),
    // which pretty-printing would spread over tens of thousands of lines. Use jq to read it.
    let json = serde_json::to_string(report).context("cannot encode report.json")?;
    write("report.json", json + "\n")
}

/// Median and spread of a set of values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Option<Self> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2.0
        };
        Some(Self {
            median,
            min: v[0],
            max: v[v.len() - 1],
        })
    }
}

/// One target's results on one workload, over its runs.
#[derive(Debug, Clone)]
pub struct TargetSummary<'a> {
    pub target: &'a str,
    pub not_applicable: Option<&'a str>,
    pub failures: Vec<(u32, &'a str)>,
    pub measured: Vec<(u32, &'a Measured)>,
    pub rate: Option<Spread>,
    pub cpu_per_op: Option<Spread>,
    /// Share of the target's CPUs it used (median over runs).
    pub cpu_share: Option<Spread>,
    /// Operations per second of the target's CPU time (1 ÷ CPU per op): connections or
    /// requests per CPU-second, the efficiency figure of a client-bound run.
    pub per_cpu_s: Option<Spread>,
    pub gbps: Option<Spread>,
    /// Gbit/s per core: what the client received per second of the target's CPU time.
    pub gbps_per_core: Option<Spread>,
    /// Median of each percentile over the runs.
    pub latency: Percentiles,
    pub errors: u64,
    pub full: u64,
    pub resumed: u64,
    pub server_full: Option<u64>,
    pub server_resumed: Option<u64>,
}

/// Summaries of every target that appears in `w`, in order of first appearance.
pub fn summarize(w: &WorkloadResult) -> Vec<TargetSummary<'_>> {
    let mut order: Vec<&str> = Vec::new();
    for r in &w.runs {
        if !order.contains(&r.target.as_str()) {
            order.push(&r.target);
        }
    }
    order.into_iter().map(|t| summarize_target(w, t)).collect()
}

fn summarize_target<'a>(w: &'a WorkloadResult, target: &'a str) -> TargetSummary<'a> {
    let mut s = TargetSummary {
        target,
        not_applicable: None,
        failures: Vec::new(),
        measured: Vec::new(),
        rate: None,
        cpu_per_op: None,
        cpu_share: None,
        per_cpu_s: None,
        gbps: None,
        gbps_per_core: None,
        latency: Percentiles::default(),
        errors: 0,
        full: 0,
        resumed: 0,
        server_full: None,
        server_resumed: None,
    };
    for r in w.runs.iter().filter(|r| r.target == target) {
        match &r.outcome {
            Outcome::Measured(m) => s.measured.push((r.run, m)),
            Outcome::NotApplicable { reason } => s.not_applicable = Some(reason),
            Outcome::Failed { error } => s.failures.push((r.run, error)),
        }
    }
    let ms: Vec<&Measured> = s.measured.iter().map(|(_, m)| *m).collect();
    let rates: Vec<f64> = ms.iter().map(|m| m.client.rate).collect();
    s.rate = Spread::of(&rates);
    s.cpu_share = Spread::of(
        &ms.iter()
            .filter_map(|m| m.target_cpu_share)
            .collect::<Vec<_>>(),
    );
    s.cpu_per_op = Spread::of(
        &ms.iter()
            .filter_map(|m| m.cpu_us_per_op)
            .collect::<Vec<_>>(),
    );
    s.per_cpu_s = Spread::of(
        &ms.iter()
            .filter_map(|m| m.cpu_us_per_op.filter(|c| *c > 0.0).map(|c| 1e6 / c))
            .collect::<Vec<_>>(),
    );
    // Throughput matters for bulk responses only; for small pages it is noise.
    if let Some(bytes) = w.response_bytes.filter(|b| *b >= 64 * 1024) {
        // Bytes the client received when it counted them, else responses × body size.
        let per_req = |m: &&Measured| m.client.requests as f64 / m.client.ops.max(1) as f64;
        let bps = |m: &&Measured| match m.client.byte_rate {
            b if b > 0.0 => b,
            _ => m.client.rate * per_req(m) * bytes as f64,
        };
        let g: Vec<f64> = ms.iter().map(|m| bps(m) * 8.0 / 1e9).collect();
        s.gbps = Spread::of(&g);
        // CPU-seconds the target spent per second of the window: CPU per op × ops per second.
        let per_core: Vec<f64> = ms
            .iter()
            .zip(&g)
            .filter_map(|(m, g)| {
                let cpu_s_per_s = m.cpu_us_per_op? * m.client.rate / 1e6;
                (cpu_s_per_s > 0.0).then(|| g / cpu_s_per_s)
            })
            .collect();
        s.gbps_per_core = Spread::of(&per_core);
    }
    s.latency = median_percentiles(&ms.iter().map(|m| m.client.latency).collect::<Vec<_>>());
    for m in &ms {
        s.errors += m.client.errors;
        s.full += m.client.full_handshakes;
        s.resumed += m.client.resumed_handshakes;
        s.server_full = add(s.server_full, m.server.full);
        s.server_resumed = add(s.server_resumed, m.server.resumed);
    }
    s
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (x, None) => x,
        (None, Some(y)) => Some(y),
        (Some(x), Some(y)) => Some(x + y),
    }
}

fn median_percentiles(all: &[Percentiles]) -> Percentiles {
    let med = |f: fn(&Percentiles) -> u64| {
        Spread::of(&all.iter().map(|p| f(p) as f64).collect::<Vec<_>>())
            .map_or(0, |s| s.median as u64)
    };
    Percentiles {
        count: all.iter().map(|p| p.count).sum(),
        p50: med(|p| p.p50),
        p90: med(|p| p.p90),
        p99: med(|p| p.p99),
        p99_9: med(|p| p.p99_9),
        p99_99: med(|p| p.p99_99),
        p99_999: med(|p| p.p99_999),
        p99_9999: med(|p| p.p99_9999),
        max: all.iter().map(|p| p.max).max().unwrap_or(0),
        mean: Spread::of(&all.iter().map(|p| p.mean).collect::<Vec<_>>()).map_or(0.0, |s| s.median),
    }
}

/// "1,234" style grouping for rates and counts.
pub fn group(v: f64) -> String {
    let rounded = v.round() as i128;
    let digits = rounded.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if rounded < 0 {
        out.insert(0, '-');
    }
    out
}

/// A rate with its spread: "3,012 (2,990–3,050)", or just the value for one run.
pub fn spread_text(s: &Spread, fmt: fn(f64) -> String) -> String {
    if (s.max - s.min).abs() < f64::EPSILON {
        fmt(s.median)
    } else {
        format!("{} ({}–{})", fmt(s.median), fmt(s.min), fmt(s.max))
    }
}

/// CPU µs with one decimal.
pub fn us1(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The ratio of this target to tern, "1.38×", when both have a value.
pub fn ratio(value: Option<f64>, tern: Option<f64>) -> String {
    match (value, tern) {
        (Some(v), Some(t)) if t > 0.0 => format!("{:.2}×", v / t),
        _ => "—".to_owned(),
    }
}

/// The progress line printed after each measurement.
pub fn summary_line(outcome: &Outcome, per_connection: bool) -> String {
    match outcome {
        Outcome::NotApplicable { reason } => format!("n/a: {reason}"),
        Outcome::Failed { error } => format!("FAILED: {error}"),
        Outcome::Measured(m) => {
            let c = &m.client;
            let unit = if per_connection { "conn/s" } else { "req/s" };
            let cpu = m.cpu_us_per_op.map_or("n/a".to_owned(), us1);
            format!(
                "{} {unit}, target {cpu} CPU-µs/op, p99 {}, max {}, {} errors, handshakes full {} resumed {}{}",
                group(c.rate),
                svg::latency(c.latency.p99 as f64),
                svg::latency(c.latency.max as f64),
                c.errors,
                c.full_handshakes,
                c.resumed_handshakes,
                if c.client_bound { " (client-bound)" } else { "" }
            )
        }
    }
}
