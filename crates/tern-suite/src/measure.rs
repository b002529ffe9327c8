//! The one place that talks to the load generator (`tern_bench`).
//!
//! The generator is a library with its own command-line options; the suite builds those options
//! as text (`--requests-per-conn 1 --tls-version 1.3 …`) and parses them with the generator's
//! own parser, so every option means exactly what it means on the command line and the report
//! can print the equivalent `tern bench` command. Options the generator may not have yet
//! (`--rate`, `--ramp`, the reference probe) are looked up in its parser first: a scenario that
//! needs a missing one is refused before anything starts, and an optional one (ramp) falls back
//! to a longer warm-up with a note. Converting a run's report into a [`Measurement`] also lives
//! here, so a change in the generator's report is a change in this file only.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory as _, Parser};
use hdrhistogram::Histogram;

use crate::results::{FindMax, Measurement, Percentiles};
use crate::scenario::{Load, Workload};

/// The generator's options, mounted as a parser only to look its options up.
#[derive(Debug, Parser)]
#[command(name = "tern-bench", no_binary_name = true)]
struct BenchCli {
    #[command(flatten)]
    args: tern_bench::BenchArgs,
}

fn parse(args: &[String]) -> Result<tern_bench::BenchArgs, MeasureError> {
    tern_bench::BenchArgs::from_args(args).map_err(|e| MeasureError::Options {
        args: args.to_vec(),
        message: e.to_string().lines().next().unwrap_or_default().to_owned(),
    })
}

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("tern bench rejected the options {args:?}: {message}")]
    Options { args: Vec<String>, message: String },
    #[error(transparent)]
    Bench(#[from] tern_bench::BenchError),
}

/// Which optional generator features this build has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    pub rate: bool,
    pub ramp: bool,
    pub reference: bool,
    pub find_max: bool,
}

/// Looks the optional features up in the generator's option parser.
pub fn capabilities() -> Capabilities {
    let cmd = BenchCli::command();
    let has = |long: &str| cmd.get_arguments().any(|a| a.get_long() == Some(long));
    Capabilities {
        rate: has("rate"),
        ramp: has("ramp"),
        reference: has("ref-url") && has("ref-rate"),
        find_max: has("find-max"),
    }
}

/// One run to make: the workload against `url`, with the client on `client_cpus`.
#[derive(Debug, Clone)]
pub struct LoadSpec<'a> {
    pub url: String,
    pub workload: &'a Workload,
    pub client_cpus: &'a [usize],
    /// Warm-up inside the run (zero when a separate warm-up run was made).
    pub warmup: Duration,
    pub duration: Duration,
    /// Direct URL of a backend for the reference probe.
    pub reference_url: Option<String>,
}

