//! Handshake offload: a worker's TLS listeners are served by a low-priority thread of their
//! own, which accepts, runs the handshake and hands each established session to the worker.
//! Requests on established connections never wait behind a handshake, nor behind the system
//! calls of connections still handshaking.
//!
//! A worker is one event loop. Without offload, every full handshake it runs (key exchange and
//! signature, ~140 µs for ECDSA, ~1 ms for RSA-2048) blocks the loop, and under a flood of new
//! connections a keep-alive request that arrives waits for all the handshakes ahead of it in
//! that turn of the loop: its latency grows with the flood, whatever the rate cap. With
//! `handshake_offload`, each worker has an offload thread at nice 19 (pinned to the worker's
//! CPU when the worker is pinned) with an event loop of its own: the TLS binds' accept loops,
//! the rate cap and the handshakes run there, and the worker gets a connection once its
//! handshake is complete ([`Handshaken`]: the socket, taken off one event loop and put on the
//! other, and the TLS session with whatever it buffered: rustls' connection state, or
//! OpenSSL's session around the parked socket on an `engine = "openssl"` bind). When both
//! threads are runnable the kernel gives the worker (nice 0) the CPU first, so established
//! traffic is served at once and handshakes use what is left: the scheduler, not the event
//! loop, sets the priority.
//!
//! The first version offloaded only the handshake's CPU-heavy step (`process_new_packets` up to
//! the server's first flight) and left accept, the ClientHello read, the flight's write and the
//! close of refused connections on the worker. Under a flood of twice the handshake capacity,
//! that was 67% of the worker's time, in system calls and thread switches, and the keep-alive
//! p99 missed its goal (within 2× of unloaded) in a third of the runs (BENCHMARKS.md).
//!
//! Lifetime: the thread follows the generation's mode. When it stops accepting (drain, stop),
//! handshakes in progress finish and are handed over on a drain, and are dropped on a stop
//! (like idle connections: no request has been read from them). The worker counts the hand-over
//! channel as a session, so a draining worker waits for the handshakes still in progress. The
//! thread ends when it has none left, or when the worker is gone (its end of the channel
//! closed), and the worker joins it.

use std::rc::Rc;
use std::sync::{mpsc as std_mpsc, Arc};
use std::thread::JoinHandle;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use crate::access_log::Tracker;
use crate::lifecycle::{next_mode, Lifecycle, Mode};
use crate::listen::accept::{self, Accepted, Acceptor};
use crate::listen::proxy_in::{self, Addrs};
use crate::listen::session;
use crate::panics::{Guarded, Place, Task};
use crate::profiling::{self, Kind, Profiled, Table};
use crate::stats::WorkerStats;
use crate::tls::admission::Admission;
use crate::tls::engines::{self, Detached};
use crate::tls::handshake::Handshakes;
use crate::worker::{Permits, Shared, Worker, WorkerListener};

/// The niceness of offload threads: the lowest priority short of SCHED_IDLE, which could starve
/// handshakes entirely on a CPU kept busy by established traffic.
const NICE: i32 = 19;

/// A connection whose handshake is complete, on its way to the worker.
#[derive(Debug)]
pub(crate) struct Handshaken {
    pub frontend: usize,
    /// The client's addresses (the socket's, or its PROXY header's).
    pub addrs: Addrs,
    pub tls: Detached,
    pub permits: Permits,
    pub log: Option<Box<Tracker>>,
}

/// What an offload thread starts from.
#[derive(Debug)]
pub(crate) struct Spec {
    pub index: usize,
    pub workers: usize,
    pub cpu: Option<usize>,
    pub shared: Arc<Shared>,
    pub stats: Arc<WorkerStats>,
    /// The worker's TLS listeners.
    pub listeners: Vec<WorkerListener>,
    pub shutdown: watch::Receiver<Mode>,
}

/// Starts worker `spec.index`'s offload thread; returns it with the receiving end of its
/// handshaken connections once it accepts.
pub(crate) fn start(
    spec: Spec,
) -> Result<(JoinHandle<()>, mpsc::UnboundedReceiver<Handshaken>), String> {
    let (to_worker, handshaken) = mpsc::unbounded_channel();
    let (ready, started) = std_mpsc::channel();
    let index = spec.index;
    let thread = std::thread::Builder::new()
        .name(format!("tern-offload-{index}"))
        .spawn(move || run(spec, to_worker, &ready))
        .map_err(|e| format!("cannot start the handshake offload thread: {e}"))?;
    // Start-up is quick (an event loop, the listeners registered); the worker serves nothing
    // before it reports ready anyway.
    match started.recv() {
        Ok(Ok(())) => Ok((thread, handshaken)),
        Ok(Err(e)) => Err(format!("handshake offload thread: {e}")),
        Err(_) => Err("the handshake offload thread exited during start-up".to_owned()),
    }
}

