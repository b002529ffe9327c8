//! The generations of workers a `tern run` process goes through, and the runtime API's view of
//! them (`tern_admin::Control`).
//!
//! A reload never changes a running generation: it validates the new configuration, starts a
//! new generation that inherits the listening sockets, server state and TLS session caches
//! (tern-proxy `handover.rs`), and only then tells the old one to drain. A configuration that
//! does not load, or a generation that does not start (a new port in use), leaves the running
//! one untouched. `add server` and `del server` go the same way, with the running configuration
//! changed in memory instead of a file re-read.
//!
//! At most one old generation drains at a time: a reload while one still drains stops that one
//! first (its idle connections close, requests in flight get `grace`).
//!
//! Counters are cumulative across generations: an old generation's counts are added, by
//! frontend, backend and server name, to the current one's in every view (`StatsSnapshot::absorb`).

use std::ffi::OsString;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use tern_admin::{AdminState, Control, ControlError, Info, ServerSpec, View};
use tern_config::Config;
use tern_proxy::{OperateError, ProxyHandle, StatsSnapshot};
use tracing::{info, warn};

use crate::run::build_snapshot;

/// A generation that handed over and is draining.
struct Old {
    handle: ProxyHandle,
    config: Arc<Config>,
}

struct Inner {
    current: ProxyHandle,
    config: Arc<Config>,
    /// Generations started so far, minus one (0 for the first).
    number: u64,
    old: Option<Old>,
    /// Counters of generations that ended, keyed to `retired_config`'s names.
    retired: Option<(Arc<Config>, StatsSnapshot)>,
}

/// The process's generations.
pub struct Generations {
    config_path: PathBuf,
    started: Instant,
    started_at: SystemTime,
    inner: Mutex<Inner>,
    /// Reloads (and `add`/`del server`) applied.
    applied: AtomicU64,
    /// Reloads refused (the running generation continued).
    refused: AtomicU64,
    /// How to start the new binary of an upgrade.
    pub upgrade: UpgradeSettings,
    /// Set once this process handed its sockets to a new one.
    handed_over: AtomicBool,
    /// The connection to the new process, kept open until this process exits.
    successor: Mutex<Option<UnixStream>>,
    /// The pid of the process this one took over from while that one still runs (0 when none).
    pub predecessor: Arc<AtomicU32>,
    /// A duplicate of the control API's HTTP listener, handed to the new process on upgrade.
    control_http: Mutex<Option<std::net::TcpListener>>,
}

/// The binary and arguments an upgrade starts, and whom to tell when it is done.
#[derive(Debug, Default)]
pub struct UpgradeSettings {
    /// The binary this process was started from (resolved at start, before any replacement).
    pub exe: PathBuf,
    pub args: Vec<OsString>,
    /// Notified once the new process took over (the main loop then drains and exits).
    pub done: Arc<tokio::sync::Notify>,
    /// Notified when a reload changed `[control]` (the main loop restarts the control API).
    pub control_changed: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for Generations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generations")
            .field("config_path", &self.config_path)
            .finish_non_exhaustive()
    }
}

impl Generations {
    /// Wraps the first generation, started from `config_path`.
    pub fn new(config_path: PathBuf, first: ProxyHandle, upgrade: UpgradeSettings) -> Self {
        let config = Arc::new(first.config().clone());
        Self {
            config_path,
            started: Instant::now(),
            started_at: SystemTime::now(),
            inner: Mutex::new(Inner {
                current: first,
                config,
                number: 0,
                old: None,
                retired: None,
            }),
            applied: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            upgrade,
            handed_over: AtomicBool::new(false),
            successor: Mutex::new(None),
            predecessor: Arc::default(),
            control_http: Mutex::new(None),
        }
    }

    /// Prints the current generation's binds and the `ready:` line (run.rs `announce`).
    pub fn announce(&self) -> anyhow::Result<()> {
        crate::run::announce(&self.lock().current)
    }

    /// The `[control]` settings of the running configuration.
    pub fn control_settings(&self) -> tern_config::ControlSettings {
        self.lock().config.control.clone()
    }

