//! Raw structs → the typed model, collecting every problem on the way.
//!
//! Each check records an [`Issue`] (key path + message) and carries on with a placeholder value,
//! so one run reports all mistakes in the file instead of making the operator fix them one at a
//! time. The placeholder model is thrown away if any issue was recorded. Lines are attached later
//! by the caller ([`crate::locate`]), which keeps this stage free of source positions.
//!
//! Checks are split by section: `global` here, frontends (binds, TLS) in `frontend`, backends
//! (servers, address resolution) in `backend`, with the backend's algorithm in `balance`, its
//! active and passive health checks in `health`, cookie and source persistence in
//! `persistence`, and the queue in `protection`.

mod access_log;
mod backend;
mod backend_tls;
mod balance;
mod client_auth;
mod compression;
mod condition;
mod connection;
mod control;
mod counters;
mod error_pages;
mod frontend;
mod health;
mod http_rules;
mod mode;
mod peers;
mod persistence;
mod protection;
mod proxy_v2;
mod request_log;
mod resolvers;
mod routing;
mod server_proto;
mod tcp_request;
mod tls;
mod tls_engine;
mod tls_policy;
mod userlist;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_client_auth;
#[cfg(test)]
mod tests_crypto_batch;
#[cfg(test)]
mod tests_frontend;
#[cfg(test)]
mod tests_peers;
#[cfg(test)]
mod tests_server_keys;
#[cfg(test)]
mod tests_server_proto;
#[cfg(test)]
mod tests_tls;
#[cfg(test)]
mod tests_tls_engine;
#[cfg(test)]
mod tests_userlist;

pub(crate) use proxy_v2::tlv_id;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::path::Path;
use std::time::Duration;

use crate::locate::KeyPath;
use crate::model::{Config, CryptoBatch, Global};
use crate::raw::{RawConfig, RawCryptoBatch, RawDuration, RawGlobal, RawSize, TextOrInt};
use crate::units;

/// One validation problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issue {
    pub path: KeyPath,
    pub message: String,
}

/// Validates `raw`; relative paths are resolved against `base_dir`.
pub(crate) fn validate(raw: RawConfig, base_dir: &Path) -> Result<Config, Vec<Issue>> {
    let mut checker = Checker::new(base_dir);
    let root = KeyPath::root();
    let global = checker.global(&raw.global, &root.key("global"));
    if raw.frontend.is_empty() {
        checker.issue(&root, "at least one [[frontend]] is required");
    }
    if raw.backend.is_empty() {
        checker.issue(&root, "at least one [[backend]] is required");
    }
    let backend_names: Vec<Option<&str>> = raw.backend.iter().map(|b| b.name.as_deref()).collect();
    let peers = checker.peers(&raw.peers, &root.key("peers"));
    let userlists = checker.userlists(&raw.userlist);
    let resolvers = checker.resolvers_sections(&raw.resolvers);
    checker.resolver_names = resolvers.iter().map(|r| r.name.clone()).collect();
    let mut frontends: Vec<_> = raw
        .frontend
        .iter()
        .enumerate()
        .map(|(i, fe)| checker.frontend(fe, &root.key("frontend").index(i), &backend_names))
        .collect();
    let mut backends: Vec<_> = raw
        .backend
        .iter()
        .enumerate()
        .map(|(i, be)| checker.backend(be, &root.key("backend").index(i)))
        .collect();
    checker.unique_names("frontend", raw.frontend.iter().map(|f| f.name.as_deref()));
    checker.unique_names("backend", backend_names.iter().copied());
    let frontend_names: Vec<Option<&str>> =
        raw.frontend.iter().map(|f| f.name.as_deref()).collect();
    let access_log = raw
        .access_log
        .as_ref()
        .map(|log| checker.access_log(log, &frontend_names, &root.key("access_log")));
    let control = checker.control(&raw.control, &userlists, &root.key("control"));
    checker.modes_agree(&frontends, &backends);
    checker.resolve_userlists(&userlists, &mut frontends, &mut backends);
    let tables = checker.tables(&raw.table, &root.key("table"));
    checker.resolve_tables(&tables, &mut frontends, &mut backends);
    if checker.issues.is_empty() {
        Ok(Config {
            global,
            frontends,
            backends,
            access_log,
            control,
            userlists,
            tables,
            resolvers,
            peers,
        })
    } else {
        Err(checker.issues)
    }
}

