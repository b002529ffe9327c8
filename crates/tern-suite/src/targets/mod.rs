//! The programs under test: what each needs installed, what it can do, and its generated
//! configuration.
//!
//! A side-by-side figure is only fair when every target does the same work, so each generator
//! writes the same things in its own words: the same certificate file, the workload's TLS
//! version, suite and group (where the program lets them be pinned), no session cache and no
//! tickets, the same monitor URI, the same backend servers with keep-alive to them, the same
//! timeouts and connection limit, and one worker per target CPU pinned to that CPU (tern
//! `workers` + `cpus`, HAProxy `nbthread` + `cpu-map`, nginx `worker_processes` +
//! `worker_cpu_affinity`; stunnel and hitch have no per-thread pinning, so only `taskset`
//! confines them). Every process is also started under `taskset -c TARGET_CPUS`.
//!
//! With `mode = "tcp"` every target is a TCP relay instead (tern and HAProxy `mode tcp`, stunnel
//! and hitch alone): no monitor URI, no request read, each client connection relayed whole to
//! one backend chosen round-robin per connection, a new server connection each time.
//!
//! tern's rustls policy is fixed (TLS 1.2 and 1.3, ECDHE with AEAD suites only) and has no
//! setting to narrow it; the client offers exactly the workload's version, suite and group, so
//! the handshake a target performs is the same either way. Suites rustls lacks (static RSA, DHE,
//! CBC: seeds 000, 002, 004) run on tern's OpenSSL engine (`engine = "openssl"` with the suite as
//! its `ciphers`, [`needs_openssl`]), driven by `tern bench --tls-engine openssl`.

mod haproxy;
mod nginx;
mod offload;
mod relay;
mod tern;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::scenario::suites::Suite;
use crate::scenario::{Group, KeyExchange, Mode, TargetKind, Workload};

/// Connection limit of every target (HAProxy needs about two descriptors per connection, and
/// the usual hard limit of 20000 descriptors leaves room for 8000).
pub const MAXCONN: u32 = 8_000;
/// Timeouts of every target, in seconds: connect to a server; client and server inactivity;
/// idle keep-alive between requests.
pub const CONNECT_S: u32 = 5;
pub const CLIENT_S: u32 = 30;
pub const SERVER_S: u32 = 30;
pub const KEEP_ALIVE_S: u32 = 30;
/// Idle connections each target keeps to the servers (nginx `keepalive`, tern's pool), at
/// least: [`idle_per_server`] raises it to the workload's requests in flight.
pub const IDLE_PER_SERVER: u32 = 64;

/// Idle server connections a target keeps per server: every request in flight (connections
/// times HTTP/2 streams) may need its own HTTP/1.1 server connection, and a pool smaller than
/// that closes and reopens server connections all run long. HAProxy (`http-reuse always`)
/// keeps idle connections without a limit, so the other targets get room for all of them.
pub fn idle_per_server(w: &Workload) -> u32 {
    let connections = match w.load {
        crate::scenario::Load::Closed { connections } => connections,
        crate::scenario::Load::Open { connections, .. } => connections,
    };
    let in_flight = connections.saturating_mul(w.h2_streams.unwrap_or(1));
    in_flight.clamp(IDLE_PER_SERVER, u32::from(u16::MAX))
}
/// What every target answers on the monitor URI (HAProxy's text; tern uses the same).
pub const MONITOR_BODY: &str = "<html><body><h1>200 OK</h1>\nService ready.\n</body></html>\n";

/// Everything a generator needs to write one target's configuration for one workload.
#[derive(Debug, Clone)]
pub struct Layout<'a> {
    pub workload: &'a Workload,
    pub monitor_uri: &'a str,
    /// CPUs the target runs on: one worker per CPU.
    pub cpus: &'a [usize],
    /// Combined PEM (certificate then key) of the workload's certificate, relative to `dir`
    /// (where the target runs) or absolute; `None` for plain HTTP.
    pub cert: Option<PathBuf>,
    /// Where clients connect (tern: port 0, read back from its `listening:` line).
    pub front: SocketAddr,
    /// HAProxy's plain listener behind a TLS offloader (stunnel, hitch, tern).
    pub inner: SocketAddr,
    /// HAProxy's stats socket (`show info`: CumSslConns).
    pub stats: SocketAddr,
    pub backends: &'a [SocketAddr],
    /// A folder for this process's pid and temporary files.
    pub dir: PathBuf,
}

/// How the suite knows a started process is ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    /// A stdout line starting with this (tern).
    Line(&'static str),
    /// Something accepts connections on this address.
    Port(SocketAddr),
}

