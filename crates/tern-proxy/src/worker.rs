//! Workers: one pinned OS thread per CPU, each with its own event loop and listening sockets.
//!
//! This is the shared-nothing model of HAProxy and nginx workers (docs/design/0001-workers.md):
//! a worker accepts on its own SO_REUSEPORT sockets, serves its connections to the end, and keeps
//! its own balancer state and upstream pools. What workers share is read-only ([`Shared`]: the
//! configuration snapshot and TLS configurations) plus atomics: the connection limits (taken once
//! per connection, right after `accept`, so beyond the limit each listener holds one connection
//! and the rest wait in the kernel backlog) and counters, which are per worker anyway.
//!
//! With `handshake_offload`, a worker starts a low-priority offload thread that takes its TLS
//! listeners and hands it connections once their handshake is complete (`tls/offload.rs`);
//! the accept loop both run is `listen/accept.rs`.

use std::rc::Rc;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use rustls::ClientConfig;
use tern_config::{Backend, Config, Frontend, Global};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tracing::warn;

use crate::access_log::AccessLog;
use crate::exchange::balance::Balancers;
use crate::exchange::pool::Pools;
use crate::exchange::servers::BackendState;
use crate::http1::spares::Spares;
pub use crate::lifecycle::Mode;
use crate::lifecycle::{next_mode, Lifecycle, SessionCount};
use crate::listen::accept::{self, Accepted, Acceptor};
use crate::listen::proxy_in::Expect;
use crate::listen::rate_cap::RateCap;
use crate::listen::session;
use crate::panics::{Guarded, Place, Task};
use crate::profiling::{self, Kind, Profiled, Table};
use crate::rules::Routing;
use crate::stats::WorkerStats;
use crate::tls::admission::Admission;
use crate::tls::handshake::Handshakes;
use crate::tls::offload;
use crate::tls::reload::TlsSlot;
use crate::Snapshot;

/// Read-only state shared by all workers.
#[derive(Debug)]
pub(crate) struct Shared {
    pub snapshot: Snapshot,
    /// Each frontend's backend choice (`use_backend`, `default_backend`), names resolved.
    pub routing: Vec<Routing>,
    /// Some rule reads `dst_port`: connections look their local port up once.
    pub reads_dst_port: bool,
    pub global_limit: Arc<Semaphore>,
    pub frontend_limits: Vec<Option<Arc<Semaphore>>>,
    /// Health, weights, slots and queues of every backend's servers.
    pub states: Arc<Vec<BackendState>>,
    /// Basic authentication (`http_auth`); `None` when no rule reads it.
    pub auth: Option<Arc<tern_auth::Authenticator>>,
    /// The counter tables (`[[table]]`), shared by every worker.
    pub tables: Arc<crate::track::table::Tables>,
    /// `global.max_conn_rate` and `global.max_sess_rate`.
    pub conn_rate: Option<RateCap>,
    pub sess_rate: Option<RateCap>,
    /// Each frontend's `rate_limit_sessions`.
    pub frontend_rates: Vec<Option<RateCap>>,
    /// The TLS client configuration of servers whose WebSockets take another ALPN than their
    /// requests (`ws`, `exchange/websocket.rs`), `[backend][server]`.
    pub websocket_tls: Vec<Vec<Option<Arc<ClientConfig>>>>,
}

/// One listening socket handed to a worker.
#[derive(Debug)]
pub(crate) struct WorkerListener {
    pub frontend: usize,
    pub socket: std::net::TcpListener,
    /// The bind's TLS (either engine), swapped on reload; `None` for a plain bind.
    pub tls: Option<TlsSlot>,
    /// Which of the bind's connections start with a PROXY protocol header (`accept_proxy`,
    /// `accept_proxy_from`).
    pub accept_proxy: Expect,
}

/// Everything a worker thread starts from.
#[derive(Debug)]
pub(crate) struct WorkerSpec {
    pub index: usize,
    /// How many workers there are (caps are split between them).
    pub workers: usize,
    pub cpu: Option<usize>,
    pub shared: Arc<Shared>,
    pub stats: Arc<WorkerStats>,
    pub listeners: Vec<WorkerListener>,
    pub shutdown: watch::Receiver<Mode>,
}

/// A worker's own state, reached from its tasks through an `Rc`.
#[derive(Debug)]
pub(crate) struct Worker {
    pub shared: Arc<Shared>,
    pub stats: Arc<WorkerStats>,
    pub pools: Rc<Pools>,
    pub balancers: Rc<Balancers>,
    /// Handshake rate caps for the TLS listeners this thread accepts on; `None` when none is
    /// configured or the offload thread has the TLS listeners.
    pub admission: Option<Admission>,
    /// Ended sessions' buffers, for the next sessions (`http1/spares.rs`).
    pub spares: Spares,
    life: Rc<Lifecycle>,
}

