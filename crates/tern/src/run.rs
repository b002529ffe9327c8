//! `tern run`: load, validate, bind, serve until a stop signal, then stop gracefully. SIGHUP
//! reloads the configuration: a new generation of workers takes over the listening sockets
//! while the old one drains (`generations.rs`).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tern_admin::api::{ApiHandle, Options};
use tern_admin::Control;
use tern_config::Config;
use tern_proxy::{AccessLog, ProxyHandle, Snapshot, StatsSnapshot};
use tracing::{info, warn};

use crate::cli::RunArgs;
use crate::generations::{Generations, UpgradeSettings};
use crate::notify;
use crate::signals::{SignalEvent, StopSignals};
use crate::upgrade::{self, Incoming};

pub fn main(args: &RunArgs) -> anyhow::Result<()> {
    // Resolved before anything could replace the file: an upgrade starts this path again.
    let upgrade_exe = std::env::current_exe().context("locating the tern binary")?;
    // Started by an older tern for an upgrade: receive its sockets first; any failure from here
    // to `ready` is reported to it, so that it keeps serving.
    let mut incoming = Incoming::from_env().context("taking over from the old process")?;
    let mut signals = StopSignals::install()?;
    let started = start_first(&args.config, incoming.as_mut());
    let proxy = match started {
        Ok(proxy) => proxy,
        Err(e) => {
            if let Some(incoming) = incoming {
                incoming.refuse(&format!("{e:#}"));
            }
            return Err(e);
        }
    };
    let upgrade = UpgradeSettings {
        exe: upgrade_exe,
        args: std::env::args_os().skip(1).collect(),
        done: Arc::clone(&signals.handed_over),
        control_changed: Arc::clone(&signals.control_changed),
    };
    let generations = Arc::new(Generations::new(args.config.clone(), proxy, upgrade));
    let inherited_http = incoming.as_mut().and_then(Incoming::take_control_http);
    let mut api = start_api(&generations, inherited_http, incoming.is_some())?;
    // `ready:` once everything answers, the control API included.
    generations.announce()?;
    let upgraded = incoming.is_some();
    if let Some(incoming) = incoming {
        took_over(&generations, incoming)?;
    }
    notify::ready(upgraded);
    let signal = serve(&generations, &mut signals, &mut api);
    // The API holds the proxy; after an upgrade, the new process answers on its socket.
    drop(api);
    if signal == "upgrade" {
        // The new process serves; finish what this one has (up to `hard_stop_after`).
        while !generations.finished() {
            if let Some(signal) = signals.stop_within(Duration::from_millis(50)) {
                info!(signal, "stopping the draining generations now");
                generations.stop_all();
            }
        }
    } else {
        notify::stopping();
    }
    info!(signal, "stopping");
    let Ok(generations) = Arc::try_unwrap(generations) else {
        anyhow::bail!("the runtime API still holds the proxy at exit");
    };
    let (config, stats) = generations.shutdown();
    print_stats(&stats, &config)
}

/// How often the main thread checks whether a draining generation has ended.
const REAP_EVERY: Duration = Duration::from_secs(1);

/// Serves until a stop signal or an upgrade handed over (`"upgrade"`), acting on reloads and
/// upgrades in between.
fn serve(
    generations: &Arc<Generations>,
    signals: &mut StopSignals,
    api: &mut Option<ApiHandle>,
) -> &'static str {
    loop {
        // While a reload's previous generation drains, look every second so that its end is
        // logged (and its counters retired) when it happens, not at the next reload.
        let limit = generations.draining().then_some(REAP_EVERY);
        let Some(event) = signals.next_within(limit) else {
            continue;
        };
        match event {
            SignalEvent::Stop(signal) => return signal,
            SignalEvent::Reload => {
                info!("SIGHUP received: reloading the configuration");
                // A refused reload is logged with its reason; the running generation continues.
                let _ = generations.reload();
            }
            SignalEvent::Upgrade => {
                info!("SIGUSR2 received: upgrading the binary");
                // Refusals are logged with their reason; this process continues.
                if generations.upgrade().is_ok() {
                    return "upgrade";
                }
            }
            SignalEvent::HandedOver => return "upgrade",
            SignalEvent::ControlChanged => restart_api(generations, api),
        }
    }
}

