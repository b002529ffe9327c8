//! Start-up of a generation: the snapshot it runs, the listening sockets (bound, or inherited
//! from the previous generation), one pinned thread per worker, then the health checker once
//! every worker accepts.

use std::net::SocketAddr;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use rustls::ServerConfig;
use tern_config::Config;
use tokio::sync::{watch, Semaphore};

use crate::access_log::AccessLog;
use crate::exchange;
use crate::generation::handover::{self, Inherit, InheritedBind};
use crate::generation::{BoundBind, ProxyHandle};
use crate::listen;
use crate::listen::proxy_in::Expect;
use crate::listen::rate_cap::RateCap;
use crate::stats::{Stats, WorkerStats};
use crate::tls::ossl::OpensslBinds;
use crate::tls::reload::{Reloader, TlsSlot};
use crate::worker::{self, Mode, Shared, WorkerListener, WorkerSpec};
use crate::{health, profiling, resolve, rules};

/// A configuration ready to run: the validated config plus the TLS configuration built for each
/// bind (`tls[frontend][bind]`, `None` for plain binds) and for each server with `tls`
/// (`servers_tls[backend][server]`, see [`servers_tls`]).
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub config: Config,
    pub tls: Vec<Vec<Option<Arc<ServerConfig>>>>,
    pub servers_tls: Vec<Vec<Option<Arc<rustls::ClientConfig>>>>,
    /// The OpenSSL engine of each bind with `engine = "openssl"` (`openssl[frontend][bind]`,
    /// see [`crate::openssl_binds`]); such binds have no entry in `tls`.
    pub openssl: OpensslBinds,
    /// The access log (`[access_log]`), opened once by the caller and shared by generations.
    pub access_log: Option<AccessLog>,
}

/// A server's TLS configuration could not be built (its `ca` or `cert` file).
#[derive(Debug, thiserror::Error)]
#[error("backend {backend} server {server}: {cause}")]
pub struct ServerTlsError {
    pub backend: String,
    pub server: String,
    pub cause: tern_tls::TlsError,
}

/// The client TLS configuration of every server with `tls` (`None` for plain servers), one per
/// server, shared by all workers and the health checker so that they share its session cache.
pub fn servers_tls(
    config: &Config,
) -> Result<Vec<Vec<Option<Arc<rustls::ClientConfig>>>>, ServerTlsError> {
    config
        .backends
        .iter()
        .map(|be| {
            be.servers
                .iter()
                .map(|server| {
                    server
                        .tls
                        .as_ref()
                        .map(|tls| {
                            tern_tls::upstream_config(tls).map_err(|cause| ServerTlsError {
                                backend: be.name.clone(),
                                server: server.name.clone(),
                                cause,
                            })
                        })
                        .transpose()
                })
                .collect()
        })
        .collect()
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {address} (frontend {frontend}): {cause}")]
    Bind {
        frontend: String,
        address: SocketAddr,
        cause: std::io::Error,
    },
    #[error("CPU {cpu} is not available to this process (available: {available:?})")]
    Cpu { cpu: usize, available: Vec<usize> },
    #[error(
        "frontend {frontend} bind {address}: TLS is configured but no TLS settings were built"
    )]
    MissingTls {
        frontend: String,
        address: SocketAddr,
    },
    #[error("backend {backend} server {server}: TLS is configured but no TLS settings were built")]
    MissingServerTls { backend: String, server: String },
    #[error("frontend {0} uses a backend that does not exist")]
    UnknownBackend(String),
    #[error("starting worker {index}: {reason}")]
    Worker { index: usize, reason: String },
}

/// Binds every listening socket, starts the workers, and returns once all are accepting.
pub fn start(snapshot: Snapshot) -> Result<ProxyHandle, StartError> {
    start_with(snapshot, Inherit::default())
}

