//! nginx's configuration, equivalent to the HAProxy one.
//!
//! Differences that matter, and how they are evened out: nginx closes a keep-alive connection
//! after 1000 requests by default (raised to a million, as HAProxy and tern have no such
//! limit); it buffers large responses to temporary files (`proxy_max_temp_file_size 0` streams
//! them, as the others do); its TLS 1.3 suites are set with `ssl_conf_command Ciphersuites`.
//! The monitor URI is a `location =` returning HAProxy's body. HTTP/2 workloads add `http2` to
//! the `listen` line (ALPN h2 over TLS, prior knowledge in plain text); `keepalive_requests`
//! bounds HTTP/2 streams per connection too, hence the raised limit. nginx forks one worker process
//! per CPU, each pinned with `worker_cpu_affinity`; the suite sums the CPU time of the whole
//! process tree. DHE workloads get RFC 7919's ffdhe2048 as `ssl_dhparam` (written beside the
//! configuration), the group tern's OpenSSL engine and HAProxy use by default.

use std::fmt::Write as _;

use super::{
    pinned, Generated, Layout, Ready, Tools, CLIENT_S, CONNECT_S, KEEP_ALIVE_S, MAXCONN,
    MONITOR_BODY, SERVER_S,
};
use crate::scenario::{KeyExchange, TlsSpec, TlsVersion};

/// RFC 7919's ffdhe2048 group (the PEM tern's OpenSSL engine uses, and HAProxy's
/// `tune.ssl.default-dh-param 2048`): nginx's `ssl_dhparam` for DHE workloads.
const FFDHE2048: &str = include_str!("ffdhe2048.pem");
/// The file it is written to, in the target's directory.
const DH_FILE: &str = "ffdhe2048.pem";

pub(super) fn generate(layout: &Layout<'_>, tools: &Tools) -> Generated {
    let text = config(layout);
    let mut files = Vec::new();
    if layout
        .workload
        .tls
        .is_some_and(|t| t.suite.kx == KeyExchange::Dhe)
    {
        files.push((DH_FILE.to_owned(), FFDHE2048.to_owned()));
    }
    let file = "nginx.conf".to_owned();
    let path = layout.dir.join(&file);
    let program = tools.nginx.clone().unwrap_or_else(|| "nginx".into());
    let args = vec![
        "-e".to_owned(),
        "stderr".to_owned(),
        "-p".to_owned(),
        layout.dir.display().to_string(),
        "-c".to_owned(),
        path.display().to_string(),
    ];
    files.push((file, text));
    Generated {
        files,
        procs: vec![pinned(
            "nginx",
            &program,
            args,
            layout.cpus,
            tools,
            Ready::Port(layout.front),
        )],
        stats: None,
    }
}

/// `worker_cpu_affinity` masks: one bit string per worker, CPU 0 rightmost.
pub(super) fn affinity(cpus: &[usize]) -> String {
    let width = cpus.iter().max().map_or(1, |m| m + 1);
    cpus.iter()
        .map(|&cpu| {
            (0..width)
                .rev()
                .map(|bit| if bit == cpu { '1' } else { '0' })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn config(layout: &Layout<'_>) -> String {
    let w = layout.workload;
    let mut c = String::with_capacity(2048);
    let _ = write!(
        c,
        "daemon off;\nmaster_process on;\nworker_processes {};\nworker_cpu_affinity {};\n\
         worker_rlimit_nofile {};\npid nginx.pid;\nerror_log stderr warn;\n\n\
         events {{\n    worker_connections {MAXCONN};\n}}\n\nhttp {{\n    access_log off;\n",
        layout.cpus.len(),
        affinity(layout.cpus),
        MAXCONN * 2,
    );
    for kind in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
        let _ = writeln!(c, "    {kind}_temp_path {kind}_temp;");
    }
    let _ = write!(
        c,
        "    keepalive_timeout {KEEP_ALIVE_S}s;\n    keepalive_requests 1000000;\n    \
         client_header_timeout {CLIENT_S}s;\n    client_body_timeout {CLIENT_S}s;\n    \
         send_timeout {CLIENT_S}s;\n\n    upstream app {{\n"
    );
    for addr in layout.backends {
        let _ = writeln!(c, "        server {addr};");
    }
    if layout.backends.is_empty() {
        // nginx refuses an empty upstream; a server that refuses connections stands in (the
        // scenario checked that no workload goes past the monitor URI).
        c.push_str("        server 127.0.0.1:1 down;\n");
    }
    let _ = write!(
        c,
        "        keepalive {};\n    }}\n\n    server {{\n",
        super::idle_per_server(w)
    );
    match (&w.tls, &layout.cert) {
        (Some(tls), Some(cert)) => listen_tls(&mut c, layout, tls, cert),
        _ => {
            let h2 = if w.h2_streams.is_some() { " http2" } else { "" };
            let _ = writeln!(c, "        listen {}{h2};", layout.front);
        }
    }
    let body = MONITOR_BODY
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    let _ = write!(
        c,
        "\n        location = {} {{\n            default_type text/html;\n            \
         return 200 \"{body}\";\n        }}\n\n        location / {{\n            \
         proxy_pass http://app;\n            proxy_http_version 1.1;\n            \
         proxy_set_header Connection \"\";\n            proxy_max_temp_file_size 0;\n            \
         proxy_connect_timeout {CONNECT_S}s;\n            proxy_read_timeout {SERVER_S}s;\n            \
         proxy_send_timeout {SERVER_S}s;\n        }}\n    }}\n}}\n",
        layout.monitor_uri
    );
    c
}

/// The TLS listener: the workload's version, suite and group; no session cache, no tickets.
fn listen_tls(c: &mut String, layout: &Layout<'_>, tls: &TlsSpec, cert: &std::path::Path) {
    let cert = cert.display();
    // `listen … http2` rather than `http2 on;` (1.25.1): older nginx has only the former, newer
    // still accepts it.
    let h2 = if layout.workload.h2_streams.is_some() {
        " http2"
    } else {
        ""
    };
    let _ = write!(
        c,
        "        listen {} ssl{h2};\n        ssl_certificate {cert};\n        \
         ssl_certificate_key {cert};\n        ssl_protocols {};\n",
        layout.front,
        tls.version.openssl()
    );
    match tls.version {
        TlsVersion::Tls13 => {
            let _ = writeln!(
                c,
                "        ssl_conf_command Ciphersuites {};",
                tls.suite.openssl
            );
        }
        TlsVersion::Tls12 => {
            let _ = writeln!(c, "        ssl_ciphers {};", tls.suite.openssl);
        }
    }
    if tls.suite.kx == KeyExchange::Dhe {
        let _ = writeln!(c, "        ssl_dhparam {DH_FILE};");
    }
    if matches!(tls.suite.kx, KeyExchange::Ecdhe | KeyExchange::Tls13) {
        let _ = writeln!(c, "        ssl_ecdh_curve {};", tls.openssl_groups());
    }
    c.push_str("        ssl_session_cache off;\n        ssl_session_tickets off;\n");
}