impl Worker {
    fn new(spec: &WorkerSpec) -> Result<Self, String> {
        let backends = &spec.shared.config().backends;
        // The worker index seeds random draws and offsets round-robin cycles between workers.
        let states = Arc::clone(&spec.shared.states);
        let balancers =
            Balancers::new(backends, states, spec.index as u64).map_err(|e| e.to_string())?;
        let pool_shape: Vec<_> = backends.iter().map(|b| (b.servers.len(), b.pool)).collect();
        let global = spec.shared.global();
        Ok(Self {
            shared: Arc::clone(&spec.shared),
            stats: Arc::clone(&spec.stats),
            pools: Pools::new(&pool_shape),
            balancers: Rc::new(balancers),
            admission: if global.handshake_offload {
                None
            } else {
                Admission::new(global, spec.workers)
            },
            spares: Spares::default(),
            life: Rc::new(Lifecycle::new()),
        })
    }

    /// Whether the worker is draining or stopping (connections finish their request, then
    /// close).
    pub(crate) fn is_stopping(&self) -> bool {
        self.life.is_stopping()
    }

    /// Whether idle connections must close now (a stop, not a drain).
    pub(crate) fn closes_idle(&self) -> bool {
        self.life.closes_idle()
    }

    /// Resolves when idle connections must close (a stop).
    pub(crate) async fn closing_idle(&self) {
        self.life.closing_idle().await;
    }

    /// Counts a session for the graceful stop; the guard uncounts it.
    pub(crate) fn session_started(&self) -> SessionCount {
        self.life.session_started()
    }
}

impl Shared {
    /// The configuration this generation runs.
    pub(crate) fn config(&self) -> &Config {
        &self.snapshot.config
    }

    /// The `global` table.
    pub(crate) fn global(&self) -> &Global {
        &self.snapshot.config.global
    }

    /// Frontend number `frontend`. Frontend indexes come from this configuration (listeners,
    /// counters, sessions are built from it), so the index is always in range.
    pub(crate) fn frontend(&self, frontend: usize) -> &Frontend {
        &self.snapshot.config.frontends[frontend]
    }

    /// Backend number `backend`. Backend indexes come from this configuration (routing,
    /// balancers, pools are built from it), so the index is always in range.
    pub(crate) fn backend(&self, backend: usize) -> &Backend {
        &self.snapshot.config.backends[backend]
    }

    /// The client TLS configuration of `server` of `backend`, when the server has `tls`.
    pub(crate) fn server_tls(&self, backend: usize, server: usize) -> Option<&Arc<ClientConfig>> {
        self.snapshot
            .servers_tls
            .get(backend)
            .and_then(|s| s.get(server))
            .and_then(Option::as_ref)
    }

    /// The TLS configuration of `server`'s WebSocket connections, when their ALPN is not its
    /// requests'.
    pub(crate) fn websocket_tls(
        &self,
        backend: usize,
        server: usize,
    ) -> Option<&Arc<ClientConfig>> {
        self.websocket_tls
            .get(backend)
            .and_then(|s| s.get(server))
            .and_then(Option::as_ref)
    }

    /// The access log, when `[access_log]` is configured.
    pub(crate) fn access_log(&self) -> Option<&AccessLog> {
        self.snapshot.access_log.as_ref()
    }

    /// Waits for connection slots under the frontend's and the global limit.
    pub(crate) async fn admit(&self, frontend: usize) -> Option<Permits> {
        let fe_rate = self.frontend_rates.get(frontend).and_then(Option::as_ref);
        if self.conn_rate.is_some() || fe_rate.is_some() {
            crate::listen::rate_cap::take_all([self.conn_rate.as_ref(), fe_rate]).await;
        }
        let fe = match self.frontend_limits.get(frontend).cloned().flatten() {
            Some(sem) => Some(Slot::acquire(sem).await?),
            None => None,
        };
        let global = Slot::acquire(Arc::clone(&self.global_limit)).await?;
        Some(Permits {
            _frontend: fe,
            _global: global,
        })
    }
}

impl Acceptor for Worker {
    fn life(&self) -> &Lifecycle {
        &self.life
    }

    fn handshakes(&self) -> Handshakes<'_> {
        Handshakes {
            shared: &self.shared,
            stats: &self.stats,
            admission: self.admission.as_ref(),
        }
    }

    fn take(self: &Rc<Self>, conn: Accepted) {
        let place = Place::frontend(conn.frontend);
        let serve = session::serve(Rc::clone(self), conn);
        tokio::task::spawn_local(Guarded::new(&self.stats, place, Task::Connection, serve));
    }
}

/// Connection slots held for the life of a session.
#[derive(Debug)]
pub(crate) struct Permits {
    _frontend: Option<Slot>,
    _global: Slot,
}

/// One permit of a semaphore, given back on drop: tokio's `OwnedSemaphorePermit` without its
/// count (always one here), so half its size. Every connection's task holds two, for its life.
#[derive(Debug)]
struct Slot(Arc<Semaphore>);