    /// Keeps a duplicate of the control API's HTTP listener for an upgrade.
    pub fn set_control_http(&self, listener: Option<&std::net::TcpListener>) {
        let dup = listener.and_then(|l| match l.try_clone() {
            Ok(dup) => Some(dup),
            Err(e) => {
                warn!(error = %e, "cannot keep the control HTTP listener for upgrades");
                None
            }
        });
        *self.control_http.lock().unwrap_or_else(|e| e.into_inner()) = dup;
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every field is replaced in whole assignments: a panic cannot leave it half-changed.
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.reap();
        inner
    }

    /// Re-reads the configuration file and hands over to a generation running it. Refused (and
    /// nothing changes) when the file does not load or the new generation cannot start.
    pub fn reload(&self) -> Result<String, ControlError> {
        crate::notify::reloading(true);
        let result = self.reload_file();
        crate::notify::reloading(false);
        result
    }

    fn reload_file(&self) -> Result<String, ControlError> {
        let (config, warnings) =
            tern_config::load_with_warnings(&self.config_path).map_err(|errors| {
                self.refused.fetch_add(1, Ordering::Relaxed);
                warn!(
                    "reload refused: invalid configuration in {}, the running generation \
                 continues:\n{errors}",
                    self.config_path.display()
                );
                ControlError::Failed(format!(
                    "reload refused, configuration unchanged:\n{errors}"
                ))
            })?;
        if !warnings.is_empty() {
            warn!("{}", tern_config::format_warnings(&warnings));
        }
        self.replace(config, "reload")
    }

    /// Starts a generation running `config` and drains the current one.
    fn replace(&self, config: Config, why: &str) -> Result<String, ControlError> {
        let mut inner = self.lock();
        let refused = |e: String| {
            self.refused.fetch_add(1, Ordering::Relaxed);
            warn!(error = %e, "{why} refused, the running generation continues");
            ControlError::Failed(format!("{why} refused, nothing changed: {e}"))
        };
        // Certificates are loaded off the workers' priority (priority.rs).
        let mut snapshot = crate::priority::low(move || build_snapshot(config))
            .and_then(|built| built)
            .map_err(|e| refused(format!("{e:#}")))?;
        snapshot.access_log = crate::run::access_log(&snapshot.config, inner.current.access_log())
            .map_err(|e| refused(format!("{e:#}")))?;
        crate::fd_limit::fit(snapshot.config.global.maxconn);
        let inherit = inner
            .current
            .handover()
            .map_err(|e| refused(format!("duplicating the listening sockets: {e}")))?;
        let next = tern_proxy::start_with(snapshot, inherit).map_err(|e| refused(e.to_string()))?;
        // Never more than one old generation: the oldest stops now.
        if let Some(older) = inner.old.take() {
            warn!("a previous generation was still draining: stopping it");
            older.handle.shutdown();
            inner.retire(older);
        }
        let config = Arc::new(next.config().clone());
        if config.control != inner.config.control {
            self.upgrade.control_changed.notify_one();
        }
        let mut previous = std::mem::replace(&mut inner.current, next);
        let previous_config = std::mem::replace(&mut inner.config, config);
        previous.release_listeners();
        previous.drain();
        inner.old = Some(Old {
            handle: previous,
            config: previous_config,
        });
        inner.number += 1;
        self.applied.fetch_add(1, Ordering::Relaxed);
        let n = inner.number;
        info!(
            generation = n,
            "{why}: new generation serving, the previous one drains"
        );
        crate::run::announce_generation(&inner.current, n)
            .map_err(|e| ControlError::Failed(e.to_string()))?;
        Ok(format!("{why} done: generation {n} serving"))
    }

