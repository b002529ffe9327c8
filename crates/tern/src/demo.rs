//! `tern demo`: the main job in one command. Three `term` backends on loopback, a TLS frontend
//! with a certificate generated at start, round-robin across them, until Ctrl-C.

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context;
use tern_config::TlsSettings;
use tern_proxy::Snapshot;
use tern_term::{TermHandle, TermOptions};
use tern_tls::KeyKind;

use crate::cli::DemoArgs;
use crate::run;
use crate::signals::StopSignals;

const BACKENDS: usize = 3;

pub fn main(args: &DemoArgs) -> anyhow::Result<()> {
    let signals = StopSignals::install()?;
    let backends = start_backends()?;
    let addrs: Vec<SocketAddr> = backends
        .iter()
        .flat_map(|b| b.local_addrs().to_vec())
        .collect();
    let config = demo_config(args.listen, &addrs)?;
    let cert = tern_tls::self_signed(
        &["localhost".to_owned(), "127.0.0.1".to_owned()],
        KeyKind::EcdsaP256,
    )
    .context("generating the demo certificate")?;
    let tls = tern_tls::server_config_from_keys(vec![cert.certified_key])
        .context("building the demo TLS configuration")?;
    let snapshot = Snapshot {
        tls: vec![vec![Some(tls)]],
        servers_tls: Vec::new(),
        openssl: Vec::new(),
        access_log: None,
        config,
    };
    let proxy = tern_proxy::start(snapshot.clone()).context("start-up refused")?;
    run::announce(&proxy)?;
    let url = proxy
        .binds()
        .first()
        .map(|b| format!("https://{}", b.address))
        .unwrap_or_default();
    println!("tern demo: TLS frontend {url} balancing round-robin over {BACKENDS} term backends");
    println!("try:");
    println!("  curl -k {url}/                 # a small page naming the backend that served it");
    println!("  curl -k -I {url}/test          # the monitor URI, answered by tern itself");
    println!("  curl -k '{url}/?s=1m' -o /dev/null -w '%{{size_download}} bytes\\n'");
    println!("  curl -k '{url}/?r=503'        # status chosen by the backend");
    println!("press Ctrl-C to stop");
    let result = run::serve_until_stopped(proxy, &snapshot.config, signals);
    for b in backends {
        b.shutdown();
    }
    result
}

fn start_backends() -> anyhow::Result<Vec<TermHandle>> {
    (1..=BACKENDS)
        .map(|i| {
            let mut opts = TermOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
            opts.name = Some(format!("s{i}"));
            tern_term::start(opts).with_context(|| format!("starting demo backend s{i}"))
        })
        .collect()
}

/// The demo's configuration, written as TOML so it gets exactly the defaults a user's file
/// gets. The certificate is generated in memory, so the bind's TLS settings list no files.
fn demo_config(listen: SocketAddr, servers: &[SocketAddr]) -> anyhow::Result<tern_config::Config> {
    let servers: Vec<String> = servers
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{{ name = \"s{}\", address = \"{a}\" }}", i + 1))
        .collect();
    let text = format!(
        r#"
[global]
workers = 2

[[frontend]]
name = "demo"
bind = ["{listen}"]
monitor_uri = "/test"
default_backend = "terms"

[[backend]]
name = "terms"
balance = "roundrobin"
servers = [ {} ]
"#,
        servers.join(", ")
    );
    let mut config = tern_config::parse(&text, Path::new("<demo>"))
        .map_err(|e| anyhow::anyhow!("demo configuration: {e}"))?;
    for bind in &mut config.frontends[0].binds {
        bind.tls = Some(TlsSettings::new(Vec::new()));
    }
    Ok(config)
}
