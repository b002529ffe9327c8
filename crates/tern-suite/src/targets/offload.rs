//! TLS offloaders in front of HAProxy: stunnel + HAProxy (seed 004's set-up), hitch + HAProxy,
//! and tern + HAProxy (tern in TCP mode in stunnel's place: the comparison issue 17 asks for).
//!
//! The offloader terminates TLS on the front address and passes the plain byte stream to HAProxy
//! on the inner address, which answers the monitor URI and balances over the backends exactly as
//! HAProxy alone does. Both processes share the target CPUs (there is one machine, as in the
//! paper), and the suite adds up the CPU time of both process trees. Neither offloader can pin
//! its threads or workers one per CPU, so `taskset` confines them to the set; tern gets its
//! usual one pinned worker per CPU. tern binds port 0 and reports the port it got on its
//! `listening:` line, which the runner reads for the last process it starts.

use std::fmt::Write as _;
use std::net::SocketAddr;

use super::{haproxy, pinned, Generated, Layout, Ready, Tools};
use crate::scenario::{KeyExchange, TlsVersion};

/// HAProxy in plain HTTP on the inner address, started first.
fn inner_haproxy(layout: &Layout<'_>, tools: &Tools) -> (String, String, super::ProcSpec) {
    let text = haproxy::config(layout, false);
    let file = "haproxy.cfg".to_owned();
    let path = layout.dir.join(&file);
    let program = tools.haproxy.clone().unwrap_or_else(|| "haproxy".into());
    let args = vec![
        "-db".to_owned(),
        "-f".to_owned(),
        path.display().to_string(),
    ];
    let proc = pinned(
        "haproxy",
        &program,
        args,
        layout.cpus,
        tools,
        Ready::Port(layout.inner),
    );
    (file, text, proc)
}

/// tern in TCP mode terminating TLS, relaying each connection to the inner HAProxy.
pub(super) fn tern(layout: &Layout<'_>, tools: &Tools) -> Generated {
    let (hfile, htext, hproc) = inner_haproxy(layout, tools);
    let text = super::tern::tcp_config(layout, &[layout.inner]);
    let (file, proc) = super::tern::process(layout, tools);
    Generated {
        files: vec![(hfile, htext), (file, text)],
        procs: vec![hproc, proc],
        stats: Some(layout.stats),
    }
}

pub(super) fn stunnel(layout: &Layout<'_>, tools: &Tools) -> Generated {
    let (hfile, htext, hproc) = inner_haproxy(layout, tools);
    let text = stunnel_config(layout, &[layout.inner]);
    let (file, proc) = stunnel_proc(layout, tools);
    Generated {
        files: vec![(hfile, htext), (file, text)],
        procs: vec![hproc, proc],
        stats: Some(layout.stats),
    }
}

/// stunnel's configuration file name and its process, ready when the front port accepts.
pub(super) fn stunnel_proc(layout: &Layout<'_>, tools: &Tools) -> (String, super::ProcSpec) {
    let file = "stunnel.conf".to_owned();
    let path = layout.dir.join(&file);
    let program = tools.stunnel.clone().unwrap_or_else(|| "stunnel".into());
    let proc = pinned(
        "stunnel",
        &program,
        vec![path.display().to_string()],
        layout.cpus,
        tools,
        Ready::Port(layout.front),
    );
    (file, proc)
}

/// stunnel's configuration relaying to `to`: one address, or several taken in turn
/// (`failover = rr`; stunnel's default, `prio`, would send everything to the first).
pub(super) fn stunnel_config(layout: &Layout<'_>, to: &[SocketAddr]) -> String {
    let mut c = String::from("foreground = yes\npid =\nsyslog = no\ndebug = 4\n\n[https]\n");
    let _ = writeln!(c, "accept = {}", layout.front);
    for addr in to {
        let _ = writeln!(c, "connect = {addr}");
    }
    if to.len() > 1 {
        c.push_str("failover = rr\n");
    }
    if let (Some(tls), Some(cert)) = (&layout.workload.tls, &layout.cert) {
        let v = tls.version.openssl();
        let _ = writeln!(
            c,
            "cert = {}\nsslVersionMin = {v}\nsslVersionMax = {v}",
            cert.display()
        );
        match tls.version {
            TlsVersion::Tls13 => {
                let _ = writeln!(c, "ciphersuites = {}", tls.suite.openssl);
            }
            TlsVersion::Tls12 => {
                let _ = writeln!(c, "ciphers = {}", tls.suite.openssl);
            }
        }
        if matches!(tls.suite.kx, KeyExchange::Ecdhe | KeyExchange::Tls13) {
            let _ = writeln!(c, "curves = {}", tls.openssl_groups());
        }
        c.push_str("options = NO_TICKET\n");
    }
    c
}

pub(super) fn hitch(layout: &Layout<'_>, tools: &Tools) -> Generated {
    let (hfile, htext, hproc) = inner_haproxy(layout, tools);
    let text = hitch_config(layout, layout.inner);
    let (file, proc) = hitch_proc(layout, tools);
    Generated {
        files: vec![(hfile, htext), (file, text)],
        procs: vec![hproc, proc],
        stats: Some(layout.stats),
    }
}

/// hitch's configuration file name and its process, ready when the front port accepts.
pub(super) fn hitch_proc(layout: &Layout<'_>, tools: &Tools) -> (String, super::ProcSpec) {
    let file = "hitch.conf".to_owned();
    let path = layout.dir.join(&file);
    let program = tools.hitch.clone().unwrap_or_else(|| "hitch".into());
    let proc = pinned(
        "hitch",
        &program,
        vec![format!("--config={}", path.display())],
        layout.cpus,
        tools,
        Ready::Port(layout.front),
    );
    (file, proc)
}

/// hitch's configuration relaying to `backend` (hitch takes one backend address).
pub(super) fn hitch_config(layout: &Layout<'_>, backend: SocketAddr) -> String {
    let bracket = |a: std::net::SocketAddr| format!("\"[{}]:{}\"", a.ip(), a.port());
    let mut c = String::new();
    let _ = writeln!(
        c,
        "frontend = {}\nbackend = {}\nworkers = {}\ndaemon = off\nwrite-proxy-v2 = off\n\
         syslog = off\nlog-level = 1",
        bracket(layout.front),
        bracket(backend),
        layout.cpus.len()
    );
    if running_as_root() {
        // hitch refuses to run its workers as root.
        c.push_str("user = \"nobody\"\ngroup = \"nogroup\"\n");
    }
    if let (Some(tls), Some(cert)) = (&layout.workload.tls, &layout.cert) {
        let _ = writeln!(
            c,
            "pem-file = \"{}\"\ntls-protos = {}",
            cert.display(),
            tls.version.openssl()
        );
        match tls.version {
            TlsVersion::Tls13 => {
                let _ = writeln!(c, "ciphersuites = \"{}\"", tls.suite.openssl);
            }
            TlsVersion::Tls12 => {
                let _ = writeln!(c, "ciphers = \"{}\"", tls.suite.openssl);
            }
        }
        if matches!(tls.suite.kx, KeyExchange::Ecdhe | KeyExchange::Tls13) {
            let _ = writeln!(c, "ecdh-curve = \"{}\"", tls.openssl_groups());
        }
    }
    c
}

/// Whether the effective user is root (`Uid:` in /proc/self/status: real, effective, …).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}
