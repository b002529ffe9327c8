//! What a suite run produced, in a form the report writers read and `report.json` holds.
//!
//! These types know nothing about the load generator's own types: the adapter (`measure`)
//! converts each run of `tern bench` into a [`Measurement`], so the reports can be rendered
//! (and tested) from synthetic results, and changes in the generator stay in one module.

use std::collections::BTreeMap;

use serde::Serialize;

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteReport {
    pub scenario: ScenarioInfo,
    pub machine: Machine,
    /// Tool name → version line.
    pub versions: BTreeMap<String, String>,
    pub targets: Vec<TargetInfo>,
    pub workloads: Vec<WorkloadResult>,
    /// `tern speed` output, when the scenario asked for it.
    pub speed: Option<SpeedResult>,
    /// Notes for the reader: skipped targets, pending features, interruptions.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub title: String,
    pub about: String,
    pub file: String,
    /// The `--quick` factor durations were divided by (1 = as written).
    pub quick: f64,
    pub started: String,
    pub finished: String,
    /// Stopped early (Ctrl-C or an error): the report holds what was measured until then.
    pub partial: bool,
    pub cpus: CpuInfo,
    pub backends: usize,
    pub monitor_uri: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuInfo {
    pub target: Vec<usize>,
    pub client: Vec<usize>,
    pub backends: Vec<usize>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cpus_online: usize,
    pub kernel: String,
    /// 1, 5 and 15-minute load averages when the run started, and when it ended.
    pub load_average: String,
    pub load_average_end: String,
}

/// A target and whether it ran.
#[derive(Debug, Clone, Serialize)]
pub struct TargetInfo {
    pub name: String,
    /// `None` when it ran; otherwise why it was skipped.
    pub skipped: Option<String>,
}

/// One workload: its settings and every (target, run) result.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadResult {
    pub name: String,
    pub about: String,
    /// One-line description of the settings (protocol, TLS, path, load, timing, CPUs).
    pub settings: String,
    /// "conn/s" for one-request connections, "req/s" otherwise.
    pub unit: String,
    /// Response body size, when known (gives Gbit/s).
    pub response_bytes: Option<u64>,
    pub runs: Vec<RunRecord>,
}

/// One measurement: a target in one run of a workload.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub target: String,
    /// 1-based run number.
    pub run: u32,
    pub outcome: Outcome,
}

/// What became of a measurement.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Measured(Box<Measured>),
    /// The target (or the client) cannot do this workload.
    NotApplicable {
        reason: String,
    },
    /// Started but failed: the error, with the target's stderr tail when it is the cause.
    Failed {
        error: String,
    },
}

/// A completed measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    pub client: Measurement,
    /// Target CPU time (utime + stime over its process tree) during the measured run, µs.
    pub target_cpu_us: Option<f64>,
    /// `target_cpu_us` ÷ operations.
    pub cpu_us_per_op: Option<f64>,
    /// `target_cpu_us` ÷ (window × target CPUs): 1.0 = every target CPU busy all the time.
    /// Well below 1 while the client is not saturated means something else limited the rate
    /// (often other processes on a shared machine taking the target's CPU).
    pub target_cpu_share: Option<f64>,
    /// Allowed CPUs of each target process, read from /proc after start ("tern: 0").
    pub affinity: Vec<String>,
    /// Handshakes counted by the target itself, when it can tell.
    pub server: ServerCounts,
    /// SLO search result, or why there is none.
    pub find_max: Option<FindMax>,
}

/// What the client measured in one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Measurement {
    /// Operations: successful (1xx–3xx) responses; with one request per connection, each is
    /// also a connection with its handshake.
    pub ops: u64,
    /// Operations per second of the measured window.
    pub rate: f64,
    /// Length of the measured window in seconds.
    pub window_s: f64,
    pub requests: u64,
    pub connections: u64,
    pub full_handshakes: u64,
    pub resumed_handshakes: u64,
    pub errors: u64,
    /// Errors by kind (connect, tls, timeout, io, protocol, 4xx, 5xx …), non-zero ones.
    pub error_kinds: BTreeMap<String, u64>,
    /// Request latency (µs, from the intended start under open loop).
    pub latency: Percentiles,
    /// (nines, µs) points of the latency percentile curve: x = −log10(1 − q).
    pub curve: Vec<(f64, u64)>,
    /// Completed responses in each second of the window.
    pub per_second: Vec<u64>,
    /// Negotiated TLS parameters, as the client saw them: version, suite, key exchange, group
    /// and the client's engine, e.g. `TLSv1_2 TLS_RSA_WITH_AES_128_CBC_SHA RSA none (openssl
    /// client)`.
    pub tls: Option<String>,
    /// Share of its CPUs the client used (1.0 = saturated), and whether that marks it bound.
    pub client_cpu_share: Option<f64>,
    pub client_bound: bool,
    /// Reference probe straight to a backend, when run.
    pub reference: Option<Percentiles>,
    /// Response bytes per second received.
    pub byte_rate: f64,
    /// Whether the generator judged the run valid (client not saturated, series flat, …).
    pub valid: bool,
    /// Remarks: generator features this run lacked, or why the generator judged it invalid.
    pub notes: Vec<String>,
    /// The generator's own JSON report of the run.
    pub bench: serde_json::Value,
}

/// Latency percentiles in µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub p99_999: u64,
    pub p99_9999: u64,
    pub max: u64,
    pub mean: f64,
}

/// Handshakes as the target counted them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerCounts {
    pub full: Option<u64>,
    pub resumed: Option<u64>,
    /// What the numbers cover ("process lifetime: warm-up and measured run", …).
    pub note: String,
}

/// SLO search outcome.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FindMax {
    Found {
        /// Median of the confirmed rates, and their spread.
        rate: f64,
        low: f64,
        high: f64,
        detail: serde_json::Value,
    },
    /// The search ended before confirming a rate: the best rate that passed, and why.
    Unconfirmed {
        rate: f64,
        stop: String,
        detail: serde_json::Value,
    },
    /// The generator has no SLO search yet: the closed-loop rate stands in.
    Pending {
        reason: String,
    },
    Failed {
        error: String,
    },
}

/// `tern speed` output.
#[derive(Debug, Clone, Serialize)]
pub struct SpeedResult {
    /// The command's table as printed, or why it did not run.
    pub text: String,
    pub json: Option<serde_json::Value>,
    pub error: Option<String>,
}

impl Outcome {
    pub fn measured(&self) -> Option<&Measured> {
        match self {
            Outcome::Measured(m) => Some(m),
            _ => None,
        }
    }
}
