//! `tern run`: load, validate, bind, serve until a stop signal, then stop gracefully.

use std::io::Write;

use anyhow::Context;
use tern_config::Config;
use tern_proxy::{ProxyHandle, Snapshot, StatsSnapshot};
use tracing::info;

use crate::cli::RunArgs;
use crate::signals::StopSignals;

pub fn main(args: &RunArgs) -> anyhow::Result<()> {
    let config = match tern_config::load(&args.config) {
        Ok(c) => c,
        Err(errors) => {
            eprintln!("{errors}");
            anyhow::bail!("invalid configuration: {}", args.config.display());
        }
    };
    let snapshot = build_snapshot(config)?;
    let signals = StopSignals::install()?;
    let proxy = tern_proxy::start(snapshot.clone()).context("start-up refused")?;
    announce(&proxy)?;
    serve_until_stopped(proxy, &snapshot.config, signals)
}

/// Loads the certificates of every TLS bind and the TLS files of every server with `tls`.
pub fn build_snapshot(config: Config) -> anyhow::Result<Snapshot> {
    let mut tls = Vec::with_capacity(config.frontends.len());
    for fe in &config.frontends {
        let mut binds = Vec::with_capacity(fe.binds.len());
        for bind in &fe.binds {
            let server_config = match &bind.tls {
                Some(settings) => Some(
                    tern_tls::server_config(settings)
                        .with_context(|| format!("frontend {} bind {}", fe.name, bind.address))?,
                ),
                None => None,
            };
            binds.push(server_config);
        }
        tls.push(binds);
    }
    // Client configurations of servers with `tls` (CA bundles, client certificates).
    let servers_tls = tern_proxy::servers_tls(&config)?;
    Ok(Snapshot {
        config,
        tls,
        servers_tls,
    })
}

/// Prints the bound addresses and the ready line on stdout (scripts and tests wait for them).
pub fn announce(proxy: &ProxyHandle) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    for b in proxy.binds() {
        let scheme = if b.tls { "https" } else { "http" };
        writeln!(out, "listening: {} {scheme}://{}", b.frontend, b.address)?;
    }
    writeln!(out, "ready: {} workers", proxy.workers())?;
    out.flush()?;
    Ok(())
}

/// Waits for SIGINT/SIGTERM, stops gracefully and prints the counters.
pub fn serve_until_stopped(
    proxy: ProxyHandle,
    config: &Config,
    signals: StopSignals,
) -> anyhow::Result<()> {
    let signal = signals.wait();
    info!(signal, "stopping");
    proxy.shutdown();
    let stats = proxy.stats().clone();
    proxy.join();
    print_stats(&stats.snapshot(), config)?;
    Ok(())
}

/// One `stats:` line per frontend, backend and server, `name=value` pairs.
pub fn print_stats(snap: &StatsSnapshot, config: &Config) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let line = |fields: Vec<(&str, u64)>| {
        fields
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (f, (fe, s)) in config.frontends.iter().zip(&snap.frontends).enumerate() {
        writeln!(out, "stats: frontend {} {}", fe.name, line(s.fields()))?;
        // TLS details only for frontends that terminate TLS.
        let Some(tls) = snap
            .tls
            .get(f)
            .filter(|_| fe.binds.iter().any(|b| b.tls.is_some()))
        else {
            continue;
        };
        for (kind, fields) in tls.lines() {
            let fields = fields.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            writeln!(out, "stats: {kind} {} {}", fe.name, line(fields))?;
        }
    }
    for (b, (be, s)) in config.backends.iter().zip(&snap.backends).enumerate() {
        writeln!(out, "stats: backend {} {}", be.name, line(s.fields()))?;
        let statuses = snap.status.get(b).map(Vec::as_slice).unwrap_or_default();
        for (i, (srv, ss)) in be
            .servers
            .iter()
            .zip(snap.servers.get(b).into_iter().flatten())
            .enumerate()
        {
            let mut fields = statuses.get(i).map(|st| st.fields()).unwrap_or_default();
            fields.extend(ss.fields());
            writeln!(
                out,
                "stats: server {}/{} {}",
                be.name,
                srv.name,
                line(fields)
            )?;
        }
    }
    out.flush()?;
    Ok(())
}
