//! Workers: one pinned OS thread per CPU, each with its own event loop and listening sockets.
//!
//! This is the shared-nothing model of HAProxy and nginx workers (docs/design/0001-workers.md):
//! a worker accepts on its own SO_REUSEPORT sockets, serves its connections to the end, and keeps
//! its own balancer state and upstream pools. What workers share is read-only ([`Shared`]: the
//! configuration snapshot and TLS configurations) plus atomics: the connection limits (taken once
//! per connection, right after `accept`, so beyond the limit each listener holds one connection
//! and the rest wait in the kernel backlog) and counters, which are per worker anyway.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};
use tracing::warn;

use crate::admission::Admission;
use crate::balance::Balancers;
use crate::offload::Offload;
use crate::pool::Pools;
use crate::profiling::{self, Kind, Profiled};
use crate::rules::Routing;
use crate::servers::BackendState;
use crate::session;
use crate::stats::{bump, WorkerStats};
use crate::tls_reload::TlsSlot;
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
}

/// One listening socket handed to a worker.
#[derive(Debug)]
pub(crate) struct WorkerListener {
    pub frontend: usize,
    pub socket: std::net::TcpListener,
    /// The bind's TLS configuration, swapped on reload; `None` for a plain bind.
    pub tls: Option<TlsSlot>,
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

/// What a generation of workers is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Accept and serve.
    Run,
    /// A newer generation took over (reload, upgrade): accept nothing, let every connection
    /// finish — its next response says `Connection: close`, an idle one closes when its
    /// keep-alive timeout expires — for up to `hard_stop_after`.
    Drain,
    /// Stop (SIGTERM): accept nothing, close idle connections now, give requests in flight up
    /// to `grace`.
    Stop,
}

/// A worker's own state, reached from its tasks through an `Rc`.
#[derive(Debug)]
pub(crate) struct Worker {
    pub shared: Arc<Shared>,
    pub stats: Arc<WorkerStats>,
    pub pools: Rc<Pools>,
    pub balancers: Rc<Balancers>,
    /// Handshake rate caps; `None` when none is configured.
    pub admission: Option<Admission>,
    /// The handshake offload thread (`handshake_offload`); `None` when off.
    pub offload: Option<Offload>,
    mode: Cell<Mode>,
    /// Notified at every change of `mode`.
    stop: Notify,
    sessions: Cell<usize>,
    drained: Notify,
}

impl Worker {
    fn new(spec: &WorkerSpec) -> Result<Self, String> {
        let backends = &spec.shared.snapshot.config.backends;
        // The worker index seeds random draws and offsets round-robin cycles between workers.
        let states = Arc::clone(&spec.shared.states);
        let balancers =
            Balancers::new(backends, states, spec.index as u64).map_err(|e| e.to_string())?;
        let pool_shape: Vec<_> = backends.iter().map(|b| (b.servers.len(), b.pool)).collect();
        Ok(Self {
            shared: Arc::clone(&spec.shared),
            stats: Arc::clone(&spec.stats),
            pools: Pools::new(&pool_shape),
            balancers: Rc::new(balancers),
            admission: Admission::new(&spec.shared.snapshot.config.global, spec.workers),
            offload: if spec.shared.snapshot.config.global.handshake_offload {
                let offload = Offload::start(spec.index, spec.cpu);
                Some(
                    offload
                        .map_err(|e| format!("cannot start the handshake offload thread: {e}"))?,
                )
            } else {
                None
            },
            mode: Cell::new(Mode::Run),
            stop: Notify::new(),
            sessions: Cell::new(0),
            drained: Notify::new(),
        })
    }

    /// Whether the worker is draining or stopping (connections finish their request, then
    /// close).
    pub(crate) fn is_stopping(&self) -> bool {
        self.mode.get() != Mode::Run
    }

    /// Whether idle connections must close now (a stop, not a drain).
    pub(crate) fn closes_idle(&self) -> bool {
        self.mode.get() == Mode::Stop
    }

    /// Resolves when the worker starts draining or stopping (at once if it has): accept
    /// nothing more.
    pub(crate) async fn stopping(&self) {
        self.until(|m| m != Mode::Run).await;
    }

    /// Resolves when idle connections must close (a stop).
    pub(crate) async fn closing_idle(&self) {
        self.until(|m| m == Mode::Stop).await;
    }

    async fn until(&self, done: impl Fn(Mode) -> bool) {
        loop {
            let notified = self.stop.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if done(self.mode.get()) {
                return;
            }
            notified.await;
        }
    }

    fn set_mode(&self, mode: Mode) {
        self.mode.set(mode);
        self.stop.notify_waiters();
    }

    /// Counts a session for the graceful stop; the guard uncounts it.
    pub(crate) fn session_started(self: &Rc<Self>) -> SessionCount {
        self.sessions.set(self.sessions.get() + 1);
        SessionCount {
            worker: Rc::clone(self),
        }
    }

    /// Waits for connection slots under the frontend's and the global limit.
    async fn admit(&self, frontend: usize) -> Option<Permits> {
        let fe = match self.shared.frontend_limits.get(frontend).cloned().flatten() {
            Some(sem) => Some(sem.acquire_owned().await.ok()?),
            None => None,
        };
        let global = Arc::clone(&self.shared.global_limit)
            .acquire_owned()
            .await
            .ok()?;
        Some(Permits {
            _frontend: fe,
            _global: global,
        })
    }
}

/// Connection slots held for the life of a session.
#[derive(Debug)]
pub(crate) struct Permits {
    _frontend: Option<OwnedSemaphorePermit>,
    _global: OwnedSemaphorePermit,
}

/// Keeps a session counted while alive.
#[derive(Debug)]
pub(crate) struct SessionCount {
    worker: Rc<Worker>,
}