/// Validation state: issues found so far and cross-item facts (bind addresses seen).
struct Checker<'b> {
    issues: Vec<Issue>,
    base_dir: &'b Path,
    binds_seen: HashMap<SocketAddr, KeyPath>,
    /// The `[[resolvers]]` names, for servers that name one.
    resolver_names: Vec<String>,
    /// The names of the `[[peers]]` sections, for the tables that name one.
    peers_names: Vec<String>,
}

impl<'b> Checker<'b> {
    fn new(base_dir: &'b Path) -> Self {
        Self {
            issues: Vec::new(),
            base_dir,
            binds_seen: HashMap::new(),
            resolver_names: Vec::new(),
            peers_names: Vec::new(),
        }
    }

    fn issue(&mut self, path: &KeyPath, message: impl Into<String>) {
        self.issues.push(Issue {
            path: path.clone(),
            message: message.into(),
        });
    }

    fn global(&mut self, raw: &RawGlobal, path: &KeyPath) -> Global {
        let workers = raw
            .workers
            .map(|w| self.int_in(&path.key("workers"), Some(w), 1..=256, 1) as usize);
        let cpus = raw.cpus.as_ref().map(|cpus| self.cpus(cpus, workers, path));
        let workers = workers.or_else(|| cpus.as_ref().map(Vec::len));
        Global {
            workers,
            cpus,
            maxconn: self.int_in(
                &path.key("maxconn"),
                raw.maxconn,
                1..=i64::from(u32::MAX),
                10_000,
            ) as usize,
            grace: self.duration(
                &path.key("grace"),
                raw.grace.as_ref(),
                Duration::from_secs(5),
            ),
            hard_stop_after: self.duration(
                &path.key("hard_stop_after"),
                raw.hard_stop_after.as_ref(),
                Duration::from_secs(30),
            ),
            backlog: self.int_in(&path.key("backlog"), raw.backlog, 1..=65_535, 1024) as u32,
            max_tls_handshake_rate: self
                .opt_int_in(
                    &path.key("max_tls_handshake_rate"),
                    raw.max_tls_handshake_rate,
                    1..=10_000_000,
                )
                .map(|n| n as u32),
            max_tls_handshakes_per_source: self
                .opt_int_in(
                    &path.key("max_tls_handshakes_per_source"),
                    raw.max_tls_handshakes_per_source,
                    1..=10_000_000,
                )
                .map(|n| n as u32),
            profiling: raw.profiling.unwrap_or(false),
            handshake_offload: raw.handshake_offload.unwrap_or(false),
            max_conn_rate: self
                .opt_int_in(
                    &path.key("max_conn_rate"),
                    raw.max_conn_rate,
                    1..=10_000_000,
                )
                .map(|n| n as u32),
            max_sess_rate: self
                .opt_int_in(
                    &path.key("max_sess_rate"),
                    raw.max_sess_rate,
                    1..=10_000_000,
                )
                .map(|n| n as u32),
            crypto_batch: self.crypto_batch(raw.crypto_batch.as_ref(), &path.key("crypto_batch")),
        }
    }

    /// `global.crypto_batch`: a batch holds 2 to 8 handshakes (one is no batch, eight is the
    /// kernels' lane count) and waits at most 10 ms (beyond that a handshake's latency is
    /// the batch's, for a saving of a few microseconds of CPU).
    fn crypto_batch(&mut self, raw: Option<&RawCryptoBatch>, path: &KeyPath) -> CryptoBatch {
        let default = CryptoBatch::default();
        let Some(raw) = raw else { return default };
        let deadline = self.duration(
            &path.key("deadline"),
            raw.deadline.as_ref(),
            default.deadline,
        );
        if deadline > Duration::from_millis(10) {
            self.issue(
                &path.key("deadline"),
                "must be at most 10ms: a handshake may wait this long for its batch",
            );
        }
        CryptoBatch {
            enabled: raw.enabled.unwrap_or(true),
            size: self.int_in(&path.key("size"), raw.size, 2..=8, default.size as i64) as usize,
            deadline,
        }
    }