/// Takes in the offload thread's connections until it ends, each served to its end by a task
/// of the worker. Counted as a session, so that a draining worker waits for them.
pub(crate) async fn take_in(w: Rc<Worker>, mut handshaken: mpsc::UnboundedReceiver<Handshaken>) {
    let _counted = w.session_started();
    while let Some(done) = handshaken.recv().await {
        let place = Place::frontend(done.frontend);
        let serve = session::resume(Rc::clone(&w), done);
        tokio::task::spawn_local(Guarded::new(&w.stats, place, Task::Connection, serve));
    }
}

/// The offload thread's state, reached from its tasks through an `Rc`.
struct Offload {
    shared: Arc<Shared>,
    stats: Arc<WorkerStats>,
    admission: Option<Admission>,
    life: Rc<Lifecycle>,
    to_worker: mpsc::UnboundedSender<Handshaken>,
}

fn run(
    spec: Spec,
    to_worker: mpsc::UnboundedSender<Handshaken>,
    ready: &std_mpsc::Sender<Result<(), String>>,
) {
    lower_priority(spec.cpu);
    profiling::attach(&spec.stats, Table::Offload);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(format!("event loop: {e}")));
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, offload_main(spec, to_worker, ready));
}

async fn offload_main(
    mut spec: Spec,
    to_worker: mpsc::UnboundedSender<Handshaken>,
    ready: &std_mpsc::Sender<Result<(), String>>,
) {
    let o = Rc::new(Offload {
        admission: Admission::new(spec.shared.global(), spec.workers),
        shared: spec.shared,
        stats: spec.stats,
        life: Rc::new(Lifecycle::new()),
        to_worker,
    });
    for l in std::mem::take(&mut spec.listeners) {
        let listener = match TcpListener::from_std(l.socket) {
            Ok(listener) => listener,
            Err(e) => {
                let _ = ready.send(Err(format!("listener: {e}")));
                return;
            }
        };
        let accept = accept::run(Rc::clone(&o), l.frontend, listener, l.tls, l.accept_proxy);
        tokio::task::spawn_local(Profiled::new(Kind::Accept, accept));
    }
    let _ = ready.send(Ok(()));
    let worker_gone = o.to_worker.clone();
    tokio::select! {
        () = follow(&o.life, &mut spec.shutdown) => {}
        () = worker_gone.closed() => {}
    }
}

/// Follows the generation's mode until the handshakes in progress are over once accepting
/// stopped.
async fn follow(life: &Lifecycle, shutdown: &mut watch::Receiver<Mode>) {
    let mode = next_mode(shutdown, |m| m != Mode::Run).await;
    life.set_mode(mode);
    if mode == Mode::Drain {
        tokio::select! {
            () = life.drained() => return,
            _ = next_mode(shutdown, |m| m == Mode::Stop) => life.set_mode(Mode::Stop),
        }
    }
    life.drained().await;
}

impl Acceptor for Offload {
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
        let shake = handshake(Rc::clone(self), conn);
        tokio::task::spawn_local(Guarded::new(&self.stats, place, Task::Handshake, shake));
    }
}

/// Runs an accepted connection's handshake and hands the session to the worker.
async fn handshake(o: Rc<Offload>, accepted: Accepted) {
    let Accepted {
        frontend,
        mut stream,
        peer,
        tls,
        accept_proxy,
        permits,
    } = accepted;
    // Only TLS listeners (either engine) come here (`worker.rs`).
    let Some(bind) = tls else { return };
    let _counted = o.life.session_started();
    // The PROXY header comes before the ClientHello on the wire.
    let Some(addrs) = proxy_in::addresses_of(&*o, frontend, accept_proxy, &mut stream, peer).await
    else {
        return;
    };
    let peer = addrs.peer;
    let mut log = Tracker::start(&o.shared, frontend, peer);
    let Some(tls) = engines::handshake(
        o.handshakes(),
        &o.life,
        frontend,
        (stream, peer),
        bind,
        &mut log,
    )
    .await
    else {
        return;
    };
    let tls = match tls.detach() {
        Ok(tls) => tls,
        Err(e) => {
            tracing::warn!(%peer, error = %e, "cannot hand a handshaken connection to the worker");
            return;
        }
    };
    // Fails only when the worker is gone (its generation ended): the connection closes.
    let _ = o.to_worker.send(Handshaken {
        frontend,
        addrs,
        tls,
        permits,
        log,
    });
}

fn lower_priority(cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        if !core_affinity::set_for_current(core_affinity::CoreId { id: cpu }) {
            tracing::warn!(cpu, "could not pin the handshake offload thread");
        }
    }
    let tid = rustix::thread::gettid();
    // On Linux the "process" priority of a thread id is that thread's alone.
    if let Err(e) = rustix::process::setpriority_process(Some(tid), NICE) {
        tracing::warn!(error = %e, "could not lower the handshake offload thread's priority");
    }
}
