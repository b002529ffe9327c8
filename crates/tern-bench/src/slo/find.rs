//! The adapter between the search and the real generator: each trial is a `tern bench` run at
//! a fixed arrival rate (`--rate`), its [`Report`] mapped to a [`TrialOutcome`]; and the
//! search's report, as a table for people and JSON for scripts.
//!
//! What counts as achieved: successful responses per second of the measured window, in both
//! modes; with `--requests-per-conn 1` each response is one connection with its full handshake,
//! so the rate is a connection rate and is labelled so. The run's own validity verdict is not
//! the trial's: a generator over its CPU share is client-bound, but a per-second series that is
//! not flat under overload is the target failing, which the SLO already judges. Latencies come
//! from the `total` histogram, which the open-loop generator measures from each request's
//! intended start.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::args::SloArgs;
use super::outcome::{ms, Criteria, TrialOutcome};
use super::result::{SloResult, StopReason};
use super::search::Search;
use crate::report::per_second;
use crate::{BenchArgs, BenchError, Report};

/// Quantiles always shown in the trial table, whether or not the SLO bounds them.
const SHOWN: [(&str, f64); 2] = [("p99", 0.99), ("p99.9", 0.999)];

/// `tern bench --find-max`: runs the search with Ctrl-C handling, prints the report and
/// writes it to `--json` if asked.
pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    crate::install_stop_signals(stop.clone());
    let report = find_max(args, &args.slo, stop)?;
    print!("{report}");
    if let Some(path) = &args.json {
        let mut json = report.to_json_value().to_string();
        json.push('\n');
        std::fs::write(path, json).map_err(|cause| BenchError::Json {
            path: path.clone(),
            cause,
        })?;
    }
    if report.result.stop == StopReason::Interrupted {
        return Err(BenchError::Interrupted.into());
    }
    Ok(())
}

/// Runs the SLO search against `args`' target, one open-loop run per trial (`args.rate` is
/// replaced by the search's rate). Progress goes to stderr unless `--quiet`. When `stop`
/// becomes true the running trial is discarded and the report covers the trials before it.
pub fn find_max(
    args: &BenchArgs,
    slo: &SloArgs,
    stop: Arc<AtomicBool>,
) -> Result<FindMaxReport, BenchError> {
    let criteria = slo.criteria();
    let mut search = Search::new(slo.config());
    let quiet = args.quiet;
    while let Some(plan) = search.next() {
        let started = Instant::now();
        if !search.trials().is_empty() {
            pause(slo.trial_pause, &stop);
        }
        if stop.load(Ordering::Relaxed) {
            search.stop(StopReason::Interrupted);
            break;
        }
        if !quiet {
            eprintln!(
                "find-max    trial {} ({}) at {:.1}/s",
                search.trials().len() + 1,
                plan.phase().name(),
                plan.rate()
            );
        }
        let report = run_trial(args, plan.rate(), &stop)?;
        if stop.load(Ordering::Relaxed) {
            search.stop(StopReason::Interrupted);
            break;
        }
        let outcome = outcome_from_report(&report, plan.rate(), &criteria, started.elapsed());
        let verdict = search.record(plan, outcome);
        if !quiet {
            eprintln!("find-max    → {verdict}");
        }
    }
    Ok(FindMaxReport::new(
        args.url.to_string(),
        unit(args),
        criteria,
        search.finish(),
    ))
}