/// One process to start.
#[derive(Debug, Clone)]
pub struct ProcSpec {
    /// Short name for logs and errors ("haproxy", "stunnel").
    pub name: &'static str,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub ready: Ready,
    /// Working folder (a target's configuration folder, so that the relative paths in its
    /// configuration resolve there and no absolute path of this machine lands in the files).
    pub cwd: Option<PathBuf>,
}

/// A target's generated files and processes, in start order.
#[derive(Debug, Clone)]
pub struct Generated {
    /// (file name inside `Layout::dir`, text).
    pub files: Vec<(String, String)>,
    pub procs: Vec<ProcSpec>,
    /// The HAProxy stats socket to read `CumSslConns` from, if any.
    pub stats: Option<SocketAddr>,
}

/// Program paths of the installed tools.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The tern binary (this process, normally).
    pub tern: PathBuf,
    pub haproxy: Option<PathBuf>,
    pub nginx: Option<PathBuf>,
    pub stunnel: Option<PathBuf>,
    pub hitch: Option<PathBuf>,
    pub taskset: Option<PathBuf>,
}

impl Tools {
    /// Finds the tools on `PATH` (and the sbin folders, which a non-root `PATH` may lack).
    pub fn discover(tern: PathBuf) -> Self {
        Self {
            tern,
            haproxy: which("haproxy"),
            nginx: which("nginx"),
            stunnel: which("stunnel4").or_else(|| which("stunnel")),
            hitch: which("hitch"),
            taskset: which("taskset"),
        }
    }

    /// Why `kind` cannot run here, or `None` when everything it needs is installed.
    pub fn missing(&self, kind: TargetKind) -> Option<String> {
        let need: &[(&str, &Option<PathBuf>)] = match kind {
            TargetKind::Tern | TargetKind::TernUnbatched => &[],
            TargetKind::Haproxy => &[("haproxy", &self.haproxy)],
            TargetKind::Nginx => &[("nginx", &self.nginx)],
            TargetKind::StunnelHaproxy => &[("stunnel", &self.stunnel), ("haproxy", &self.haproxy)],
            TargetKind::HitchHaproxy => &[("hitch", &self.hitch), ("haproxy", &self.haproxy)],
            TargetKind::TernHaproxy => &[("haproxy", &self.haproxy)],
            TargetKind::Stunnel => &[("stunnel", &self.stunnel)],
            TargetKind::Hitch => &[("hitch", &self.hitch)],
        };
        let absent: Vec<&str> = need
            .iter()
            .filter(|(_, p)| p.is_none())
            .map(|(n, _)| *n)
            .collect();
        (!absent.is_empty())
            .then(|| format!("{} not installed (not found on PATH)", absent.join(" and ")))
    }
}

/// The first executable `name` on `PATH` or in the usual sbin folders.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Why the load generator cannot drive `w` at all (any target), or `None`: suites rustls lacks
/// go through its OpenSSL engine (`--tls-engine openssl`), when this build has it.
pub fn client_unsupported(w: &Workload) -> Option<String> {
    let tls = w.tls.as_ref()?;
    if !tls.suite.rustls && !tern_bench::has_openssl_engine() {
        return Some(format!(
            "the load generator cannot offer {}: rustls implements neither {} nor CBC suites, \
             and this build has no OpenSSL engine (feature openssl-engine)",
            tls.suite.iana,
            match tls.suite.kx {
                KeyExchange::Rsa => "static-RSA key exchange",
                KeyExchange::Dhe => "finite-field DHE",
                _ => "static-RSA key exchange, DHE",
            }
        ));
    }
    None
}

/// Why `kind` cannot do workload `w`, or `None` when it can.
pub fn unsupported(kind: TargetKind, w: &Workload) -> Option<String> {
    let tls = w.tls.as_ref();
    let offloader = matches!(
        kind,
        TargetKind::StunnelHaproxy | TargetKind::HitchHaproxy | TargetKind::TernHaproxy
    );
    let relay = matches!(kind, TargetKind::Stunnel | TargetKind::Hitch);
    match (w.mode, kind) {
        (Mode::Tcp, TargetKind::Nginx) => {
            return Some("the suite does not configure nginx's stream module (TCP)".into())
        }
        (Mode::Tcp, _) if offloader => {
            return Some(format!(
                "{kind} is an HTTP chain: in TCP mode the relays are compared alone"
            ))
        }
        (Mode::Http, _) if relay => {
            return Some(format!(
                "{kind} relays TCP only: compare {kind}+haproxy on HTTP workloads"
            ))
        }
        _ => {}
    }
    if (offloader || relay) && tls.is_none() {
        return Some(format!(
            "{kind} is a TLS offloader: no plain path to compare"
        ));
    }
    if offloader && w.h2_streams.is_some() {
        return Some(format!(
            "{kind}: the suite does not configure ALPN h2 through the offloader"
        ));
    }
    match kind {
        TargetKind::Tern | TargetKind::TernUnbatched | TargetKind::TernHaproxy => {
            tern_unsupported(w)
        }
        _ => openssl_unsupported(kind, w),
    }
}

