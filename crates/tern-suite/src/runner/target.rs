//! One target process set: written, started pinned, ready, measured for CPU, stopped.
//!
//! Besides CPU time, the suite asks each target how many handshakes it did, so the "full
//! handshakes" figure is checked on both ends: HAProxy's `CumSslConns` (stats socket) before
//! and after the measured run, tern's `tls_full`/`tls_resumed` counters from its `stats:` exit
//! lines (these cover the process lifetime: warm-up and measured run).

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use crate::procs::{self, Child, READY_LIMIT};
use crate::results::ServerCounts;
use crate::scenario::TargetKind;
use crate::targets::{self, Layout, Ready, Tools};

/// A started target.
#[derive(Debug)]
pub struct Running {
    pub kind: TargetKind,
    children: Vec<Child>,
    /// Where clients connect.
    pub front: SocketAddr,
    stats: Option<SocketAddr>,
}

/// Writes the configuration of `kind` into `layout.dir`, starts its processes in order (logs
/// in `logs`, named after `tag`) and waits until each is ready.
pub fn start(
    kind: TargetKind,
    layout: &Layout<'_>,
    tools: &Tools,
    logs: &Path,
    tag: &str,
) -> Result<Running, String> {
    let generated = targets::generate(kind, layout, tools);
    std::fs::create_dir_all(&layout.dir)
        .map_err(|e| format!("{kind}: cannot create {}: {e}", layout.dir.display()))?;
    for (name, text) in &generated.files {
        let path = layout.dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| format!("{kind}: cannot write {}: {e}", path.display()))?;
    }
    let mut children = Vec::new();
    for spec in &generated.procs {
        let label = if spec.name == kind.name() {
            kind.name().to_owned()
        } else {
            format!("{} (in {kind})", spec.name)
        };
        let log = logs.join(format!("{tag}-{}.log", spec.name));
        let mut child = Child::spawn(label, spec, &log).map_err(|e| e.to_string())?;
        child
            .wait_ready(&spec.ready, READY_LIMIT)
            .map_err(|e| e.to_string())?;
        children.push(child);
    }
    let front = match generated.procs.last().map(|p| &p.ready) {
        Some(Ready::Line(_)) => children
            .last()
            .and_then(|c| c.listening().first().copied())
            .ok_or_else(|| format!("{kind} printed no `listening:` line"))?,
        _ => layout.front,
    };
    Ok(Running {
        kind,
        children,
        front,
        stats: generated.stats,
    })
}

impl Running {
    /// Process ids of the target's processes (the roots of its process trees).
    pub fn pids(&self) -> Vec<u32> {
        self.children.iter().map(Child::pid).collect()
    }

    /// Each process's allowed CPUs as the kernel reports them ("haproxy: 0"), to show the
    /// pinning took effect.
    pub fn affinity(&self) -> Vec<String> {
        self.children
            .iter()
            .map(|c| {
                let status = std::fs::read_to_string(format!("/proc/{}/status", c.pid()))
                    .unwrap_or_default();
                let cpus = status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .map_or("unknown", str::trim);
                format!("{}: {cpus}", c.name)
            })
            .collect()
    }

    /// CPU time of every process of the target (and their descendants).
    pub fn cpu(&self) -> Option<Duration> {
        procs::tree_cpu(&self.pids())
    }

    /// HAProxy's `CumSslConns`, when this target has a stats socket and HAProxy terminates TLS.
    pub fn ssl_conns(&self) -> Option<u64> {
        if self.kind != TargetKind::Haproxy {
            return None;
        }
        show_info(self.stats?, "CumSslConns")
    }

    /// Stops every process (last started first) and returns what the target counted.
    pub fn stop(self, ssl_delta: Option<u64>) -> ServerCounts {
        let mut lines = Vec::new();
        for child in self.children.into_iter().rev() {
            lines.extend(child.stop());
        }
        match self.kind {
            TargetKind::Tern | TargetKind::TernUnbatched | TargetKind::TernHaproxy => {
                tern_counts(&lines)
            }
            TargetKind::Haproxy => ServerCounts {
                full: ssl_delta,
                resumed: None,
                note: "HAProxy CumSslConns during the measured run; no session cache and no \
                       tickets, so it cannot resume"
                    .into(),
            },
            _ => ServerCounts {
                full: None,
                resumed: None,
                note: "no handshake counter readable from this target".into(),
            },
        }
    }
}

/// tern's `stats: frontend web … tls_full=N tls_resumed=M` exit line.
const TERN_NOTE: &str = "tern's exit counters: whole process lifetime (warm-up and measured run)";

/// tern's handshake counts from its exit summary, and its batching line when it batched (on
/// by default; not on the `tern-unbatched` target): how many batches, how full, how many fell
/// back.
pub(super) fn tern_counts(lines: &[String]) -> ServerCounts {
    let field = |key: &str| {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix("stats: frontend web "))
            .flat_map(str::split_whitespace)
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
    };
    ServerCounts {
        full: field("tls_full"),
        resumed: field("tls_resumed"),
        note: match lines
            .iter()
            .find_map(|l| l.strip_prefix("stats: crypto_batch all "))
        {
            Some(batch) => format!("{TERN_NOTE}; crypto_batch {}", batch.trim()),
            None => TERN_NOTE.into(),
        },
    }
}

/// One field of HAProxy's `show info`.
pub fn show_info(stats: SocketAddr, field: &str) -> Option<u64> {
    let mut s = TcpStream::connect_timeout(&stats, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(b"show info\n").ok()?;
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    parse_info(&text, field)
}

/// `Field: value` from `show info` text.
pub fn parse_info(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}