/// Waits `pause` between trials, returning early once `stop` is set.
fn pause(pause: Duration, stop: &AtomicBool) {
    let end = Instant::now() + pause;
    loop {
        let now = Instant::now();
        if now >= end || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

/// One trial: the user's settings with an open-loop arrival rate. The only place that knows
/// how a run is started.
fn run_trial(args: &BenchArgs, rate: f64, stop: &Arc<AtomicBool>) -> Result<Report, BenchError> {
    let mut trial = args.clone();
    trial.rate = Some(rate);
    trial.json = None;
    crate::execute_with_stop(&trial, stop.clone())
}

/// "connections" when every request has its own connection, else "requests".
fn unit(args: &BenchArgs) -> &'static str {
    if args.requests_per_conn == 1 {
        "connections"
    } else {
        "requests"
    }
}

/// Maps a run's report to what the search judges.
pub(crate) fn outcome_from_report(
    report: &Report,
    rate: f64,
    criteria: &Criteria,
    elapsed: Duration,
) -> TrialOutcome {
    let total = &report.stats.total;
    let us = Duration::from_micros;
    let mut quantiles: Vec<(f64, Duration)> = Vec::new();
    if !total.is_empty() {
        let wanted = SHOWN
            .iter()
            .map(|&(_, q)| q)
            .chain(criteria.quantiles.iter().map(|b| b.quantile));
        for q in wanted {
            if !quantiles.iter().any(|&(have, _)| have == q) {
                quantiles.push((q, us(total.value_at_quantile(q))));
            }
        }
    }
    TrialOutcome {
        offered: rate,
        achieved: per_second(report.stats.ok, report.measured),
        completed: report.stats.ok,
        errors: report.error_count(),
        max_latency: us(total.max()),
        quantiles,
        client_cpu: report.cpu_share(),
        client_bound: report.client_bound(),
        invalid: report
            .partial
            .then(|| "stopped before the end of its window".to_owned()),
        window: report.measured,
        elapsed,
    }
}

/// The result of `--find-max`, with what was searched for.
#[derive(Debug, Clone)]
pub struct FindMaxReport {
    /// The target URL.
    pub target: String,
    /// "connections" or "requests" (per second).
    pub unit: &'static str,
    /// The SLO.
    pub criteria: Criteria,
    /// The search.
    pub result: SloResult,
}

impl FindMaxReport {
    /// Bundles a search result with its context.
    pub fn new(target: String, unit: &'static str, criteria: Criteria, result: SloResult) -> Self {
        Self {
            target,
            unit,
            criteria,
            result,
        }
    }

    /// The report as a JSON object (schema in the field names; durations in ms, rates per s).
    pub fn to_json_value(&self) -> Value {
        let r = &self.result;
        let c = &self.criteria;
        let trials: Vec<Value> = r
            .trials
            .iter()
            .map(|t| {
                let o = &t.outcome;
                let quantiles: serde_json::Map<String, Value> = o
                    .quantiles
                    .iter()
                    .map(|&(q, d)| (quantile_label(q), json!(millis(d))))
                    .collect();
                json!({
                    "rate": t.rate,
                    "phase": t.phase.name(),
                    "achieved": o.achieved,
                    "completed": o.completed,
                    "errors": o.errors,
                    "max_latency_ms": millis(o.max_latency),
                    "quantiles_ms": quantiles,
                    "client_cpu_share": o.client_cpu,
                    "client_bound": o.client_bound,
                    "invalid": o.invalid,
                    "elapsed_s": o.elapsed.as_secs_f64(),
                    "verdict": t.verdict.word(),
                    "detail": t.verdict.to_string(),
                })
            })
            .collect();
        let confirmation = r.confirmed.as_ref().map(|c| {
            json!({
                "rate": c.rate, "runs": c.achieved, "median": c.median, "min": c.min, "max": c.max,
            })
        });
        let bounds: Vec<Value> = c
            .quantiles
            .iter()
            .map(|q| json!({"label": q.label, "quantile": q.quantile, "bound_ms": millis(q.bound)}))
            .collect();
        json!({
            "target": self.target,
            "unit": format!("{}/s", self.unit),
            "slo": {
                "max_latency_ms": millis(c.max_latency),
                "quantiles": bounds,
                "min_achieved": c.min_achieved,
                "max_errors": 0,
            },
            "max_rate": r.max_rate(),
            "confirmation": confirmation,
            "best_passed": r.best_passed,
            "lowest_failed": r.lowest_failed,
            "client_bound": r.client_bound(),
            "stop": {"reason": stop_name(&r.stop), "detail": r.stop.to_string()},
            "spent_s": r.spent.as_secs_f64(),
            "trials": trials,
        })
    }
}

impl fmt::Display for FindMaxReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.criteria;
        write!(
            f,
            "find-max    {}: {}/s with 0 errors, no request over {}",
            self.target,
            self.unit,
            ms(c.max_latency)
        )?;
        for q in &c.quantiles {
            write!(f, ", {} ≤ {}", q.label, ms(q.bound))?;
        }
        writeln!(f, ", ≥ {:.0}% of offered completed", c.min_achieved * 100.0)?;
        writeln!(
            f,
            "  # phase    offered/s achieved/s   errors   max ms   p99 ms p99.9 ms client  verdict"
        )?;
        for (i, t) in self.result.trials.iter().enumerate() {
            let o = &t.outcome;
            let q = |q: f64| {
                o.quantile(q)
                    .map_or("-".to_owned(), |d| format!("{:.1}", millis(d)))
            };
            writeln!(
                f,
                "{:>3} {:<8} {:>9.1} {:>10.1} {:>8} {:>8.1} {:>8} {:>8} {:>6}  {}",
                i + 1,
                t.phase.name(),
                t.rate,
                o.achieved,
                o.errors,
                millis(o.max_latency),
                q(0.99),
                q(0.999),
                o.client_cpu
                    .map_or("-".to_owned(), |c| format!("{:.0}%", c * 100.0)),
                t.verdict
            )?;
        }
        self.fmt_verdict(f)?;
        writeln!(
            f,
            "stopped     {} ({} trials, {:.0} s)",
            self.result.stop,
            self.result.trials.len(),
            self.result.spent.as_secs_f64()
        )
    }
}

impl FindMaxReport {
    fn fmt_verdict(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.result;
        let unit = self.unit;
        if r.trials.is_empty() {
            return writeln!(f, "result      no trial completed");
        }
        match (&r.confirmed, r.best_passed) {
            (Some(c), _) => {
                let spread = if c.median > 0.0 {
                    (c.max - c.min) / c.median * 50.0
                } else {
                    0.0
                };
                let what = if r.client_bound() {
                    "the target sustains at least"
                } else {
                    "maximum sustainable rate"
                };
                writeln!(
                    f,
                    "result      {what} {:.1} {unit}/s, confirmed by {} runs: achieved median \
                     {:.1}, min–max {:.1}–{:.1} (±{spread:.1}%)",
                    c.rate,
                    c.achieved.len(),
                    c.median,
                    c.min,
                    c.max
                )
            }
            (None, Some(best)) => writeln!(
                f,
                "result      not confirmed; the best passing rate was {best:.1} {unit}/s"
            ),
            (None, None) => writeln!(f, "result      no rate met the SLO"),
        }
    }
}

fn stop_name(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::Converged => "converged",
        StopReason::Ceiling => "ceiling",
        StopReason::ClientBound { .. } => "client_bound",
        StopReason::Invalid { .. } => "invalid",
        StopReason::NothingPassed => "nothing_passed",
        StopReason::Unconfirmed => "unconfirmed",
        StopReason::TrialBudget => "trial_budget",
        StopReason::TimeBudget => "time_budget",
        StopReason::Interrupted => "interrupted",
        StopReason::Aborted => "aborted",
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// "p99", "p99.9", "p99.99": from the quantile, without float noise.
fn quantile_label(q: f64) -> String {
    let percent = format!("{:.4}", q * 100.0);
    format!("p{}", percent.trim_end_matches('0').trim_end_matches('.'))
}
