//! Raw scenario → validated [`Scenario`]: ranges, names, CPU sets, TLS choices, defaults.
//!
//! Validation never stops at the first problem: each check records `(key path, message)` and
//! goes on with a placeholder, so one run of `tern bench suite` lists every mistake in the file.
//! A workload key missing from a `[[workload]]` is taken from `[defaults]`, and an error about
//! such a value names `defaults.KEY`, where the value was written.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use super::locate::KeyPath;
use super::raw::{RawNumber, RawScenario, RawWorkload};
use super::{CpuSets, Host, Scenario, TargetKind, TargetSpec, Workload};

mod tls;
mod workload;

pub(crate) type Issue = (KeyPath, String);

/// Validates `raw` (read from `file`) against the machine described by `host`.
pub(crate) fn validate(raw: RawScenario, file: &Path, host: &Host) -> Result<Scenario, Vec<Issue>> {
    let mut cx = Ctx {
        issues: Vec::new(),
        host,
    };
    let root = KeyPath::root();
    let head_path = root.key("scenario");
    let head = raw.scenario.unwrap_or_else(|| {
        cx.issue(&head_path, "missing [scenario] table (name and targets)");
        Default::default()
    });
    let name = match &head.name {
        Some(n) => cx.name(n, &head_path.key("name")),
        None => {
            cx.issue(&head_path.key("name"), "missing: name the scenario");
            String::new()
        }
    };
    let targets = cx.targets(&head.targets, &head.optional, &head_path);
    let monitor_uri = match &head.monitor_uri {
        Some(uri) => cx.path(uri, &head_path.key("monitor_uri")),
        None => "/test".to_owned(),
    };
    let cpus = cx.cpus(&raw.cpus, &root.key("cpus"));
    let bp = root.key("backends");
    let backends = raw
        .backends
        .count
        .map_or(1, |n| cx.int(n, &bp.key("count"), 1, 64));
    let threads = raw
        .backends
        .threads
        .map_or(1, |n| cx.int(n, &bp.key("threads"), 1, 64));
    let speed = raw.speed.map(|s| s.args.unwrap_or_default());
    let workloads = cx.workloads(&raw.workload, &raw.defaults, &cpus, &monitor_uri);
    cx.relays(&targets, &head, &workloads, backends);
    if !cx.issues.is_empty() {
        return Err(cx.issues);
    }
    Ok(Scenario {
        file: file.to_path_buf(),
        title: head.title.unwrap_or_else(|| name.clone()),
        name,
        about: head.about.unwrap_or_default().trim().to_owned(),
        targets,
        cpus,
        backends,
        backend_threads: threads,
        monitor_uri,
        speed,
        workloads,
    })
}

pub(super) struct Ctx<'h> {
    issues: Vec<Issue>,
    host: &'h Host,
}

/// A workload key looked up in the workload, then in `[defaults]`, with the path it came from.
pub(super) struct Pick<'a> {
    w: &'a RawWorkload,
    d: &'a RawWorkload,
    wp: &'a KeyPath,
}

impl<'a> Pick<'a> {
    fn get<T>(&self, field: fn(&RawWorkload) -> &Option<T>, key: &str) -> Option<(&'a T, KeyPath)> {
        if let Some(v) = field(self.w) {
            return Some((v, self.wp.key(key)));
        }
        field(self.d)
            .as_ref()
            .map(|v| (v, KeyPath::root().key("defaults").key(key)))
    }
}

