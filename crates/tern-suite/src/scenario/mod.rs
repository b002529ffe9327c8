//! Scenario files: TOML text → raw structs → a validated [`Scenario`].
//!
//! The same two-stage pipeline as tern's own configuration: the raw stage (`raw`) mirrors the
//! file with `deny_unknown_fields`; the validation stage (`validate`) checks every value, fills
//! in the defaults (`[defaults]`, then built-in ones) and reports all problems at once, each as
//! `FILE:LINE: KEY.PATH: MESSAGE`. A scenario that fails here starts nothing.

/// Key paths and their lines: the same locator as tern's configuration files.
use tern_config::locate;
mod raw;
pub mod suites;
mod validate;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use suites::{KeyExchange, Suite};

use locate::{KeyPath, Locator, Segment};

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file it was read from.
    pub file: PathBuf,
    /// Short name (letters, digits, `.`, `_`, `-`), used in the output folder's name.
    pub name: String,
    /// One-line title for the report.
    pub title: String,
    /// What the scenario repeats and how, for the top of the report.
    pub about: String,
    /// Targets to compare, in report order.
    pub targets: Vec<TargetSpec>,
    pub cpus: CpuSets,
    /// Number of `tern term` backends (at least one: every target configuration names its
    /// servers, even when a scenario only asks for the monitor URI), and threads of each.
    pub backends: usize,
    pub backend_threads: usize,
    /// The monitor URI every target answers itself.
    pub monitor_uri: String,
    /// Arguments of `tern speed`, when the scenario asks for its tables.
    pub speed: Option<Vec<String>>,
    pub workloads: Vec<Workload>,
}

/// A target named by the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetSpec {
    pub kind: TargetKind,
    /// Skipped with a note (instead of an error) when not installed.
    pub optional: bool,
}

/// The programs the suite knows how to configure and start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKind {
    Tern,
    /// tern with `global.crypto_batch` off: one operation at a time, seed 003's default
    /// software column (`tern` batches by default, QAT_SW's counterpart).
    TernUnbatched,
    Haproxy,
    Nginx,
    /// stunnel terminates TLS, HAProxy balances (seed 004's set-up).
    StunnelHaproxy,
    /// hitch terminates TLS, HAProxy balances.
    HitchHaproxy,
    /// tern in TCP mode terminates TLS, HAProxy balances (tern in stunnel's place).
    TernHaproxy,
    /// stunnel alone, relaying TLS-terminated connections straight to the backends (TCP mode).
    Stunnel,
    /// hitch alone, relaying straight to the (single) backend (TCP mode).
    Hitch,
}

impl TargetKind {
    pub const ALL: [TargetKind; 9] = [
        TargetKind::Tern,
        TargetKind::TernUnbatched,
        TargetKind::Haproxy,
        TargetKind::Nginx,
        TargetKind::StunnelHaproxy,
        TargetKind::HitchHaproxy,
        TargetKind::TernHaproxy,
        TargetKind::Stunnel,
        TargetKind::Hitch,
    ];

    /// The name used in scenario files and reports.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Tern => "tern",
            TargetKind::TernUnbatched => "tern-unbatched",
            TargetKind::Haproxy => "haproxy",
            TargetKind::Nginx => "nginx",
            TargetKind::StunnelHaproxy => "stunnel+haproxy",
            TargetKind::HitchHaproxy => "hitch+haproxy",
            TargetKind::TernHaproxy => "tern+haproxy",
            TargetKind::Stunnel => "stunnel",
            TargetKind::Hitch => "hitch",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name.trim())
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// CPU sets of the three kinds of process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSets {
    pub target: Vec<usize>,
    pub client: Vec<usize>,
    pub backends: Vec<usize>,
}

/// TLS protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

impl TlsVersion {
    /// "1.2" or "1.3", as `tern bench --tls-version` takes it.
    pub fn number(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "1.2",
            TlsVersion::Tls13 => "1.3",
        }
    }

    /// OpenSSL's spelling, "TLSv1.2".
    pub fn openssl(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "TLSv1.2",
            TlsVersion::Tls13 => "TLSv1.3",
        }
    }
}

/// Certificate (and key) type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CertKind {
    Rsa2048,
    EcdsaP256,
}

impl CertKind {
    /// File stem in the output folder's `certs/`.
    pub fn file_stem(self) -> &'static str {
        match self {
            CertKind::Rsa2048 => "rsa",
            CertKind::EcdsaP256 => "ecdsa",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CertKind::Rsa2048 => "RSA-2048",
            CertKind::EcdsaP256 => "ECDSA P-256",
        }
    }
}

/// Key exchange group offered by the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    X25519,
    P256,
    P384,
    X25519Mlkem768,
}