/// Starts a generation that takes over from a previous one (`inherit`, from
/// [`ProxyHandle::handover`]): its listening sockets where the configured address is the same,
/// its servers' state, its TLS session caches. Sockets not used are closed here (their binds
/// are gone from the configuration).
pub fn start_with(mut snapshot: Snapshot, mut inherit: Inherit) -> Result<ProxyHandle, StartError> {
    handover::apply_sessions(&snapshot.config, &mut snapshot.tls, &inherit.sessions);
    let cfg = &snapshot.config;
    profiling::set_enabled(cfg.global.profiling);
    let count = cfg
        .global
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let cpus = plan_cpus(cfg.global.cpus.as_deref(), count)?;
    let (reloader, mut slots) = Reloader::new(
        snapshot.config.clone(),
        snapshot.tls.clone(),
        snapshot.openssl.clone(),
        count,
    );
    let (binds, per_worker, sockets) = bind_all(&snapshot, count, &mut slots, &mut inherit)?;
    // From here the workers' copies and the reloader hold the TLS configurations; the snapshot
    // does not keep a set that a reload would leave stale.
    snapshot.tls = Vec::new();
    snapshot.openssl = Vec::new();
    let reloader = Arc::new(reloader);
    let shared = Arc::new(shared_state(snapshot)?);
    handover::apply_servers(shared.config(), &shared.states, &inherit.servers);
    if let Some(tables) = inherit.tables.take() {
        tables.apply(shared.config(), &shared.tables, &shared.states);
    }
    let (shutdown, shutdown_rx) = watch::channel(Mode::Run);
    let (checker_stop, checker_stop_rx) = watch::channel(false);
    let (ready_tx, ready_rx) = mpsc::channel();
    let (workers, mut all_stats) =
        spawn_workers(&shared, per_worker, &cpus, &shutdown_rx, ready_tx)?;
    let checker_stats = worker_stats(&shared);
    let resolvers = resolve::counters(shared.config());
    all_stats.push(Arc::clone(&checker_stats));
    let mut handle = ProxyHandle {
        binds,
        reloader: Arc::clone(&reloader),
        workers,
        checker: None,
        resolver: None,
        shutdown,
        checker_stop,
        stats: Stats {
            workers: all_stats,
            states: Arc::clone(&shared.states),
            reloads: reloader.counters(),
            access_log: shared.access_log().cloned(),
            auth: shared.auth.as_ref().map(|a| Arc::clone(a.stats())),
            resolvers: resolvers.clone(),
        },
        shared: Arc::clone(&shared),
        sockets,
        peers: None,
    };
    if let Err(e) = wait_ready(&ready_rx, count) {
        handle.shutdown();
        handle.join();
        return Err(e);
    }
    // DNS starts once every worker serves, like the checks below.
    match resolve::spawn(
        shared.config(),
        &shared.states,
        &resolvers,
        checker_stop_rx.clone(),
    ) {
        Ok(thread) => handle.resolver = thread,
        Err(e) => {
            handle.shutdown();
            handle.join();
            return Err(StartError::Worker {
                index: count,
                reason: format!("resolver: {e}"),
            });
        }
    }
    // Checks start once every worker serves, so that a server found down is taken out of
    // balancers that exist.
    match health::spawn(
        shared.config(),
        &shared.snapshot.servers_tls,
        &shared.states,
        &checker_stats,
        checker_stop_rx,
    ) {
        Ok(checker) => handle.checker = checker,
        Err(e) => {
            handle.shutdown();
            handle.join();
            return Err(StartError::Worker {
                index: count,
                reason: format!("health checker: {e}"),
            });
        }
    }
    let peers_stop = handle.checker_stop.subscribe();
    match crate::peers::Runtime::start(shared.config(), &shared.states, &shared.tables, peers_stop)
    {
        Ok(peers) => handle.peers = peers,
        Err(e) => {
            handle.shutdown();
            handle.join();
            return Err(StartError::Worker {
                index: count,
                reason: format!("peers thread: {e}"),
            });
        }
    }
    Ok(handle)
}

/// A block of counters for one thread (a worker or the health checker).
fn worker_stats(shared: &Shared) -> Arc<WorkerStats> {
    let config = shared.config();
    let servers: Vec<usize> = config.backends.iter().map(|b| b.servers.len()).collect();
    Arc::new(WorkerStats::new(config.frontends.len(), &servers))
}