impl Slot {
    /// Waits for a permit of `sem`; `None` once it is closed.
    async fn acquire(sem: Arc<Semaphore>) -> Option<Slot> {
        // Forgotten here, given back by `Drop`.
        sem.acquire().await.ok()?.forget();
        Some(Slot(sem))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.add_permits(1);
    }
}

/// Runs a worker on the current thread until shutdown; reports start-up success or failure
/// through `ready`.
pub(crate) fn run(spec: WorkerSpec, ready: mpsc::Sender<Result<(), String>>) {
    if let Some(cpu) = spec.cpu {
        if !core_affinity::set_for_current(core_affinity::CoreId { id: cpu }) {
            warn!(worker = spec.index, cpu, "could not pin worker to its CPU");
        }
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(format!("worker {}: event loop: {e}", spec.index)));
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    let offload = local.block_on(&rt, worker_main(spec, ready));
    // Dropping the worker's tasks closes the offload thread's channel, which ends it.
    drop(local);
    drop(rt);
    if let Some(thread) = offload {
        let _ = thread.join();
    }
}

/// Serves until the generation ends; returns the offload thread to join, if one was started.
async fn worker_main(
    mut spec: WorkerSpec,
    ready: mpsc::Sender<Result<(), String>>,
) -> Option<JoinHandle<()>> {
    profiling::attach(&spec.stats, Table::Worker);
    let worker = match Worker::new(&spec) {
        Ok(worker) => Rc::new(worker),
        Err(e) => {
            let _ = ready.send(Err(format!("worker {}: {e}", spec.index)));
            return None;
        }
    };
    let offload = match start_offload(&mut spec, &worker) {
        Ok(offload) => offload,
        Err(e) => {
            let _ = ready.send(Err(format!("worker {}: {e}", spec.index)));
            return None;
        }
    };
    for l in std::mem::take(&mut spec.listeners) {
        let listener = match TcpListener::from_std(l.socket) {
            Ok(listener) => listener,
            Err(e) => {
                let _ = ready.send(Err(format!("worker {}: listener: {e}", spec.index)));
                return offload;
            }
        };
        let accept = accept::run(
            Rc::clone(&worker),
            l.frontend,
            listener,
            l.tls,
            l.accept_proxy,
        );
        tokio::task::spawn_local(Profiled::new(Kind::Accept, accept));
    }
    let sweep = sweep_pools(Rc::clone(&worker));
    tokio::task::spawn_local(Profiled::new(Kind::PoolSweep, sweep));
    let _ = ready.send(Ok(()));

    // Run until told to drain or stop (or the handle is gone, which means stop).
    let mode = next_mode(&mut spec.shutdown, |m| m != Mode::Run).await;
    let life = &worker.life;
    life.set_mode(mode);
    let global = worker.shared.global();
    if mode == Mode::Drain {
        tokio::select! {
            () = life.drained() => return offload,
            () = tokio::time::sleep(global.hard_stop_after) => {
                warn!(
                    worker = spec.index,
                    sessions = life.sessions(),
                    "hard_stop_after over, closing the old generation's connections"
                );
                return offload;
            }
            _ = next_mode(&mut spec.shutdown, |m| m == Mode::Stop) => life.set_mode(Mode::Stop),
        }
    }
    if tokio::time::timeout(global.grace, life.drained())
        .await
        .is_err()
    {
        warn!(
            worker = spec.index,
            sessions = life.sessions(),
            "grace period over, closing remaining connections"
        );
    }
    offload
}

/// With `handshake_offload`, moves the TLS listeners to a new offload thread and spawns the
/// task that takes in its handshaken connections.
fn start_offload(spec: &mut WorkerSpec, w: &Rc<Worker>) -> Result<Option<JoinHandle<()>>, String> {
    if !spec.shared.global().handshake_offload {
        return Ok(None);
    }
    let (tls, plain) = std::mem::take(&mut spec.listeners)
        .into_iter()
        .partition(|l| l.tls.is_some());
    spec.listeners = plain;
    let (thread, handshaken) = offload::start(offload::Spec {
        index: spec.index,
        workers: spec.workers,
        cpu: spec.cpu,
        shared: Arc::clone(&spec.shared),
        stats: Arc::clone(&spec.stats),
        listeners: tls,
        shutdown: spec.shutdown.clone(),
    })?;
    tokio::task::spawn_local(offload::take_in(Rc::clone(w), handshaken));
    Ok(Some(thread))
}

/// Closes expired idle upstream connections once a second, and lets the kept memory of ended
/// sessions decay (`buffer/kept.rs`).
async fn sweep_pools(w: Rc<Worker>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = w.life.stopping() => {
                w.pools.clear();
                return;
            }
            _ = tick.tick() => {
                let kept = w.pools.sweep();
                w.spares.sweep();
                tracing::trace!(idle = kept, "pool sweep");
            }
        }
    }
}