impl Ctx<'_> {
    /// Every `[[workload]]`, with unique names.
    fn workloads(
        &mut self,
        raw: &[RawWorkload],
        defaults: &RawWorkload,
        cpus: &CpuSets,
        monitor_uri: &str,
    ) -> Vec<Workload> {
        let root = KeyPath::root();
        if raw.is_empty() {
            self.issue(&root.key("workload"), "no [[workload]]: nothing to run");
        }
        let mut names = HashSet::new();
        let mut workloads = Vec::new();
        for (i, w) in raw.iter().enumerate() {
            let path = root.key("workload").index(i);
            let workload = self.workload(w, defaults, &path, cpus, monitor_uri);
            if !workload.name.is_empty() && !names.insert(workload.name.clone()) {
                self.issue(
                    &path.key("name"),
                    format!("duplicate workload name {:?}", workload.name),
                );
            }
            workloads.push(workload);
        }
        workloads
    }

    fn issue(&mut self, path: &KeyPath, message: impl Into<String>) {
        self.issues.push((path.clone(), message.into()));
    }

    fn name(&mut self, name: &str, path: &KeyPath) -> String {
        let ok = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !ok {
            self.issue(
                path,
                format!("{name:?}: use 1 to 64 letters, digits, '.', '_' or '-'"),
            );
        }
        name.to_owned()
    }

    fn path(&mut self, text: &str, path: &KeyPath) -> String {
        if !text.starts_with('/') || text.bytes().any(|b| b <= b' ' || b == 0x7f || b == b'#') {
            self.issue(
                path,
                format!("{text:?}: a path starts with '/' and has no spaces or '#'"),
            );
        }
        text.to_owned()
    }

    fn int(&mut self, value: i64, path: &KeyPath, lo: i64, hi: i64) -> usize {
        if !(lo..=hi).contains(&value) {
            self.issue(
                path,
                format!("{value} is out of range: must be between {lo} and {hi}"),
            );
            return lo.max(1) as usize;
        }
        // In range and lo ≥ 0, so it fits.
        usize::try_from(value).unwrap_or(1)
    }

    fn duration(&mut self, text: &str, path: &KeyPath, allow_zero: bool) -> Duration {
        let trimmed = text.trim();
        if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
            self.issue(
                path,
                format!("{text:?} needs a unit: write \"{trimmed}s\" or \"{trimmed}ms\""),
            );
            return Duration::from_secs(1);
        }
        match humantime::parse_duration(trimmed) {
            Ok(d) if d.is_zero() && !allow_zero => {
                self.issue(path, format!("{text:?} is zero"));
                Duration::from_secs(1)
            }
            Ok(d) if d > Duration::from_secs(86_400) => {
                self.issue(path, format!("{text:?} is longer than a day"));
                Duration::from_secs(1)
            }
            Ok(d) => d,
            Err(e) => {
                self.issue(
                    path,
                    format!(
                        "invalid duration {text:?}: {e} (examples: \"500ms\", \"10s\", \"2m\")"
                    ),
                );
                Duration::from_secs(1)
            }
        }
    }

    fn cpu_list(&mut self, list: &[i64], path: &KeyPath) -> Vec<usize> {
        if list.is_empty() {
            self.issue(path, "empty CPU list");
        }
        let mut seen = HashSet::new();
        let mut cpus = Vec::new();
        for (i, &cpu) in list.iter().enumerate() {
            let at = path.index(i);
            match usize::try_from(cpu) {
                Ok(c) if !self.host.cpus.contains(&c) => self.issue(
                    &at,
                    format!(
                        "CPU {c} is not available to this process (available: {:?})",
                        self.host.cpus
                    ),
                ),
                Ok(c) if !seen.insert(c) => self.issue(&at, format!("CPU {c} is listed twice")),
                Ok(c) => cpus.push(c),
                Err(_) => self.issue(&at, format!("{cpu} is not a CPU number")),
            }
        }
        cpus
    }

    fn cpus(&mut self, raw: &super::raw::RawCpus, path: &KeyPath) -> CpuSets {
        let first = self.host.cpus.first().copied().unwrap_or(0);
        let last = self.host.cpus.last().copied().unwrap_or(0);
        let mut list = |v: &Option<Vec<i64>>, key: &str, default: usize| match v {
            Some(v) => self.cpu_list(v, &path.key(key)),
            None => vec![default],
        };
        let target = list(&raw.target, "target", first);
        let client = list(&raw.client, "client", last);
        let backends = match &raw.backends {
            Some(v) => self.cpu_list(v, &path.key("backends")),
            None => client.clone(),
        };
        CpuSets {
            target,
            client,
            backends,
        }
    }

    fn targets(
        &mut self,
        required: &Option<Vec<String>>,
        optional: &Option<Vec<String>>,
        head: &KeyPath,
    ) -> Vec<TargetSpec> {
        let mut specs: Vec<TargetSpec> = Vec::new();
        let lists = [(required, "targets", false), (optional, "optional", true)];
        for (list, key, is_optional) in lists {
            for (i, name) in list.iter().flatten().enumerate() {
                let at = head.key(key).index(i);
                let Some(kind) = TargetKind::from_name(name) else {
                    let known: Vec<_> = TargetKind::ALL.iter().map(|k| k.name()).collect();
                    self.issue(
                        &at,
                        format!(
                            "unknown target {name:?}: expected one of {}",
                            known.join(", ")
                        ),
                    );
                    continue;
                };
                if specs.iter().any(|s| s.kind == kind) {
                    self.issue(&at, format!("target {name:?} is listed twice"));
                    continue;
                }
                let missing = self.host.missing.iter().find(|(k, _)| *k == kind);
                if let (Some((_, why)), false) = (missing, is_optional) {
                    self.issue(
                        &at,
                        format!("{name}: {why}; install it, or list it under scenario.optional to skip it"),
                    );
                }
                specs.push(TargetSpec {
                    kind,
                    optional: is_optional,
                });
            }
        }
        if specs.is_empty() {
            self.issue(
                &head.key("targets"),
                "no targets: list at least one, e.g. [\"tern\", \"haproxy\"]",
            );
        }
        specs
    }

    /// The TCP relays alone (stunnel, hitch) only relay: a scenario naming one needs a workload
    /// with `mode = "tcp"`, and hitch (one `backend` address) a single backend.
    fn relays(
        &mut self,
        targets: &[TargetSpec],
        head: &super::raw::RawHead,
        workloads: &[Workload],
        backends: usize,
    ) {
        let tcp = workloads.iter().any(|w| w.mode == super::Mode::Tcp);
        let head_path = KeyPath::root().key("scenario");
        let lists = [(&head.targets, "targets"), (&head.optional, "optional")];
        for spec in targets {
            if !matches!(spec.kind, TargetKind::Stunnel | TargetKind::Hitch) {
                continue;
            }
            let at = lists
                .iter()
                .find_map(|(list, key)| {
                    let i = list
                        .iter()
                        .flatten()
                        .position(|n| TargetKind::from_name(n) == Some(spec.kind))?;
                    Some(head_path.key(key).index(i))
                })
                .unwrap_or_else(|| head_path.key("targets"));
            if !tcp {
                self.issue(
                    &at,
                    format!(
                        "{} relays TCP: no workload has mode = \"tcp\" (for HTTP workloads \
                         compare {}+haproxy)",
                        spec.kind, spec.kind
                    ),
                );
            } else if spec.kind == TargetKind::Hitch && backends > 1 {
                self.issue(
                    &at,
                    format!(
                        "hitch relays to one backend address, and this scenario has {backends}: \
                         set backends.count = 1, or drop hitch"
                    ),
                );
            }
        }
    }

    fn positive(&mut self, n: RawNumber, path: &KeyPath) -> f64 {
        if !(n.0.is_finite() && n.0 > 0.0 && n.0 <= 10_000_000.0) {
            self.issue(
                path,
                format!(
                    "{} must be a positive rate per second (at most 10000000)",
                    n.0
                ),
            );
            return 1.0;
        }
        n.0
    }
}