/// Starts the control API of the current configuration (`[control]`), on the HTTP listener of
/// the old process after an upgrade, replacing its socket file.
fn start_api(
    generations: &Arc<Generations>,
    http_listener: Option<std::net::TcpListener>,
    upgraded: bool,
) -> anyhow::Result<Option<ApiHandle>> {
    let settings = generations.control_settings();
    let control: Arc<dyn Control> = Arc::clone(generations) as Arc<dyn Control>;
    let options = Options {
        replace_live_socket: upgraded,
        http_listener,
    };
    let api = tern_admin::api::spawn_with(control, &settings, options)
        .context("starting the control API")?;
    generations.set_control_http(api.http_listener());
    let mut out = std::io::stdout().lock();
    if let Some(path) = api.socket_path() {
        writeln!(out, "control: unix {}", path.display())?;
    }
    if let Some(addr) = api.http_addr() {
        writeln!(out, "control: http http://{addr}")?;
    }
    out.flush()?;
    Ok(Some(api))
}

/// A reload changed `[control]`: the new API replaces the old one (which keeps serving if the
/// new one cannot start).
fn restart_api(generations: &Arc<Generations>, api: &mut Option<ApiHandle>) {
    let settings = generations.control_settings();
    let same_http = api
        .as_ref()
        .and_then(ApiHandle::http_addr)
        .is_some_and(|a| settings.http == Some(a));
    let http_listener = api
        .as_ref()
        .filter(|_| same_http)
        .and_then(ApiHandle::http_listener)
        .and_then(|l| l.try_clone().ok());
    let old = api.take();
    // The HTTP port must be free before binding it again (unless it is handed over).
    let old = match old {
        Some(old) if !same_http && settings.http.is_some() => {
            old.stop();
            None
        }
        other => other,
    };
    match start_api(generations, http_listener, true) {
        Ok(new) => {
            info!("control API restarted with the new [control] settings");
            *api = new;
            drop(old);
        }
        Err(e) => {
            warn!(error = %format!("{e:#}"), "control API not restarted, the previous one stays");
            *api = old;
        }
    }
}

/// Loads the configuration and starts the first generation, on the sockets of the old process
/// when this is an upgrade.
fn start_first(path: &Path, incoming: Option<&mut Incoming>) -> anyhow::Result<ProxyHandle> {
    // Loading runs at a low priority: in an upgrade, the old process's workers may share the
    // core (priority.rs).
    let path = path.to_owned();
    let mut snapshot = crate::priority::low(move || {
        let config = match tern_config::load_with_warnings(&path) {
            Ok((config, warnings)) => {
                if !warnings.is_empty() {
                    eprintln!("{}", tern_config::format_warnings(&warnings));
                }
                // Binds on the OpenSSL engine (and below TLS 1.2): said at start, as `check`.
                for note in config.openssl_notes() {
                    eprintln!("{}: {note}", path.display());
                }
                config
            }
            Err(errors) => {
                eprintln!("{errors}");
                anyhow::bail!("invalid configuration: {}\n{errors}", path.display());
            }
        };
        if config.global.crypto_batch.enabled {
            // The P-256 nonce kernel's tables, before the first handshake rather than in it.
            tern_tls::prepare_batched_ecdsa();
        }
        build_snapshot(config)
    })??;
    snapshot.access_log = access_log(&snapshot.config, None)?;
    crate::fd_limit::fit(snapshot.config.global.maxconn);
    let inherit = incoming.map(Incoming::take_inherit).unwrap_or_default();
    tern_proxy::start_with(snapshot, inherit).context("start-up refused")
}

/// Tells the old process this one serves, and watches for its exit (until then this process
/// refuses another upgrade).
fn took_over(generations: &Generations, incoming: Incoming) -> anyhow::Result<()> {
    let from = incoming.from_pid;
    let link = incoming.ready().context("answering the old process")?;
    generations.predecessor.store(from, Ordering::Release);
    let predecessor = Arc::clone(&generations.predecessor);
    upgrade::watch_predecessor(link, move || {
        info!(pid = from, "the previous process has exited");
        predecessor.store(0, Ordering::Release);
    });
    println!(
        "upgraded: pid {} took over from pid {from}",
        std::process::id()
    );
    Ok(())
}

