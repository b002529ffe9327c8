//! tern's configuration: one worker per target CPU, pinned with `cpus`.
//!
//! tern binds port 0 and prints the port it got on its `listening:` line, so unlike the other
//! targets it needs no port chosen in advance, and its `ready:` line (printed once it accepts
//! connections) replaces polling the port.
//!
//! In TCP mode (`mode = "tcp"` workloads, and in front of HAProxy as `tern+haproxy`) the
//! frontend and backend get `mode = "tcp"` and only the keys a TCP proxy has: no monitor URI, no
//! HTTP timeouts, no server connection pool (a relayed connection is never reused).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;

use crate::scenario::TlsSpec;

use super::{
    Generated, Layout, Ready, Tools, CLIENT_S, CONNECT_S, KEEP_ALIVE_S, MAXCONN, SERVER_S,
};

pub(super) fn generate(layout: &Layout<'_>, tools: &Tools) -> Generated {
    generate_with(layout, tools, config_text(layout))
}

/// tern with `global.crypto_batch` off (the `tern-unbatched` target): seed 003 compares Intel's
/// batched QAT_SW path with the one-at-a-time default; tern batches by default, so its
/// one-at-a-time path is the extra column.
pub(super) fn generate_unbatched(layout: &Layout<'_>, tools: &Tools) -> Generated {
    generate_with(layout, tools, without_crypto_batch(&config_text(layout)))
}

fn config_text(layout: &Layout<'_>) -> String {
    match layout.workload.mode {
        crate::scenario::Mode::Http => config(layout),
        crate::scenario::Mode::Tcp => tcp_config(layout, layout.backends),
    }
}

/// `text` (a configuration from [`head`] on) with batching off.
pub(super) fn without_crypto_batch(text: &str) -> String {
    text.replacen(
        "[global]\n",
        "[global]\ncrypto_batch = { enabled = false }\n",
        1,
    )
}

fn generate_with(layout: &Layout<'_>, tools: &Tools, text: String) -> Generated {
    let (file, proc) = process(layout, tools);
    Generated {
        files: vec![(file, text)],
        procs: vec![proc],
        stats: None,
    }
}

/// The configuration file's name and tern's process, pinned, ready on its `ready:` line.
pub(super) fn process(layout: &Layout<'_>, tools: &Tools) -> (String, super::ProcSpec) {
    let file = "tern.toml".to_owned();
    let path = layout.dir.join(&file);
    let args = vec![
        "run".to_owned(),
        "-c".to_owned(),
        path.display().to_string(),
    ];
    let proc = super::pinned(
        "tern",
        &tools.tern,
        args,
        layout.cpus,
        tools,
        Ready::Line("ready:"),
    );
    (file, proc)
}

/// A TOML string literal.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `[global]` and the frontend's name, mode and bind.
fn head(layout: &Layout<'_>, mode: &str) -> String {
    let cpus: Vec<String> = layout.cpus.iter().map(usize::to_string).collect();
    let mut c = String::with_capacity(1024);
    let _ = write!(
        c,
        "[global]\nworkers = {}\ncpus = [{}]\nmaxconn = {MAXCONN}\n\n[[frontend]]\nname = \"web\"\n\
         {mode}bind = [{}]\n",
        layout.cpus.len(),
        cpus.join(", "),
        quote(&layout.front.to_string()),
    );
    c
}

/// The bind's `tls` table: the certificate, and for suites rustls lacks the OpenSSL engine with
/// the workload's suite as its cipher list (see [`super::needs_openssl`]).
fn tls_table(c: &mut String, tls: &TlsSpec, cert: &Path) {
    let certs = quote(&cert.display().to_string());
    if super::needs_openssl(tls.suite) {
        let _ = writeln!(
            c,
            "tls = {{ certs = [{certs}], engine = \"openssl\", ciphers = [{}] }}",
            quote(tls.suite.openssl)
        );
    } else {
        let _ = writeln!(c, "tls = {{ certs = [{certs}] }}");
    }
}

fn servers(c: &mut String, servers: &[SocketAddr]) {
    c.push_str("servers = [\n");
    for (i, addr) in servers.iter().enumerate() {
        let _ = writeln!(c, "  {{ name = \"s{}\", address = \"{addr}\" }},", i + 1);
    }
    c.push_str("]\n");
}

/// tern as a TCP relay to `to` (the backends, or HAProxy behind tern), round-robin per
/// connection; TLS terminated on the bind when the workload has TLS.
pub(super) fn tcp_config(layout: &Layout<'_>, to: &[SocketAddr]) -> String {
    let mut c = head(layout, "mode = \"tcp\"\n");
    if let (Some(tls), Some(cert)) = (&layout.workload.tls, &layout.cert) {
        tls_table(&mut c, tls, cert);
    }
    let _ = write!(
        c,
        "default_backend = \"app\"\n\
         timeouts = {{ client = \"{CLIENT_S}s\", handshake = \"{CLIENT_S}s\" }}\n\n\
         [[backend]]\nname = \"app\"\nmode = \"tcp\"\nbalance = \"roundrobin\"\n\
         timeouts = {{ connect = \"{CONNECT_S}s\", server = \"{SERVER_S}s\" }}\n",
    );
    servers(&mut c, to);
    c
}

pub(super) fn config(layout: &Layout<'_>) -> String {
    let mut c = head(layout, "");
    match (&layout.workload.tls, &layout.cert) {
        // TLS binds offer ALPN h2 and http/1.1 by default: HTTP/2 needs nothing more.
        (Some(tls), Some(cert)) => tls_table(&mut c, tls, cert),
        _ if layout.workload.h2_streams.is_some() => {
            c.push_str("http2 = { cleartext = true }\n");
        }
        _ => {}
    }
    let _ = write!(
        c,
        "monitor_uri = {}\ndefault_backend = \"app\"\n\
         timeouts = {{ client = \"{CLIENT_S}s\", http_request = \"{CLIENT_S}s\", \
         keep_alive = \"{KEEP_ALIVE_S}s\", handshake = \"{CLIENT_S}s\" }}\n\n\
         [[backend]]\nname = \"app\"\nbalance = \"roundrobin\"\n\
         timeouts = {{ connect = \"{CONNECT_S}s\", server = \"{SERVER_S}s\" }}\n\
         pool = {{ max_idle_per_server = {}, idle_timeout = \"{KEEP_ALIVE_S}s\" }}\n",
        quote(layout.monitor_uri),
        super::idle_per_server(layout.workload),
    );
    servers(&mut c, layout.backends);
    c
}