/// The worker threads started and their counters.
type Spawned = (Vec<JoinHandle<()>>, Vec<Arc<WorkerStats>>);

/// Starts one worker thread per list of listeners (`per_worker[index]`), pinned to
/// `cpus[index]`; each reports through `ready` once it accepts. Returns the threads and their
/// counters.
fn spawn_workers(
    shared: &Arc<Shared>,
    per_worker: Vec<Vec<WorkerListener>>,
    cpus: &[Option<usize>],
    shutdown: &watch::Receiver<Mode>,
    ready: mpsc::Sender<Result<(), String>>,
) -> Result<Spawned, StartError> {
    let count = per_worker.len();
    let mut workers = Vec::with_capacity(count);
    let mut all_stats = Vec::with_capacity(count);
    for (index, listeners) in per_worker.into_iter().enumerate() {
        let stats = worker_stats(shared);
        all_stats.push(Arc::clone(&stats));
        let spec = WorkerSpec {
            index,
            workers: count,
            cpu: cpus.get(index).copied().flatten(),
            shared: Arc::clone(shared),
            stats,
            listeners,
            shutdown: shutdown.clone(),
        };
        let ready = ready.clone();
        let handle = std::thread::Builder::new()
            .name(format!("tern-worker-{index}"))
            .spawn(move || worker::run(spec, ready))
            .map_err(|e| StartError::Worker {
                index,
                reason: e.to_string(),
            })?;
        workers.push(handle);
    }
    Ok((workers, all_stats))
}

/// Waits until each of the `count` workers reported that it accepts; the first failure.
fn wait_ready(ready: &mpsc::Receiver<Result<(), String>>, count: usize) -> Result<(), StartError> {
    for index in 0..count {
        let failure = match ready.recv() {
            Ok(Ok(())) => continue,
            Ok(Err(reason)) => reason,
            Err(_) => "worker exited during start-up".to_owned(),
        };
        return Err(StartError::Worker {
            index,
            reason: failure,
        });
    }
    Ok(())
}

/// Which CPU each worker is pinned to: the configured list, or by default the CPUs this process
/// may run on, in order (so `taskset` still decides where a default tern runs).
fn plan_cpus(
    configured: Option<&[usize]>,
    workers: usize,
) -> Result<Vec<Option<usize>>, StartError> {
    let available: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    match configured {
        Some(list) => {
            if let Some(&cpu) = list.iter().find(|c| !available.contains(c)) {
                return Err(StartError::Cpu { cpu, available });
            }
            Ok((0..workers).map(|i| list.get(i).copied()).collect())
        }
        None if available.is_empty() => Ok(vec![None; workers]),
        None => Ok((0..workers)
            .map(|i| Some(available[i % available.len()]))
            .collect()),
    }
}

type Binding = (Vec<BoundBind>, Vec<Vec<WorkerListener>>, Vec<InheritedBind>);

