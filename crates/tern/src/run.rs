//! `tern run`: load, validate, bind, serve until a stop signal, then stop gracefully. SIGHUP
//! reloads the certificates (`tern_proxy::ProxyHandle::reload_certificates`).

use std::io::Write;

use anyhow::Context;
use tern_config::Config;
use tern_proxy::{ProxyHandle, Snapshot, StatsSnapshot};
use tracing::{info, warn};

use crate::cli::RunArgs;
use crate::signals::{SignalEvent, StopSignals};

pub fn main(args: &RunArgs) -> anyhow::Result<()> {
    let config = match tern_config::load(&args.config) {
        Ok(c) => c,
        Err(errors) => {
            eprintln!("{errors}");
            anyhow::bail!("invalid configuration: {}", args.config.display());
        }
    };
    let snapshot = build_snapshot(config)?;
    let config = snapshot.config.clone();
    let signals = StopSignals::install()?;
    let proxy = tern_proxy::start(snapshot).context("start-up refused")?;
    announce(&proxy)?;
    serve_until_stopped(proxy, &config, signals, Reload::Certificates)
}

/// Loads the certificates of every TLS bind and the TLS files of every server with `tls`.
pub fn build_snapshot(config: Config) -> anyhow::Result<Snapshot> {
    // The same function builds them again on reload.
    let tls = tern_proxy::frontend_tls(&config)?;
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

/// What SIGHUP does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reload {
    /// Re-read the certificate files (the proxy logs and counts the outcome).
    Certificates,
    /// Nothing to re-read (the demo's certificate is made in memory): logged, ignored.
    Nothing,
}

/// Serves until SIGINT/SIGTERM (SIGHUP reloads as `reload` says), stops gracefully and prints
/// the counters.
pub fn serve_until_stopped(
    proxy: ProxyHandle,
    config: &Config,
    mut signals: StopSignals,
    reload: Reload,
) -> anyhow::Result<()> {
    let signal = loop {
        match signals.next() {
            SignalEvent::Stop(signal) => break signal,
            SignalEvent::Reload if reload == Reload::Certificates => {
                info!("SIGHUP received: reloading certificates");
                // Failures are logged with the file and reason, and counted, by the proxy.
                let _ = proxy.reload_certificates();
            }
            SignalEvent::Reload => warn!("SIGHUP received: nothing to reload, ignoring"),
        }
    };
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
    writeln!(
        out,
        "stats: reload certificates {}",
        line(snap.reloads.fields())
    )?;
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