fn secs(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// The generator options for `spec` (what `tern bench` would be given on the command line),
/// and the features the workload asked for that this generator lacks.
pub fn bench_args(spec: &LoadSpec<'_>, caps: Capabilities) -> (Vec<String>, Vec<String>) {
    let w = spec.workload;
    let mut pending = Vec::new();
    let mut a: Vec<String> = vec![spec.url.clone(), "--quiet".to_owned()];
    let mut push = |k: &str, v: String| {
        a.push(k.to_owned());
        a.push(v);
    };
    let connections = match w.load {
        Load::Closed { connections } => connections,
        Load::Open { rate, connections } => {
            push("--rate", format!("{rate}"));
            connections
        }
    };
    push("-c", connections.to_string());

    push("--requests-per-conn", w.requests_per_conn.to_string());
    push("--duration", secs(spec.duration));
    if !w.ramp.is_zero() {
        if caps.ramp {
            push("--ramp", secs(w.ramp));
        } else {
            pending.push("ramp (stairs): this tern bench has no --ramp; the ramp time was added to the warm-up".to_owned());
        }
    }
    push("--warmup", secs(spec.warmup));
    push("--timeout", secs(w.timeout));
    push("--threads", w.client_threads.to_string());
    let cpus: Vec<String> = spec.client_cpus.iter().map(usize::to_string).collect();
    push("--cpus", cpus.join(","));
    if let Some(tls) = &w.tls {
        push("--tls-version", tls.version.number().to_owned());
        // Suites rustls lacks go through the generator's OpenSSL engine, in OpenSSL's names.
        if crate::targets::needs_openssl(tls.suite) {
            push("--tls-engine", "openssl".to_owned());
            push("--ciphers", tls.suite.openssl.to_owned());
        } else {
            push("--ciphers", tls.suite.iana.to_owned());
        }
        let groups: Vec<&str> = tls
            .offered_groups()
            .iter()
            .map(|g| g.bench_name())
            .collect();
        push("--groups", groups.join(","));
        push("--sni", "localhost".to_owned());
    }
    if let (Some(rate), Some(url)) = (w.reference, &spec.reference_url) {
        if caps.reference {
            push("--ref-url", url.clone());
            push("--ref-rate", format!("{rate}"));
        } else {
            pending.push("reference probe: this tern bench has no --ref-url/--ref-rate".to_owned());
        }
    }
    if let Some(streams) = w.h2_streams {
        a.extend(["--h2".to_owned(), "-m".to_owned(), streams.to_string()]);
    }
    (a, pending)
}

/// The options of an SLO search for `spec`: the measured run's options with the open-loop
/// rate left to the search.
pub fn find_max_args(spec: &LoadSpec<'_>, caps: Capabilities) -> Option<Vec<String>> {
    let f = spec.workload.find_max.clone()?;
    let mut w = spec.workload.clone();
    w.load = Load::Closed {
        connections: match w.load {
            Load::Closed { connections } | Load::Open { connections, .. } => connections,
        },
    };
    w.reference = None;
    w.ramp = Duration::ZERO;
    let trial = LoadSpec {
        workload: &w,
        // The target is warm from the measured run; trials need no warm-up of their own.
        warmup: Duration::ZERO,
        duration: f.trial,
        ..spec.clone()
    };
    let (mut a, _) = bench_args(&trial, caps);
    for (k, v) in [
        ("--slo-max", secs(f.slo_max)),
        ("--max-search-time", format!("{}s", f.time.as_secs().max(1))),
        ("--start-rate", format!("{}", f.start_rate)),
        ("--resolution", f.resolution.clone()),
    ] {
        a.push(k.to_owned());
        a.push(v);
    }
    a.push("--find-max".to_owned());
    Some(a)
}

/// Runs the generator with `args` and converts its report; `stop` ends the run early (the
/// partial window is reported, and marked invalid by the generator).
pub fn run(args: &[String], stop: &Arc<AtomicBool>) -> Result<Measurement, MeasureError> {
    let parsed = parse(args)?;
    let report = tern_bench::execute_with_stop(&parsed, stop.clone())?;
    Ok(convert(&report))
}

/// Runs the generator's SLO search (`--find-max`) with `args`.
pub fn find_max(args: &[String], stop: &Arc<AtomicBool>) -> Result<FindMax, MeasureError> {
    let parsed = parse(args)?;
    let report = tern_bench::slo::find_max(&parsed, &parsed.slo, stop.clone())?;
    let detail = report.to_json_value();
    Ok(match &report.result.confirmed {
        Some(c) => FindMax::Found {
            rate: c.median,
            low: c.min,
            high: c.max,
            detail,
        },
        None => match report.result.best_passed {
            Some(rate) => FindMax::Unconfirmed {
                rate,
                stop: report.result.stop.to_string(),
                detail,
            },
            None => FindMax::Failed {
                error: format!("no rate passed ({})", report.result.stop),
            },
        },
    })
}

/// Checks that `args` parse, without running anything (dry runs and planning).
pub fn check_args(args: &[String]) -> Result<(), MeasureError> {
    parse(args).map(|_| ())
}

/// Quantiles of the percentile curve: x = 0 … 6 nines in steps of 0.1.
fn curve(h: &Histogram<u64>) -> Vec<(f64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    (0..=60)
        .map(|i| {
            let nines = f64::from(i) / 10.0;
            let q = 1.0 - 10f64.powf(-nines);
            (nines, h.value_at_quantile(q))
        })
        .collect()
}

/// Percentiles of a latency histogram (µs).
pub fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let q = |q: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(q)
        }
    };
    Percentiles {
        count: h.len(),
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        p99_9: q(0.999),
        p99_99: q(0.9999),
        p99_999: q(0.99999),
        p99_9999: q(0.999_999),
        max: if h.is_empty() { 0 } else { h.max() },
        mean: if h.is_empty() { 0.0 } else { h.mean() },
    }
}

/// The generator's report as a [`Measurement`].
fn convert(report: &tern_bench::Report) -> Measurement {
    let s = &report.stats;
    // Operations are successful responses: with one request per connection each is also one
    // connection and its full handshake. Failed attempts are errors, never operations, so a
    // target that fails every handshake shows a rate of zero, not its connect rate.
    let window = report.measured.as_secs_f64();
    let ops = s.ok;
    let rate = if window > 0.0 {
        ops as f64 / window
    } else {
        0.0
    };
    let mut error_kinds = BTreeMap::new();
    for kind in tern_bench::stats::ErrorKind::ALL {
        let n = s.errors_of(kind);
        if n > 0 {
            error_kinds.insert(kind.name().to_owned(), n);
        }
    }
    for (class, n) in ["1xx", "2xx", "3xx", "4xx", "5xx", "other"]
        .iter()
        .zip(s.status)
    {
        if n > 0 && !matches!(*class, "1xx" | "2xx" | "3xx") {
            error_kinds.insert(format!("status {class}"), n);
        }
    }
    let mut pending = Vec::new();
    if !report.validity.valid {
        pending.push(format!(
            "run marked invalid by tern bench: {}",
            report.validity.reasons.join("; ")
        ));
    }
    Measurement {
        ops,
        rate,
        window_s: report.measured.as_secs_f64(),
        requests: s.requests,
        connections: s.connections,
        full_handshakes: s.full_handshakes,
        resumed_handshakes: s.resumed_handshakes,
        errors: report.error_count(),
        error_kinds,
        latency: percentiles(&s.total),
        curve: curve(&s.total),
        per_second: s.per_second.clone(),
        tls: s.tls.as_ref().map(|t| {
            let kx = &t.key_exchange;
            format!(
                "{} {} {kx} {} ({} client)",
                t.version, t.suite, t.group, t.engine
            )
        }),
        client_cpu_share: report.cpu_share(),
        client_bound: report.client_bound(),
        reference: report.reference.as_ref().map(|r| percentiles(&r.total)),
        byte_rate: report.byte_rate(),
        valid: report.validity.valid,
        notes: pending,
        bench: report.to_json_value(),
    }
}

#[cfg(test)]
mod tests;