/// Binds every bind of every frontend once per worker, or takes the sockets a previous
/// generation left in `inherit`; each worker's listener takes its TLS slot (`slots[worker]
/// [bind]`, binds in the same order). Also returns a duplicate of every socket (for the next
/// generation).
fn bind_all(
    snapshot: &Snapshot,
    workers: usize,
    slots: &mut [Vec<Option<TlsSlot>>],
    inherit: &mut Inherit,
) -> Result<Binding, StartError> {
    let cfg = &snapshot.config;
    let mut bound = Vec::new();
    let mut kept = Vec::new();
    let mut per_worker: Vec<Vec<WorkerListener>> = (0..workers).map(|_| Vec::new()).collect();
    let mut slot_index = 0;
    for (f, fe) in cfg.frontends.iter().enumerate() {
        for (i, bind) in fe.binds.iter().enumerate() {
            let tls = snapshot
                .tls
                .get(f)
                .and_then(|t| t.get(i))
                .cloned()
                .flatten();
            let openssl = snapshot
                .openssl
                .get(f)
                .and_then(|t| t.get(i))
                .cloned()
                .flatten();
            if bind.tls.is_some() && tls.is_none() && openssl.is_none() {
                return Err(StartError::MissingTls {
                    frontend: fe.name.clone(),
                    address: bind.address,
                });
            }
            let bind_error = |cause| StartError::Bind {
                frontend: fe.name.clone(),
                address: bind.address,
                cause,
            };
            let inherited = inherit.take_bind(&fe.name, bind.address);
            let (address, sockets) = match inherited {
                Some(old) => listen::listener::adopt_group(
                    old.address,
                    old.sockets,
                    workers,
                    cfg.global.backlog,
                )
                .map_err(bind_error)?,
                None => listen::listener::bind_group(bind.address, workers, cfg.global.backlog)
                    .map_err(bind_error)?,
            };
            bound.push(BoundBind {
                frontend: fe.name.clone(),
                configured: bind.address,
                address,
                tls: tls.is_some() || openssl.is_some(),
            });
            kept.push(InheritedBind {
                frontend: fe.name.clone(),
                configured: bind.address,
                address,
                sockets: sockets
                    .iter()
                    .map(std::net::TcpListener::try_clone)
                    .collect::<std::io::Result<_>>()
                    .map_err(bind_error)?,
            });
            // More sockets than workers (the previous generation had more): a worker accepts on
            // several, so no accept queue is left without a reader.
            let worker_slots: Vec<Option<TlsSlot>> = (0..workers)
                .map(|w| {
                    slots
                        .get_mut(w)
                        .and_then(|s| s.get_mut(slot_index))
                        .and_then(Option::take)
                })
                .collect();
            for (i, socket) in sockets.into_iter().enumerate() {
                let w = i % workers;
                // Each worker has its own copy of the TLS configuration (tls/reload.rs), so the
                // reference count bumped per handshake is not a cache line shared between
                // workers; its resolver notes the certificate type chosen, for the counters.
                let tls = worker_slots.get(w).cloned().flatten();
                per_worker[w].push(WorkerListener {
                    frontend: f,
                    socket,
                    tls,
                    accept_proxy: Expect::of(bind),
                });
            }
            slot_index += 1;
        }
    }
    Ok((bound, per_worker, kept))
}

fn shared_state(snapshot: Snapshot) -> Result<Shared, StartError> {
    let cfg = &snapshot.config;
    let routing = rules::Routing::build(cfg)?;
    let reads_dst_port = rules::reads_dst_port(cfg);
    let auth = rules::auth::authenticator(cfg);
    let frontend_limits = cfg
        .frontends
        .iter()
        .map(|fe| {
            fe.maxconn
                .map(|n| Arc::new(Semaphore::new(n.min(Semaphore::MAX_PERMITS))))
        })
        .collect();
    let global_limit = Arc::new(Semaphore::new(
        cfg.global.maxconn.min(Semaphore::MAX_PERMITS),
    ));
    for (b, be) in cfg.backends.iter().enumerate() {
        for (i, server) in be.servers.iter().enumerate() {
            let built = snapshot.servers_tls.get(b).and_then(|s| s.get(i));
            if server.tls.is_some() && !matches!(built, Some(Some(_))) {
                return Err(StartError::MissingServerTls {
                    backend: be.name.clone(),
                    server: server.name.clone(),
                });
            }
        }
    }
    let states = exchange::servers::build(&snapshot.config);
    let tables = Arc::new(crate::track::table::Tables::build(&snapshot.config.tables));
    let frontend_rates = cfg
        .frontends
        .iter()
        .map(|fe| RateCap::new(fe.rate_limit_sessions))
        .collect();
    let websocket_tls = exchange::websocket::client_configs(cfg, &snapshot.servers_tls);
    Ok(Shared {
        websocket_tls,
        tables,
        conn_rate: RateCap::new(cfg.global.max_conn_rate),
        sess_rate: RateCap::new(cfg.global.max_sess_rate),
        frontend_rates,
        snapshot,
        routing,
        reads_dst_port,
        global_limit,
        frontend_limits,
        states,
        auth,
    })
}
