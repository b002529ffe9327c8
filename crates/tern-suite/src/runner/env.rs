//! The machine and its tools, as the report states them, and the files a run needs first:
//! the CPUs this process may use, the versions of every program compared, and the certificates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::results::Machine;
use crate::scenario::{CertKind, Scenario, TargetKind};
use crate::targets::{version_of, Tools};

/// CPUs this process may run on (`Cpus_allowed_list` in /proc/self/status), or 0..N.
pub fn allowed_cpus() -> Vec<usize> {
    let from_status = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let list = s
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
            parse_cpu_ranges(list.trim())
        });
    from_status.unwrap_or_else(|| {
        let n = std::thread::available_parallelism().map_or(1, usize::from);
        (0..n).collect()
    })
}

/// "0-3,5" → [0, 1, 2, 3, 5].
pub fn parse_cpu_ranges(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi): (usize, usize) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
        if lo > hi || hi > 4096 {
            return None;
        }
        cpus.extend(lo..=hi);
    }
    (!cpus.is_empty()).then_some(cpus)
}

pub fn machine() -> Machine {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_default();
    Machine {
        cpu_model: model,
        cpus_online: std::thread::available_parallelism().map_or(1, usize::from),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
        load_average: load_average(),
        load_average_end: String::new(),
    }
}

/// "0.52 0.61 0.70": the 1, 5 and 15-minute load averages.
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Version lines of tern and of the tools the scenario's targets use.
pub fn versions(tools: &Tools, kinds: &[TargetKind]) -> BTreeMap<String, String> {
    let mut v = BTreeMap::new();
    v.insert(
        "tern".to_owned(),
        format!("tern {} (rustls + aws-lc-rs)", env!("CARGO_PKG_VERSION")),
    );
    let uses = |k: &[TargetKind]| kinds.iter().any(|x| k.contains(x));
    let haproxy_kinds = [
        TargetKind::Haproxy,
        TargetKind::StunnelHaproxy,
        TargetKind::HitchHaproxy,
        TargetKind::TernHaproxy,
    ];
    let mut add = |name: &str, program: &Option<PathBuf>, arg: &str, used: bool| {
        if let (true, Some(p)) = (used, program) {
            if let Some(line) = version_of(p, arg) {
                v.insert(name.to_owned(), line);
            }
        }
    };
    add("haproxy", &tools.haproxy, "-v", uses(&haproxy_kinds));
    add("nginx", &tools.nginx, "-v", uses(&[TargetKind::Nginx]));
    add(
        "stunnel",
        &tools.stunnel,
        "-version",
        uses(&[TargetKind::StunnelHaproxy, TargetKind::Stunnel]),
    );
    add(
        "hitch",
        &tools.hitch,
        "--version",
        uses(&[TargetKind::HitchHaproxy, TargetKind::Hitch]),
    );
    if let Some(openssl) = crate::targets::which("openssl") {
        if let Some(line) = version_of(&openssl, "version") {
            v.insert("openssl".to_owned(), line);
        }
    }
    v
}

/// Generates the certificates the workloads use into `dir`: one combined PEM (certificate,
/// then PKCS#8 key) per kind, for `localhost` and 127.0.0.1, the form every target loads.
pub fn write_certs(scenario: &Scenario, dir: &Path) -> anyhow::Result<BTreeMap<CertKind, PathBuf>> {
    let mut kinds: Vec<CertKind> = scenario
        .workloads
        .iter()
        .filter_map(|w| w.tls.map(|t| t.cert))
        .collect();
    kinds.sort();
    kinds.dedup();
    let mut paths = BTreeMap::new();
    if kinds.is_empty() {
        return Ok(paths);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    for kind in kinds {
        let key_kind = match kind {
            CertKind::Rsa2048 => tern_tls::KeyKind::Rsa2048,
            CertKind::EcdsaP256 => tern_tls::KeyKind::EcdsaP256,
        };
        let cert = tern_tls::self_signed(&names, key_kind)
            .with_context(|| format!("cannot generate the {} certificate", kind.label()))?;
        let path = dir.join(format!("{}.pem", kind.file_stem()));
        std::fs::write(&path, format!("{}{}", cert.cert_pem, cert.key_pem))
            .with_context(|| format!("cannot write {}", path.display()))?;
        paths.insert(kind, path);
    }
    Ok(paths)
}

/// UTC time now as `2026-11-21T07:06:54Z`.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The default output folder: `bench/results/<scenario>-<date>`, with `-2`, `-3` … appended
/// when it exists already.
pub fn default_out(scenario: &str) -> PathBuf {
    let date = now_rfc3339().chars().take(10).collect::<String>();
    let base = PathBuf::from("bench/results").join(format!("{scenario}-{date}"));
    if !base.exists() {
        return base;
    }
    (2..)
        .map(|n| PathBuf::from(format!("{}-{n}", base.display())))
        .find(|p| !p.exists())
        .unwrap_or(base)
}