    /// Hands the listening sockets and server states to a new process running the binary this
    /// one started from (upgrade.rs), then drains. Refused while the process this one took over
    /// from still drains, or when the new process cannot start (this one carries on).
    pub fn upgrade(&self) -> Result<String, ControlError> {
        let predecessor = self.predecessor.load(Ordering::Acquire);
        if predecessor != 0 {
            return Err(ControlError::Failed(format!(
                "upgrade refused: the previous process (pid {predecessor}) is still draining; \
                 retry once it has exited (at most hard_stop_after)"
            )));
        }
        if self.handed_over.load(Ordering::Acquire) {
            return Err(ControlError::Failed(
                "upgrade refused: this process already handed over and is draining".to_owned(),
            ));
        }
        let inner = self.lock();
        let refused = |e: String| {
            warn!(error = %e, "upgrade refused, this process continues");
            ControlError::Failed(format!("upgrade refused, nothing changed: {e}"))
        };
        let inherit = inner
            .current
            .handover()
            .map_err(|e| refused(format!("duplicating the listening sockets: {e}")))?;
        let s = &self.upgrade;
        let control_http = self
            .control_http
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|l| l.try_clone().ok());
        let (pid, link) =
            crate::upgrade::hand_over(&s.exe, &s.args, &inherit, control_http.as_ref())
                .map_err(|e| refused(format!("{e:#}")))?;
        drop(inherit);
        inner.current.drain();
        if let Some(old) = &inner.old {
            old.handle.drain();
        }
        self.handed_over.store(true, Ordering::Release);
        *self.successor.lock().unwrap_or_else(|e| e.into_inner()) = Some(link);
        s.done.notify_one();
        info!(
            new_pid = pid,
            "upgrade: the new process serves, this one drains"
        );
        Ok(format!(
            "upgrade done: process {pid} serves; this process ({}) drains and exits",
            std::process::id()
        ))
    }

    /// Whether a previous generation is still draining. Asking reaps one that has ended, which
    /// logs "the previous generation has ended".
    pub fn draining(&self) -> bool {
        self.lock().old.is_some()
    }

    /// Whether every generation of this process has ended (after an upgrade).
    pub fn finished(&self) -> bool {
        let inner = self.lock();
        inner.current.is_finished() && inner.old.is_none()
    }

    /// Stops every generation now (SIGTERM while draining after an upgrade). The listening
    /// sockets close at once (see [`Generations::shutdown`]).
    pub fn stop_all(&self) {
        let mut inner = self.lock();
        inner.current.release_listeners();
        inner.current.shutdown();
        if let Some(old) = &mut inner.old {
            old.handle.release_listeners();
            old.handle.shutdown();
        }
    }

    /// Stops every generation gracefully and waits for them; returns the final counters.
    pub fn shutdown(self) -> (Arc<Config>, StatsSnapshot) {
        let reloads = (
            self.applied.load(Ordering::Relaxed),
            self.refused.load(Ordering::Relaxed),
        );
        let mut inner = self.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        // The handles' duplicates of the listening sockets would keep them open, completing
        // handshakes no worker accepts any more: clients would connect and wait for nothing
        // until the process exits. Closed now, new connections are refused and go elsewhere.
        inner.current.release_listeners();
        inner.current.shutdown();
        if let Some(mut old) = inner.old.take() {
            old.handle.release_listeners();
            old.handle.shutdown();
            inner.retire(old);
        }
        let stats = inner.current.stats().clone();
        let config = Arc::clone(&inner.config);
        let retired = inner.retired.take();
        inner.current.join();
        let mut snap = stats.snapshot();
        if let Some((rc, rs)) = &retired {
            snap.absorb(&config, rs, rc);
        }
        snap.reloads.reloads += reloads.0;
        snap.reloads.failed += reloads.1;
        (config, snap)
    }

    /// Counts this process's configuration reloads in `snap` (its certificate-only reloads
    /// are counted by each generation).
    fn count_reloads(&self, snap: &mut StatsSnapshot) {
        snap.reloads.reloads += self.applied.load(Ordering::Relaxed);
        snap.reloads.failed += self.refused.load(Ordering::Relaxed);
    }

    fn with_current<T>(
        &self,
        f: impl FnOnce(&ProxyHandle) -> Result<T, OperateError>,
    ) -> Result<T, ControlError> {
        f(&self.lock().current).map_err(operate_error)
    }
}

impl Inner {
    /// Moves an old generation that ended into the retired counters.
    fn reap(&mut self) {
        if self.old.as_ref().is_some_and(|o| o.handle.is_finished()) {
            if let Some(old) = self.old.take() {
                info!("the previous generation has ended");
                self.retire(old);
            }
        }
    }

    /// Waits for `old` to end and adds its counters to the retired ones.
    fn retire(&mut self, old: Old) {
        let stats = old.handle.stats().clone();
        old.handle.join();
        let mut snap = stats.snapshot();
        if let Some((rc, rs)) = &self.retired {
            snap.absorb(&old.config, rs, rc);
        }
        self.retired = Some((old.config, snap));
    }