impl Drop for SessionCount {
    fn drop(&mut self) {
        let w = &self.worker;
        w.sessions.set(w.sessions.get().saturating_sub(1));
        if w.sessions.get() == 0 && w.is_stopping() {
            w.drained.notify_one();
        }
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
    local.block_on(&rt, worker_main(spec, ready));
}

async fn worker_main(mut spec: WorkerSpec, ready: mpsc::Sender<Result<(), String>>) {
    profiling::attach(&spec.stats);
    let worker = match Worker::new(&spec) {
        Ok(worker) => Rc::new(worker),
        Err(e) => {
            let _ = ready.send(Err(format!("worker {}: {e}", spec.index)));
            return;
        }
    };
    for l in std::mem::take(&mut spec.listeners) {
        let listener = match TcpListener::from_std(l.socket) {
            Ok(listener) => listener,
            Err(e) => {
                let _ = ready.send(Err(format!("worker {}: listener: {e}", spec.index)));
                return;
            }
        };
        let accept = accept_loop(Rc::clone(&worker), l.frontend, listener, l.tls);
        tokio::task::spawn_local(Profiled::new(Kind::Accept, accept));
    }
    let sweep = sweep_pools(Rc::clone(&worker));
    tokio::task::spawn_local(Profiled::new(Kind::PoolSweep, sweep));
    let _ = ready.send(Ok(()));

    // Run until told to drain or stop (or the handle is gone, which means stop).
    let mode = next_mode(&mut spec.shutdown, |m| m != Mode::Run).await;
    worker.set_mode(mode);
    let global = &worker.shared.snapshot.config.global;
    if mode == Mode::Drain {
        tokio::select! {
            () = worker.drained() => return,
            () = tokio::time::sleep(global.hard_stop_after) => {
                warn!(
                    worker = spec.index,
                    sessions = worker.sessions.get(),
                    "hard_stop_after over, closing the old generation's connections"
                );
                return;
            }
            _ = next_mode(&mut spec.shutdown, |m| m == Mode::Stop) => worker.set_mode(Mode::Stop),
        }
    }
    if tokio::time::timeout(global.grace, worker.drained())
        .await
        .is_err()
    {
        warn!(
            worker = spec.index,
            sessions = worker.sessions.get(),
            "grace period over, closing remaining connections"
        );
    }
}

/// Waits for a mode `wanted` accepts; `Stop` when the sender is gone.
async fn next_mode(rx: &mut watch::Receiver<Mode>, wanted: impl Fn(Mode) -> bool) -> Mode {
    loop {
        let mode = *rx.borrow_and_update();
        if wanted(mode) {
            return mode;
        }
        if rx.changed().await.is_err() {
            return Mode::Stop;
        }
    }
}

impl Worker {
    /// Resolves when no session is left (at once if none is).
    async fn drained(&self) {
        loop {
            let notified = self.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.sessions.get() == 0 {
                return;
            }
            notified.await;
        }
    }
}

async fn accept_loop(
    w: Rc<Worker>,
    frontend: usize,
    listener: TcpListener,
    mut slot: Option<TlsSlot>,
) {
    // The configuration handed to each accepted connection; a reload swaps it here, between
    // accepts, so connections already accepted keep theirs (tls_reload.rs).
    let mut tls: Option<Arc<ServerConfig>> = slot.as_mut().and_then(TlsSlot::current);
    // While too many handshakes wait for the rate cap, stop accepting on TLS listeners: new
    // connections wait in the kernel's accept queue (admission.rs).
    let capped = tls.is_some() && w.admission.as_ref().is_some_and(Admission::has_rate_cap);
    loop {
        if capped {
            if let Some(adm) = &w.admission {
                tokio::select! {
                    biased;
                    () = w.stopping() => return,
                    () = adm.room() => {}
                }
            }
        }
        let accepted = tokio::select! {
            biased;
            () = w.stopping() => return,
            reloaded = reloaded(&mut slot) => {
                match slot.as_mut().filter(|_| reloaded).and_then(TlsSlot::current) {
                    Some(fresh) => tls = Some(fresh),
                    // No reload can come any more: stop watching (the set in use stays).
                    None if !reloaded => slot = None,
                    // A TLS bind never turns plain.
                    None => {}
                }
                continue;
            }
            r = listener.accept() => r,
        };
        let (stream, peer) = match accepted {
            Ok(got) => got,
            Err(e) => {
                // Out of file descriptors or memory: back off instead of spinning on accept.
                warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Accept first, then wait for a slot while holding just this one connection: a worker
        // that waited for a slot *before* accepting would keep one reserved while idle, and
        // connections the kernel hashes to another worker could wait behind it indefinitely.
        // Beyond the limit, each listener holds at most one accepted connection; the rest wait
        // in the kernel backlog.
        let permits = tokio::select! {
            biased;
            () = w.stopping() => return,
            p = w.admit(frontend) => match p { Some(p) => p, None => return },
        };
        bump(&w.stats.frontends[frontend].sessions);
        let task = session::serve(Rc::clone(&w), frontend, stream, peer, tls.clone(), permits);
        tokio::task::spawn_local(task);
    }
}

/// Resolves when a reload swapped the listener's TLS configuration (`true`) or none can come any
/// more (`false`); never for a plain listener.
async fn reloaded(slot: &mut Option<TlsSlot>) -> bool {
    match slot {
        Some(slot) => slot.changed().await,
        None => std::future::pending().await,
    }
}

/// Closes expired idle upstream connections once a second.
async fn sweep_pools(w: Rc<Worker>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = w.stopping() => {
                w.pools.clear();
                return;
            }
            _ = tick.tick() => {
                let kept = w.pools.sweep();
                tracing::trace!(idle = kept, "pool sweep");
            }
        }
    }
}