impl Group {
    /// `tern bench --groups` spelling.
    pub fn bench_name(self) -> &'static str {
        match self {
            Group::X25519 => "x25519",
            Group::P256 => "p256",
            Group::P384 => "p384",
            Group::X25519Mlkem768 => "x25519mlkem768",
        }
    }

    /// OpenSSL's curve name.
    pub fn openssl(self) -> &'static str {
        match self {
            Group::X25519 => "X25519",
            Group::P256 => "P-256",
            Group::P384 => "P-384",
            Group::X25519Mlkem768 => "X25519MLKEM768",
        }
    }
}

/// The TLS side of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsSpec {
    pub cert: CertKind,
    pub version: TlsVersion,
    pub suite: &'static Suite,
    pub group: Group,
}

impl TlsSpec {
    /// The groups the client offers, in order: the workload's group, plus P-256 for an ECDSA
    /// certificate in TLS 1.2 — there the client's supported-groups list also governs the
    /// curve of the server's ECDSA key (RFC 8422), and OpenSSL servers enforce it, so offering
    /// X25519 alone would make them fail every handshake. The key exchange still uses the
    /// first group.
    pub fn offered_groups(&self) -> Vec<Group> {
        let needs_p256 = self.version == TlsVersion::Tls12
            && self.cert == CertKind::EcdsaP256
            && self.suite.kx == KeyExchange::Ecdhe
            && self.group != Group::P256;
        if needs_p256 {
            vec![self.group, Group::P256]
        } else {
            vec![self.group]
        }
    }

    /// The offered groups in OpenSSL's list syntax ("X25519:P-256").
    pub fn openssl_groups(&self) -> String {
        let names: Vec<&str> = self.offered_groups().iter().map(|g| g.openssl()).collect();
        names.join(":")
    }

    /// "TLS 1.3 TLS_AES_256_GCM_SHA384 X25519, RSA-2048".
    pub fn describe(&self) -> String {
        let group = match self.suite.kx {
            KeyExchange::Rsa => "no group (RSA key transport)".to_owned(),
            KeyExchange::Dhe => "ffdhe2048".to_owned(),
            _ => self.openssl_groups(),
        };
        format!(
            "TLS {} {} {group}, {}",
            self.version.number(),
            self.suite.iana,
            self.cert.label()
        )
    }
}

/// What the targets do with a connection: proxy HTTP requests, or relay the connection whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// An HTTP proxy: requests parsed, balanced and forwarded (the default).
    #[default]
    Http,
    /// A TCP relay (tern and HAProxy `mode tcp`, stunnel, hitch): each client connection goes
    /// whole to one backend, chosen round-robin per connection, its bytes never read (after the
    /// TLS handshake on a TLS workload). The client still speaks HTTP/1.1, to the backend.
    Tcp,
}

impl Mode {
    /// "http" or "tcp", as written in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Http => "http",
            Mode::Tcp => "tcp",
        }
    }
}

/// How load is offered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Fixed concurrency: each connection sends its next request when the last one ends.
    Closed { connections: u32 },
    /// Fixed arrival rate per second, over at most `connections` connections.
    Open { rate: f64, connections: u32 },
}

/// The SLO search of a workload (seed 000's method).
#[derive(Debug, Clone, PartialEq)]
pub struct FindMaxSpec {
    /// No request may take longer than this (2 s in seed 000).
    pub slo_max: Duration,
    /// The whole search (trials and confirmations) ends within this time.
    pub time: Duration,
    /// The first trial's arrival rate per second.
    pub start_rate: f64,
    /// The measured window of each trial.
    pub trial: Duration,
    /// How close the failing and passing rates must get, e.g. "5%" or "50" (per second).
    pub resolution: String,
}

/// One workload: what the client does against every target.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub name: String,
    pub about: String,
    /// Path and query, e.g. `/test` or `/?s=1m`.
    pub path: String,
    /// HTTP proxying or a TCP relay (`mode = "tcp"`).
    pub mode: Mode,
    /// `None` for plain HTTP.
    pub tls: Option<TlsSpec>,
    /// 1 = one request per connection (a full handshake each), 0 = keep-alive.
    pub requests_per_conn: u64,
    /// HTTP/2 (`h2 = true`): streams in flight per connection (`streams`, like `h2load -m`);
    /// `None` for HTTP/1.1. Over TLS by ALPN `h2`, in plain text with prior knowledge (h2c).
    pub h2_streams: Option<u32>,
    pub load: Load,
    pub duration: Duration,
    pub warmup: Duration,
    pub ramp: Duration,
    pub runs: u32,
    /// SLO search: the highest rate held with no error and no request over the bound.
    pub find_max: Option<FindMaxSpec>,
    /// Reference probe straight to the first backend, at this rate per second.
    pub reference: Option<f64>,
    pub target_cpus: Vec<usize>,
    pub client_threads: u32,
    pub timeout: Duration,
    /// Response body size, when known (from `s=` or `response_bytes`): gives Gbit/s.
    pub response_bytes: Option<u64>,
}

