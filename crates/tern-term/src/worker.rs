//! A worker: one OS thread, one current-thread tokio runtime, its own listening sockets.
//!
//! Why built on the caller's thread: the runtime is created and the sockets registered with it
//! before the thread starts, so every error reaches [`crate::start`]'s caller and the thread
//! itself has nothing left that can fail. Why per-worker copies of the page and the name
//! header: cloning a shared `Bytes` touches one reference count from every thread; a copy per
//! worker keeps each thread on its own cache lines.

use std::future::poll_fn;
use std::io;
use std::net::TcpListener as StdListener;
use std::sync::{mpsc, Arc};
use std::task::Poll;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http::HeaderValue;
use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::{conn, respond, Counters, TermError, GRACE};

/// Closes a connection idle (or sending its head) for this long.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(60);
/// Pause after an accept error such as "too many open files", so it does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// What every connection of one worker reads.
pub(crate) struct WorkerCtx {
    pub(crate) http: http1::Builder,
    pub(crate) h2: hyper::server::conn::http2::Builder<hyper_util::rt::TokioExecutor>,
    pub(crate) tls: Option<TlsAcceptor>,
    /// Connections open with a PROXY protocol header.
    pub(crate) accept_proxy: bool,
    /// `x-term-server` value.
    pub(crate) name: HeaderValue,
    /// The default HTML page.
    pub(crate) page: Bytes,
    pub(crate) counters: Arc<Counters>,
}

/// Everything [`spawn`] needs for worker `index`.
#[derive(Debug)]
pub(crate) struct Setup {
    pub(crate) index: usize,
    pub(crate) listeners: Vec<StdListener>,
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    pub(crate) accept_proxy: bool,
    pub(crate) name: String,
    pub(crate) cpu: Option<core_affinity::CoreId>,
    pub(crate) counters: Arc<Counters>,
    /// Receives `index` when the thread ends.
    pub(crate) done: mpsc::Sender<usize>,
}

/// Starts the worker thread; the returned sender stops it (so does dropping it).
pub(crate) fn spawn(setup: Setup) -> Result<(JoinHandle<()>, watch::Sender<bool>), TermError> {
    let index = setup.index;
    let err = |source| TermError::Worker { index, source };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(err)?;
    let listeners = {
        let _guard = rt.enter();
        setup
            .listeners
            .into_iter()
            .map(TcpListener::from_std)
            .collect::<io::Result<Vec<_>>>()
            .map_err(err)?
    };
    let ctx = Arc::new(WorkerCtx {
        http: http_builder(),
        h2: crate::h2::builder(),
        tls: setup.tls.map(TlsAcceptor::from),
        accept_proxy: setup.accept_proxy,
        name: HeaderValue::from_maybe_shared(Bytes::copy_from_slice(setup.name.as_bytes()))
            .map_err(|_| TermError::InvalidName(setup.name.clone()))?,
        page: respond::page(&setup.name),
        counters: setup.counters,
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let (cpu, done) = (setup.cpu, setup.done);
    let thread = std::thread::Builder::new()
        .name(format!("term-worker-{index}"))
        .spawn(move || {
            if let Some(cpu) = cpu {
                if !core_affinity::set_for_current(cpu) {
                    tracing::warn!("term worker {index}: cannot pin to cpu {}", cpu.id);
                }
            }
            rt.block_on(run(listeners, ctx, stop_rx));
            // Dropping the runtime here cancels connections still open after the grace period.
            drop(rt);
            // The handle may be gone already; nothing to report then.
            let _ = done.send(index);
        })
        .map_err(err)?;
    Ok((thread, stop_tx))
}

fn http_builder() -> http1::Builder {
    let mut b = http1::Builder::new();
    b.keep_alive(true)
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT);
    b
}

/// Accepts until told to stop, then gives open connections [`GRACE`] to finish.
async fn run(listeners: Vec<TcpListener>, ctx: Arc<WorkerCtx>, mut stop: watch::Receiver<bool>) {
    let mut conns = JoinSet::new();
    let mut next = 0;
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = accept_any(&listeners, &mut next) => match accepted {
                Ok(stream) => {
                    conns.spawn(conn::serve(stream, ctx.clone(), stop.clone()));
                }
                Err(e) => {
                    tracing::debug!("term: accept: {e}");
                    if !is_per_connection(&e) {
                        tokio::select! {
                            _ = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                            _ = stop.changed() => break,
                        }
                    }
                }
            },
        }
    }
    drop(listeners);
    let drained = tokio::time::timeout(GRACE, async { while conns.join_next().await.is_some() {} });
    if drained.await.is_err() {
        tracing::debug!("term: {} connections cut at shutdown", conns.len());
    }
}

/// Accepts on whichever listener is ready, starting after the last one served (fairness).
async fn accept_any(listeners: &[TcpListener], next: &mut usize) -> io::Result<TcpStream> {
    poll_fn(|cx| {
        let n = listeners.len();
        for k in 0..n {
            let i = (*next + k) % n;
            if let Poll::Ready(r) = listeners[i].poll_accept(cx) {
                *next = (i + 1) % n;
                return Poll::Ready(r.map(|(stream, _)| stream));
            }
        }
        Poll::Pending
    })
    .await
}

/// Errors that concern one failed connection, not the listener or the process.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}