    /// The current counters plus those of older generations.
    fn merged(&self) -> StatsSnapshot {
        let mut snap = self.current.stats().snapshot();
        snap.peers = self.current.peer_counters();
        if let Some(old) = &self.old {
            snap.absorb(&self.config, &old.handle.stats().snapshot(), &old.config);
        }
        if let Some((rc, rs)) = &self.retired {
            snap.absorb(&self.config, rs, rc);
        }
        snap
    }
}

fn operate_error(e: OperateError) -> ControlError {
    match e {
        OperateError::UnknownBackend(b) => ControlError::UnknownBackend(b),
        OperateError::UnknownServer { backend, server } => {
            ControlError::UnknownServer { backend, server }
        }
        other => ControlError::Invalid(other.to_string()),
    }
}

impl Control for Generations {
    fn info(&self) -> Info {
        let inner = self.lock();
        let old = inner.old.as_ref();
        Info {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            pid: std::process::id(),
            started: self.started_at,
            uptime: self.started.elapsed(),
            workers: inner.current.workers(),
            generation: inner.number,
            draining_generations: usize::from(old.is_some()),
            connections: inner.current.connections() + old.map_or(0, |o| o.handle.connections()),
            profiling: tern_proxy::profiling::enabled(),
            crypto_batch: inner
                .config
                .global
                .crypto_batch
                .enabled
                .then(|| inner.merged().crypto_batch),
        }
    }

    fn view(&self) -> View {
        let info = self.info();
        let inner = self.lock();
        let mut stats = inner.merged();
        self.count_reloads(&mut stats);
        View {
            info,
            config: Arc::clone(&inner.config),
            stats,
        }
    }

    fn set_admin(
        &self,
        backend: &str,
        server: &str,
        state: AdminState,
    ) -> Result<(), ControlError> {
        self.with_current(|h| h.set_admin(backend, server, state))
    }

    fn set_weight(&self, backend: &str, server: &str, weight: u32) -> Result<(), ControlError> {
        self.with_current(|h| h.set_weight(backend, server, weight))
    }

    fn set_addr(
        &self,
        backend: &str,
        server: &str,
        addr: std::net::SocketAddr,
    ) -> Result<(), ControlError> {
        self.with_current(|h| h.set_address(backend, server, addr))
    }

    fn add_server(&self, backend: &str, spec: ServerSpec) -> Result<(), ControlError> {
        let config = {
            let inner = self.lock();
            crate::runtime_servers::with_added(&inner.config, backend, &spec)?
        };
        self.replace(config, "add server").map(|_| ())
    }

    fn del_server(&self, backend: &str, server: &str) -> Result<(), ControlError> {
        let config = {
            let inner = self.lock();
            let status = inner.merged();
            crate::runtime_servers::with_deleted(&inner.config, &status, backend, server)?
        };
        self.replace(config, "del server").map(|_| ())
    }

    fn tls(&self) -> serde_json::Value {
        tern_admin::tls_view::to_json(&self.lock().current.tls_info())
    }

    fn reload(&self) -> Result<String, ControlError> {
        Generations::reload(self)
    }

    fn upgrade(&self) -> Result<String, ControlError> {
        Generations::upgrade(self)
    }

    fn set_profiling(&self, on: bool) {
        tern_proxy::profiling::set_enabled(on);
        info!(on, "task profiling switched");
    }

    fn profiling(&self) -> String {
        let rows = self.lock().merged().profile;
        tern_proxy::profiling::ProfileReport::new(rows).to_string()
    }

    fn show_table(&self, name: Option<&str>, key: Option<&str>) -> Result<String, ControlError> {
        let inner = self.lock();
        inner
            .current
            .show_table(name, key)
            .map_err(ControlError::Invalid)
    }

    fn show_peers(&self) -> String {
        self.lock().current.show_peers()
    }

    fn clear_table(&self, name: &str, key: Option<&str>) -> Result<String, ControlError> {
        let inner = self.lock();
        inner
            .current
            .clear_table(name, key)
            .map_err(ControlError::Invalid)
    }
}
