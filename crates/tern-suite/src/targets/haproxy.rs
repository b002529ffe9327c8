//! HAProxy's configuration: the reference every other target is compared with.
//!
//! The same shape as bench/servers.sh: `nbthread` + one `cpu-map` line per thread, no TLS
//! session cache (`tune.ssl.cachesize 0`) and no tickets, the workload's suite, group and
//! version pinned with the `ssl-default-bind-*` keywords, the monitor URI answered by HAProxy
//! itself, `http-reuse always` towards the servers, and a stats socket on loopback so the suite
//! can read `CumSslConns` (handshakes counted by the server). Behind stunnel or hitch the same
//! configuration listens in plain HTTP on the inner address. In TCP mode (`mode = "tcp"`
//! workloads) it is `mode tcp` with `ssl` on the bind for TLS workloads, as bench/tcp.sh has it:
//! no monitor URI, no HTTP timeouts, no `http-reuse`.

use std::fmt::Write as _;

use super::{
    pinned, Generated, Layout, Ready, Tools, CLIENT_S, CONNECT_S, KEEP_ALIVE_S, MAXCONN, SERVER_S,
};
use crate::scenario::{KeyExchange, Mode, TlsSpec, TlsVersion};

/// HAProxy as the TLS-terminating balancer.
pub(super) fn generate(layout: &Layout<'_>, tools: &Tools) -> Generated {
    let text = match layout.workload.mode {
        Mode::Http => config(layout, true),
        Mode::Tcp => tcp_config(layout),
    };
    let file = "haproxy.cfg".to_owned();
    let path = layout.dir.join(&file);
    let program = tools.haproxy.clone().unwrap_or_else(|| "haproxy".into());
    let args = vec![
        "-db".to_owned(),
        "-f".to_owned(),
        path.display().to_string(),
    ];
    Generated {
        files: vec![(file, text)],
        procs: vec![pinned(
            "haproxy",
            &program,
            args,
            layout.cpus,
            tools,
            Ready::Port(layout.front),
        )],
        stats: Some(layout.stats),
    }
}

/// The configuration text. `terminate_tls` false: HAProxy listens in plain HTTP on
/// `layout.inner` behind an offloader (which then does the TLS part).
pub(super) fn config(layout: &Layout<'_>, terminate_tls: bool) -> String {
    let w = layout.workload;
    let tls = w.tls.filter(|_| terminate_tls);
    let mut c = global(layout, tls.as_ref());
    let _ = write!(
        c,
        "\ndefaults\n    mode http\n    timeout connect {CONNECT_S}s\n    timeout client {CLIENT_S}s\n    \
         timeout server {SERVER_S}s\n    timeout http-request {CLIENT_S}s\n    \
         timeout http-keep-alive {KEEP_ALIVE_S}s\n\nfrontend web\n"
    );
    match (tls, terminate_tls) {
        (Some(_), _) => {
            let cert = layout
                .cert
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            // HAProxy 2.6 offers no ALPN unless told (3.x offers h2 by default).
            let alpn = match w.h2_streams {
                Some(_) => " alpn h2,http/1.1",
                None => "",
            };
            let _ = writeln!(c, "    bind {} ssl crt {cert}{alpn}", layout.front);
        }
        (None, true) => {
            let proto = match w.h2_streams {
                Some(_) => " proto h2",
                None => "",
            };
            let _ = writeln!(c, "    bind {}{proto}", layout.front);
        }
        (None, false) => {
            let _ = writeln!(c, "    bind {}", layout.inner);
        }
    }
    let _ = writeln!(
        c,
        "    monitor-uri {}\n    default_backend app\n",
        layout.monitor_uri
    );
    c.push_str("backend app\n    balance roundrobin\n    http-reuse always\n");
    servers(&mut c, layout);
    c
}

/// HAProxy as a TCP relay (`mode tcp`), terminating TLS with `ssl` on the bind when the
/// workload has TLS; round-robin per connection over the backends.
pub(super) fn tcp_config(layout: &Layout<'_>) -> String {
    let tls = layout.workload.tls;
    let mut c = global(layout, tls.as_ref());
    let _ = write!(
        c,
        "\ndefaults\n    mode tcp\n    timeout connect {CONNECT_S}s\n    timeout client {CLIENT_S}s\n    \
         timeout server {SERVER_S}s\n\nfrontend web\n"
    );
    match (tls, &layout.cert) {
        (Some(_), Some(cert)) => {
            let _ = writeln!(c, "    bind {} ssl crt {}", layout.front, cert.display());
        }
        _ => {
            let _ = writeln!(c, "    bind {}", layout.front);
        }
    }
    c.push_str("    default_backend app\n\nbackend app\n    balance roundrobin\n");
    servers(&mut c, layout);
    c
}

/// The `global` section: threads pinned one per CPU, the connection limit, the stats socket
/// and, when HAProxy terminates TLS, the TLS policy.
fn global(layout: &Layout<'_>, tls: Option<&TlsSpec>) -> String {
    let mut c = String::with_capacity(2048);
    c.push_str("global\n");
    let _ = writeln!(c, "    nbthread {}", layout.cpus.len());
    for (i, cpu) in layout.cpus.iter().enumerate() {
        let _ = writeln!(c, "    cpu-map 1/{} {cpu}", i + 1);
    }
    let _ = writeln!(c, "    maxconn {MAXCONN}");
    let _ = writeln!(c, "    stats socket ipv4@{} level admin", layout.stats);
    if let Some(tls) = tls {
        tls_globals(&mut c, tls);
    }
    c
}

fn servers(c: &mut String, layout: &Layout<'_>) {
    for (i, addr) in layout.backends.iter().enumerate() {
        let _ = writeln!(c, "    server s{} {addr}", i + 1);
    }
}

/// The `global` lines pinning TLS: no session cache, no tickets, the workload's version, suite
/// and group (DHE gets 2048-bit parameters).
fn tls_globals(c: &mut String, tls: &TlsSpec) {
    c.push_str("    tune.ssl.cachesize 0\n");
    match tls.version {
        TlsVersion::Tls13 => {
            let _ = writeln!(c, "    ssl-default-bind-ciphersuites {}", tls.suite.openssl);
        }
        TlsVersion::Tls12 => {
            let _ = writeln!(c, "    ssl-default-bind-ciphers {}", tls.suite.openssl);
        }
    }
    match tls.suite.kx {
        KeyExchange::Dhe => c.push_str("    tune.ssl.default-dh-param 2048\n"),
        KeyExchange::Rsa => {}
        _ => {
            let _ = writeln!(c, "    ssl-default-bind-curves {}", tls.openssl_groups());
        }
    }
    let v = tls.version.openssl();
    let _ = writeln!(
        c,
        "    ssl-default-bind-options ssl-min-ver {v} ssl-max-ver {v} no-tls-tickets"
    );
}