    fn cpus(&mut self, raw: &[i64], workers: Option<usize>, global: &KeyPath) -> Vec<usize> {
        let path = global.key("cpus");
        if raw.is_empty() {
            self.issue(&path, "must list at least one CPU (or leave `cpus` out)");
        }
        let mut cpus = Vec::with_capacity(raw.len());
        for (i, &value) in raw.iter().enumerate() {
            // Linux's default cpu_set_t holds CPUs 0..=1023.
            let cpu = self.int_in(&path.index(i), Some(value), 0..=1023, 0) as usize;
            if raw[..i].contains(&value) {
                self.issue(&path.index(i), format!("CPU {value} is listed twice"));
            }
            cpus.push(cpu);
        }
        if let Some(workers) = workers.filter(|&w| w != raw.len()) {
            self.issue(
                &path,
                format!(
                    "lists {} CPUs but `workers` is {workers}; give one CPU per worker",
                    raw.len()
                ),
            );
        }
        cpus
    }

    /// An integer in `range`, or `default` when absent (or out of range, after an issue).
    fn int_in(
        &mut self,
        path: &KeyPath,
        value: Option<i64>,
        range: RangeInclusive<i64>,
        default: i64,
    ) -> i64 {
        self.opt_int_in(path, value, range).unwrap_or(default)
    }

    /// An optional integer in `range`: `None` when absent (or out of range, after an issue).
    fn opt_int_in(
        &mut self,
        path: &KeyPath,
        value: Option<i64>,
        range: RangeInclusive<i64>,
    ) -> Option<i64> {
        let v = value?;
        if range.contains(&v) {
            return Some(v);
        }
        let (lo, hi) = (range.start(), range.end());
        self.issue(
            path,
            format!("{v} is out of range: must be between {lo} and {hi}"),
        );
        None
    }

    /// A duration, or `default` when absent (or invalid, after an issue).
    fn duration(
        &mut self,
        path: &KeyPath,
        value: Option<&RawDuration>,
        default: Duration,
    ) -> Duration {
        self.opt_duration(path, value).unwrap_or(default)
    }

    /// An optional duration: `None` when absent (or invalid, after an issue).
    fn opt_duration(&mut self, path: &KeyPath, value: Option<&RawDuration>) -> Option<Duration> {
        let parsed = match &value?.0 {
            TextOrInt::Int(v) => Err(units::duration_needs_unit(*v)),
            TextOrInt::Text(text) => units::parse_duration(text),
        };
        parsed.map_err(|message| self.issue(path, message)).ok()
    }

    /// A size in bytes within `range`, or `default` when absent (or invalid, after an issue).
    fn size_in(
        &mut self,
        path: &KeyPath,
        value: Option<&RawSize>,
        range: RangeInclusive<u64>,
        default: u64,
    ) -> u64 {
        let parsed = match value.map(|s| &s.0) {
            None => return default,
            Some(TextOrInt::Int(v)) => {
                u64::try_from(*v).map_err(|_| format!("size {v} is negative"))
            }
            Some(TextOrInt::Text(text)) => units::parse_size(text),
        };
        match parsed {
            Ok(bytes) if range.contains(&bytes) => bytes,
            Ok(bytes) => {
                let (lo, hi) = (
                    units::format_size(*range.start()),
                    units::format_size(*range.end()),
                );
                self.issue(
                    path,
                    format!("{bytes} bytes is out of range: must be between {lo} and {hi}"),
                );
                default
            }
            Err(message) => {
                self.issue(path, message);
                default
            }
        }
    }

    /// A required name: present, non-empty, `[A-Za-z0-9_.-]` only.
    fn name(&mut self, path: &KeyPath, value: Option<&str>) -> String {
        let Some(name) = value else {
            self.issue(path, "missing key `name`");
            return String::new();
        };
        if name.is_empty() {
            self.issue(path, "must not be empty");
        } else if let Some(bad) = name.chars().find(|c| !is_name_char(*c)) {
            self.issue(
                path,
                format!(
                    "invalid character {bad:?} in `{name}`: use letters, digits, `_`, `.` and `-`"
                ),
            );
        }
        name.to_owned()
    }

    /// Reports the second and later uses of each name among `[[kind]]` items.
    fn unique_names<'n>(&mut self, kind: &str, names: impl Iterator<Item = Option<&'n str>>) {
        let mut first: HashMap<&str, usize> = HashMap::new();
        for (i, name) in names.enumerate() {
            let Some(name) = name.filter(|n| !n.is_empty()) else {
                continue;
            };
            if let Some(&earlier) = first.get(name) {
                let path = KeyPath::root().key(kind).index(i).key("name");
                self.issue(
                    &path,
                    format!("duplicate {kind} name `{name}` (first used by {kind}[{earlier}])"),
                );
            } else {
                first.insert(name, i);
            }
        }
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// RFC 9110 §5.6.2 `tchar`: header names, methods and cookie names are tokens.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
