//! tern's configuration: one worker per target CPU, pinned with `cpus`.
//!
//! tern binds port 0 and prints the port it got on its `listening:` line, so unlike the other
//! targets it needs no port chosen in advance, and its `ready:` line (printed once it accepts
//! connections) replaces polling the port.

use std::fmt::Write as _;

use super::{
    Generated, Layout, Ready, Tools, CLIENT_S, CONNECT_S, IDLE_PER_SERVER, KEEP_ALIVE_S, MAXCONN,
    SERVER_S,
};

pub(super) fn generate(layout: &Layout<'_>, tools: &Tools) -> Generated {
    let text = config(layout);
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
    Generated {
        files: vec![(file, text)],
        procs: vec![proc],
        stats: None,
    }
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

pub(super) fn config(layout: &Layout<'_>) -> String {
    let cpus: Vec<String> = layout.cpus.iter().map(usize::to_string).collect();
    let mut c = String::with_capacity(1024);
    let _ = write!(
        c,
        "[global]\nworkers = {}\ncpus = [{}]\nmaxconn = {MAXCONN}\n\n[[frontend]]\nname = \"web\"\n\
         bind = [{}]\n",
        layout.cpus.len(),
        cpus.join(", "),
        quote(&layout.front.to_string()),
    );
    match (&layout.workload.tls, &layout.cert) {
        // TLS binds offer ALPN h2 and http/1.1 by default: HTTP/2 needs nothing more.
        (Some(_), Some(cert)) => {
            let _ = writeln!(
                c,
                "tls = {{ certs = [{}] }}",
                quote(&cert.display().to_string())
            );
        }
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
         pool = {{ max_idle_per_server = {IDLE_PER_SERVER}, idle_timeout = \"{KEEP_ALIVE_S}s\" }}\n\
         servers = [\n",
        quote(layout.monitor_uri),
    );
    for (i, addr) in layout.backends.iter().enumerate() {
        let _ = writeln!(c, "  {{ name = \"s{}\", address = \"{addr}\" }},", i + 1);
    }
    c.push_str("]\n");
    c
}