impl Workload {
    /// Whether each operation is a connection (handshake workloads) rather than a request.
    pub fn per_connection(&self) -> bool {
        self.requests_per_conn == 1
    }

    /// Whether the path is the monitor URI (no backend involved).
    pub fn is_monitor(&self, monitor_uri: &str) -> bool {
        self.path == monitor_uri
    }
}

impl Scenario {
    /// Keeps only the workloads named in `names` (comma-separated), in the scenario's order;
    /// an unknown name is an error that lists the scenario's workloads.
    pub fn select_workloads(&mut self, names: &str) -> Result<(), String> {
        let wanted: Vec<&str> = names
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        if wanted.is_empty() {
            return Err("--workloads: no workload named".into());
        }
        let known: Vec<&str> = self.workloads.iter().map(|w| w.name.as_str()).collect();
        if let Some(bad) = wanted.iter().find(|n| !known.contains(n)) {
            return Err(format!(
                "--workloads: {bad:?} is not a workload of {} (it has: {})",
                self.file.display(),
                known.join(", ")
            ));
        }
        self.workloads.retain(|w| wanted.contains(&w.name.as_str()));
        Ok(())
    }

    /// Sets every workload's number of runs (the command line's `--runs`).
    pub fn set_runs(&mut self, runs: u32) {
        for w in &mut self.workloads {
            w.runs = runs;
        }
    }

    /// Divides every duration by `factor` (≥ 1): measured windows stay at least one second,
    /// so the per-second series keeps a point.
    pub fn shorten(&mut self, factor: f64) {
        if !(factor > 1.0 && factor.is_finite()) {
            return;
        }
        for w in &mut self.workloads {
            w.duration = w.duration.div_f64(factor).max(Duration::from_secs(1));
            w.warmup = w.warmup.div_f64(factor);
            w.ramp = w.ramp.div_f64(factor);
            if let Some(f) = &mut w.find_max {
                f.time = f.time.div_f64(factor).max(Duration::from_secs(10));
                f.trial = f.trial.div_f64(factor).max(Duration::from_secs(1));
            }
        }
    }
}

/// One located problem in a scenario file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub key_path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key_path.is_empty() {
            write!(f, ": {}", self.key_path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every problem found in one scenario file (never empty when returned).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// What validation needs to know about the machine and the load generator.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// CPUs this process may run on.
    pub cpus: Vec<usize>,
    /// Targets that cannot run here, with the reason (a program not installed).
    pub missing: Vec<(TargetKind, String)>,
    /// Whether the load generator has an open loop (`--rate`).
    pub open_loop: bool,
}

/// Reads and validates the scenario at `path`.
pub fn load(path: &Path, host: &Host) -> Result<Scenario, ScenarioErrors> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ScenarioErrors(vec![ScenarioError {
            file: path.to_path_buf(),
            line: None,
            key_path: String::new(),
            message: format!("cannot read the scenario: {e}"),
        }])
    })?;
    parse(&text, path, host)
}

/// Validates scenario `text` as if read from `file`.
pub fn parse(text: &str, file: &Path, host: &Host) -> Result<Scenario, ScenarioErrors> {
    let locator = Locator::new(text);
    let located = |path: KeyPath, line: usize, message: String| ScenarioError {
        file: file.to_path_buf(),
        line: Some(line),
        key_path: path.to_string(),
        message,
    };
    let raw = raw::from_str(text).map_err(|failure| {
        let path = complete_path(failure.path, &failure.message);
        let line = match (&failure.span, path.segments().is_empty()) {
            (Some(span), true) => locator.line_of_offset(span.start),
            _ => locator.line(&path),
        };
        let message = failure
            .message
            .replace(", expected i64", ", expected an integer");
        ScenarioErrors(vec![located(path, line, message)])
    })?;
    validate::validate(raw, file, host).map_err(|issues| {
        let mut errors: Vec<ScenarioError> = issues
            .into_iter()
            .map(|(path, message)| {
                let line = locator.line(&path);
                located(path, line, message)
            })
            .collect();
        errors.sort_by_key(|e| e.line);
        ScenarioErrors(errors)
    })
}

/// serde reports an unknown or missing key at the table holding it: name the key itself.
fn complete_path(path: KeyPath, message: &str) -> KeyPath {
    let key = ["unknown field `", "missing field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))
        .and_then(|rest| rest.split_once('`'))
        .map(|(key, _)| key);
    match key {
        Some(key) if path.segments().last() != Some(&Segment::Key(key.to_owned())) => path.key(key),
        _ => path,
    }
}