/// Loads the certificates of every TLS bind and the TLS files of every server with `tls`.
pub fn build_snapshot(config: Config) -> anyhow::Result<Snapshot> {
    // The same function builds them again on reload.
    let tls = tern_proxy::frontend_tls(&config)?;
    // Client configurations of servers with `tls` (CA bundles, client certificates).
    let servers_tls = tern_proxy::servers_tls(&config)?;
    // Binds with `engine = "openssl"`: their contexts, read from the same files.
    let openssl = tern_proxy::openssl_binds(&config)?;
    Ok(Snapshot {
        config,
        tls,
        servers_tls,
        openssl,
        // Opened by `access_log`, once (`tern check` builds a snapshot too, and opens nothing).
        access_log: None,
    })
}

/// The access log for `config`: `current` (the running one) when `[access_log]` did not
/// change, reopened so that a reload also serves log rotation; otherwise a new one, which
/// continues the counters of `current`.
pub fn access_log(
    config: &Config,
    current: Option<&AccessLog>,
) -> anyhow::Result<Option<AccessLog>> {
    let Some(settings) = &config.access_log else {
        return Ok(None);
    };
    Ok(Some(match current {
        Some(log) if log.settings() == settings => {
            log.reopen();
            log.clone()
        }
        Some(log) => log.replace(settings)?,
        None => AccessLog::open(settings)?,
    }))
}

/// Prints the bound addresses and the ready line on stdout (scripts and tests wait for them).
pub fn announce(proxy: &ProxyHandle) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    write_binds(&mut out, proxy)?;
    writeln!(out, "ready: {} workers", proxy.workers())?;
    out.flush()?;
    Ok(())
}

/// After a reload: the new generation's bound addresses, then `reloaded: generation N`.
pub fn announce_generation(proxy: &ProxyHandle, generation: u64) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    write_binds(&mut out, proxy)?;
    writeln!(
        out,
        "reloaded: generation {generation}, {} workers",
        proxy.workers()
    )?;
    out.flush()?;
    Ok(())
}

fn write_binds(out: &mut impl Write, proxy: &ProxyHandle) -> std::io::Result<()> {
    for b in proxy.binds() {
        let scheme = if b.tls { "https" } else { "http" };
        writeln!(out, "listening: {} {scheme}://{}", b.frontend, b.address)?;
    }
    Ok(())
}

/// Serves until SIGINT/SIGTERM, stops gracefully and prints the counters. SIGHUP and SIGUSR2
/// are logged and ignored: for `tern demo`, whose certificate is made in memory and whose configuration
/// is not a file.
pub fn serve_until_stopped(
    proxy: ProxyHandle,
    config: &Config,
    mut signals: StopSignals,
) -> anyhow::Result<()> {
    let signal = loop {
        match signals.next() {
            SignalEvent::Stop(signal) => break signal,
            SignalEvent::Reload => warn!("SIGHUP received: nothing to reload, ignoring"),
            SignalEvent::Upgrade | SignalEvent::HandedOver | SignalEvent::ControlChanged => {
                warn!("SIGUSR2 received: the demo cannot be upgraded, ignoring");
            }
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
    writeln!(out, "stats: reload config {}", line(snap.reloads.fields()))?;
    if config.global.crypto_batch.enabled {
        let fields = snap.crypto_batch.fields();
        let fields = fields.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        writeln!(out, "stats: crypto_batch all {}", line(fields))?;
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
    for r in &snap.resolvers {
        writeln!(out, "stats: resolvers {} {}", r.name, line(r.fields()))?;
    }
    if let Some(log) = &snap.access_log {
        writeln!(out, "stats: access_log {}", line(log.fields()))?;
    }
    // Task profiling, when it recorded anything (`global.profiling`, `set profiling on`).
    for row in snap.profile.iter().filter(|r| r.calls > 0) {
        writeln!(out, "stats: profile {} {}", row.name(), line(row.fields()))?;
    }
    out.flush()?;
    Ok(())
}
