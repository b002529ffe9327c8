//! The tables of a workload as rows of text, shared by the Markdown and HTML writers so both
//! always show the same figures.

use super::svg::latency;
use super::{group, ratio, spread_text, summarize, us1, TargetSummary};
use crate::results::{FindMax, WorkloadResult};

/// A table: header cells and rows of cells (a row may be shorter: a note spanning the rest).
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Per target: medians and spreads, latencies, errors, handshakes, ratios to tern.
pub fn summary(w: &WorkloadResult) -> Table {
    let sums = summarize(w);
    let tern = sums.iter().find(|s| s.target == "tern");
    let tern_rate = tern.and_then(|t| t.rate).map(|s| s.median);
    let tern_cpu = tern.and_then(|t| t.cpu_per_op).map(|s| s.median);
    let gbps = sums.iter().any(|s| s.gbps.is_some());
    let mut header: Vec<String> = [
        "target",
        w.unit.as_str(),
        "CPU-µs/op",
        "per CPU-s",
        "target CPU use",
        "p50",
        "p99",
        "p99.9",
        "p99.9999",
        "max",
        "mean",
        "errors",
        "handshakes full / resumed (client)",
        "(server)",
    ]
    .map(str::to_owned)
    .to_vec();
    if gbps {
        header.extend(["Gbit/s".to_owned(), "Gbit/s per core".to_owned()]);
    }
    header.extend(["vs tern: rate".to_owned(), "vs tern: CPU/op".to_owned()]);
    let rows = sums
        .iter()
        .map(|s| row(s, gbps, tern_rate, tern_cpu))
        .collect();
    Table { header, rows }
}

fn row(
    s: &TargetSummary<'_>,
    gbps: bool,
    tern_rate: Option<f64>,
    tern_cpu: Option<f64>,
) -> Vec<String> {
    let Some(rate) = s.rate else {
        let why = match (s.not_applicable, s.failures.first()) {
            (Some(r), _) => format!("n/a: {r}"),
            (None, Some((run, e))) => format!("failed (run {run}): {e}"),
            _ => "no measurement".to_owned(),
        };
        return vec![s.target.to_owned(), why];
    };
    let l = &s.latency;
    let count = |v: Option<u64>| v.map_or("—".to_owned(), |v| group(v as f64));
    let server = match (s.server_full, s.server_resumed) {
        (None, None) => "—".to_owned(),
        (f, r) => format!("{} / {}", count(f), count(r)),
    };
    // A run the generator judged invalid (client-bound, unsteady, stopped early) is flagged;
    // the workload's notes say why.
    let flag = if s.measured.iter().any(|(_, m)| !m.client.valid) {
        " †"
    } else {
        ""
    };
    let mut cells = vec![
        s.target.to_owned(),
        format!("{}{flag}", spread_text(&rate, group)),
        s.cpu_per_op
            .map_or("—".to_owned(), |c| spread_text(&c, us1)),
        s.per_cpu_s
            .map_or("—".to_owned(), |c| spread_text(&c, group)),
        s.cpu_share
            .map_or("—".to_owned(), |c| format!("{:.0} %", c.median * 100.0)),
        latency(l.p50 as f64),
        latency(l.p99 as f64),
        latency(l.p99_9 as f64),
        latency(l.p99_9999 as f64),
        latency(l.max as f64),
        latency(l.mean),
        group(s.errors as f64),
        format!("{} / {}", group(s.full as f64), group(s.resumed as f64)),
        server,
    ];
    if gbps {
        for g in [s.gbps, s.gbps_per_core] {
            cells.push(g.map_or("—".to_owned(), |g| spread_text(&g, |v| format!("{v:.2}"))));
        }
    }
    cells.push(ratio(Some(rate.median), tern_rate));
    cells.push(ratio(s.cpu_per_op.map(|c| c.median), tern_cpu));
    cells
}

/// Per-run figures, like seed 004's table (run 1, run 2, run 3), with the SLO search result.
pub fn runs(w: &WorkloadResult) -> Option<Table> {
    let sums = summarize(w);
    let runs = w.runs.iter().map(|r| r.run).max().unwrap_or(0);
    if runs == 0 || sums.iter().all(|s| s.measured.is_empty()) {
        return None;
    }
    let mut header = vec![format!("{} per run", w.unit)];
    header.extend((1..=runs).map(|i| format!("run {i}")));
    header.extend(["CPU-µs/op per run", "find-max", "allowed CPUs (/proc)"].map(str::to_owned));
    let mut rows = Vec::new();
    for s in sums.iter().filter(|s| !s.measured.is_empty()) {
        let mut cells = vec![s.target.to_owned()];
        for i in 1..=runs {
            let v = s
                .measured
                .iter()
                .find(|(r, _)| *r == i)
                .map(|(_, m)| group(m.client.rate));
            let failed = s.failures.iter().any(|(r, _)| *r == i);
            cells.push(v.unwrap_or_else(|| {
                if failed {
                    "failed".into()
                } else {
                    "—".into()
                }
            }));
        }
        let cpus: Vec<String> = s
            .measured
            .iter()
            .map(|(_, m)| m.cpu_us_per_op.map_or("—".into(), us1))
            .collect();
        cells.push(cpus.join(", "));
        cells.push(find_max(s));
        let pinned = s.measured.first().map(|(_, m)| m.affinity.join("; "));
        cells.push(pinned.unwrap_or_default());
        rows.push(cells);
    }
    Some(Table { header, rows })
}

/// Remarks on the runs (generator features missing, runs the generator marked invalid: †),
/// each with the target and run it concerns.
pub fn notes(w: &WorkloadResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &w.runs {
        for p in r
            .outcome
            .measured()
            .into_iter()
            .flat_map(|m| &m.client.notes)
        {
            let note = format!("{} run {}: {p}", r.target, r.run);
            if !out.contains(&note) {
                out.push(note);
            }
        }
    }
    out
}

fn find_max(s: &TargetSummary<'_>) -> String {
    let found: Vec<String> = s
        .measured
        .iter()
        .filter_map(|(_, m)| match &m.find_max {
            Some(FindMax::Found {
                rate, low, high, ..
            }) => Some(format!(
                "{} ({}–{})",
                group(*rate),
                group(*low),
                group(*high)
            )),
            Some(FindMax::Unconfirmed { rate, stop, .. }) => {
                Some(format!("≥ {} (unconfirmed: {stop})", group(*rate)))
            }
            Some(FindMax::Pending { .. }) => Some("pending".into()),
            Some(FindMax::Failed { error }) => Some(format!("failed: {error}")),
            None => None,
        })
        .collect();
    if found.is_empty() {
        "—".into()
    } else if found.iter().all(|f| f == "pending") {
        "pending".into()
    } else {
        found.join("; ")
    }
}