/// What tern cannot do: suites rustls lacks need the OpenSSL engine of a bind
/// (`engine = "openssl"`, see [`needs_openssl`]), which a build without it does not have.
fn tern_unsupported(w: &Workload) -> Option<String> {
    let tls = w.tls.as_ref()?;
    (!tls.suite.rustls && !tern_bench::has_openssl_engine()).then(|| {
        format!(
            "this tern has no OpenSSL engine, and its rustls engine has no {} ({} key exchange{})",
            tls.suite.iana,
            tls.suite.kx.label(),
            if is_cbc(tls.suite) { ", CBC" } else { "" }
        )
    })
}

/// Whether a suite is a CBC one (OpenSSL names them without a mode: `AES128-SHA`).
fn is_cbc(suite: &Suite) -> bool {
    suite.openssl.contains("SHA")
        && !suite.openssl.contains("GCM")
        && !suite.openssl.contains("POLY")
}

/// Whether tern's bind (and the client) use the OpenSSL engine for `suite`, chosen per workload
/// as an operator would: rustls where it has the suite, OpenSSL (static RSA, DHE, CBC) where it
/// does not. The client follows the same rule (`measure::bench_args`).
pub fn needs_openssl(suite: &Suite) -> bool {
    !suite.rustls
}

fn openssl_unsupported(kind: TargetKind, w: &Workload) -> Option<String> {
    let tls = w.tls.as_ref()?;
    let group_used = matches!(tls.suite.kx, KeyExchange::Ecdhe | KeyExchange::Tls13);
    (group_used && tls.group == Group::X25519Mlkem768).then(|| {
        format!("{kind} runs on the system OpenSSL, which has no X25519MLKEM768 before OpenSSL 3.5")
    })
}

/// Writes the configuration of `kind` for `layout`; its processes run in `layout.dir`.
pub fn generate(kind: TargetKind, layout: &Layout<'_>, tools: &Tools) -> Generated {
    let mut generated = match kind {
        TargetKind::Tern => tern::generate(layout, tools),
        TargetKind::TernUnbatched => tern::generate_unbatched(layout, tools),
        TargetKind::Haproxy => haproxy::generate(layout, tools),
        TargetKind::Nginx => nginx::generate(layout, tools),
        TargetKind::StunnelHaproxy => offload::stunnel(layout, tools),
        TargetKind::HitchHaproxy => offload::hitch(layout, tools),
        TargetKind::TernHaproxy => offload::tern(layout, tools),
        TargetKind::Stunnel => relay::stunnel(layout, tools),
        TargetKind::Hitch => relay::hitch(layout, tools),
    };
    for p in &mut generated.procs {
        p.cwd = Some(layout.dir.clone());
    }
    generated
}

/// `taskset -c CPUS PROGRAM ARGS…` when taskset is installed, else the program alone (its own
/// pinning — tern `cpus`, HAProxy `cpu-map`, nginx `worker_cpu_affinity` — still applies).
pub fn pinned(
    name: &'static str,
    program: &Path,
    args: Vec<String>,
    cpus: &[usize],
    tools: &Tools,
    ready: Ready,
) -> ProcSpec {
    match &tools.taskset {
        Some(taskset) => {
            let mut all = vec![
                "-c".to_owned(),
                cpu_list(cpus),
                program.display().to_string(),
            ];
            all.extend(args);
            ProcSpec {
                name,
                program: taskset.clone(),
                args: all,
                ready,
                cwd: None,
            }
        }
        None => ProcSpec {
            name,
            program: program.to_path_buf(),
            args,
            ready,
            cwd: None,
        },
    }
}

/// "0,1,3".
pub fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The version line of an installed tool, for the report ("HAProxy version 2.6.12 …").
pub fn version_of(program: &Path, arg: &str) -> Option<String> {
    let out = std::process::Command::new(program)
        .arg(arg)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = [out.stdout, out.stderr].concat();
    String::from_utf8_lossy(&text)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("Initializing"))
        .map(str::to_owned)
}
