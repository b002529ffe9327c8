//! `tern term`: the query-parameter-driven HTTP/1.1 and HTTP/2 test backend (like HAProxy's
//! httpterm).
//!
//! Why it exists: tern's integration tests, `tern demo` and the benchmarks need a backend whose
//! every response is predictable from the request alone, that can misbehave on demand (delays,
//! odd statuses, truncated bodies) and that is fast enough never to be the bottleneck.
//!
//! The response is chosen by query parameters on any path (unknown ones are ignored, a bad
//! value is answered 400 naming the parameter):
//!
//! | parameter | effect |
//! |---|---|
//! | `s=SIZE` | body of SIZE bytes (`512`, `64k`, `16m`, `1g`; 1024-based; at most `64g`), byte `i` is [`fill_byte`]`(i)` |
//! | `t=MS` | wait MS milliseconds before sending the response head |
//! | `r=STATUS` | response status, 200 to 599; 204 and 304 have no body |
//! | `k=0` | `Connection: close` after this response |
//! | `c=1` | chunked transfer-encoding instead of content-length |
//! | `x=N` | announce the body (`s`, default 1k) but send only N bytes, then close |
//! | `e=1` | stream the request body back as it arrives (chunked) |
//! | `h=1` | body is the request head: `METHOD URI VERSION`, then `name: value` lines |
//! | `sc=NAME=VALUE` | a `Set-Cookie: NAME=VALUE; Path=/` field (repeatable, one field each) |
//! | none | a small HTML page naming the server |
//!
//! Every response carries `x-term-server: NAME` and `content-type`; HEAD gets GET's headers.
//!
//! HTTP/2 (`h2.rs`): a TLS connection that negotiated ALPN `h2` (offer it in the
//! [`TermOptions::tls`] configuration, as `tern term --tls-cert` does) and a plain connection
//! that opens with the HTTP/2 client preface (h2c with prior knowledge, detected in
//! `preface.rs`) are served over HTTP/2 with the same parameters, one response per stream;
//! on HTTP/2 `k=0` has no effect and `x=N` resets the stream instead of closing the connection.
//! With [`TermOptions::accept_proxy`], every connection must open with a PROXY protocol header
//! (v1 or v2), and every response on it says what the header said: `x-proxy-version` (`1` or
//! `2`), `x-proxy-src` and `x-proxy-dst` (`IP:PORT`, or `unknown`, or `local` for v2 LOCAL).
//!
//! Architecture: `threads` OS threads, each with its own tokio current-thread runtime and its
//! own SO_REUSEPORT listening socket per address, so the kernel spreads connections and the
//! threads share nothing but atomic counters (each thread has its own, summed on read).
//! [`start`] binds every socket before returning, so a port in use is reported to the caller
//! and a returned [`TermHandle`] is immediately connectable.
#![forbid(unsafe_code)]

mod body;
mod conn;
mod h2;
mod listener;
mod preface;
mod proxy_header;
mod query;
mod respond;
mod worker;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::watch;

pub use body::{fill_byte, FILL_PATTERN};

/// How long in-flight connections may finish after [`TermHandle::shutdown`] before they are cut.
const GRACE: Duration = Duration::from_secs(1);
/// How long [`TermHandle::shutdown`] waits for the worker threads in total.
const JOIN_BOUND: Duration = Duration::from_secs(3);

/// What to start: addresses, TLS, threads, name and CPU pinning.
#[derive(Debug, Clone)]
pub struct TermOptions {
    /// Addresses to listen on; port 0 picks a free port (the same one for every thread).
    pub listen: Vec<SocketAddr>,
    /// TLS server configuration, built by the caller; `None` serves plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Number of worker threads, at least 1.
    pub threads: usize,
    /// Server name shown in the page and in `x-term-server`; default `term-<first port>`.
    pub name: Option<String>,
    /// Pin worker thread `i` to CPU `cpus[i % cpus.len()]`.
    pub cpus: Option<Vec<usize>>,
    /// Every connection opens with a PROXY protocol header (v1 or v2, HAProxy's
    /// `accept-proxy`), echoed in `x-proxy-*` response headers; one without is closed.
    pub accept_proxy: bool,
}

impl TermOptions {
    /// One plain-HTTP thread on `addr`, default name, no pinning.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            listen: vec![addr],
            tls: None,
            threads: 1,
            name: None,
            cpus: None,
            accept_proxy: false,
        }
    }
}

/// Why [`start`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TermError {
    /// `listen` was empty.
    #[error("no listen address given")]
    NoListen,
    /// `threads` was 0.
    #[error("threads must be at least 1")]
    NoThreads,
    /// A socket could not be created, bound or put in listening state (e.g. port in use).
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address that failed (with the resolved port when port 0 was asked).
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The server name cannot be sent as an HTTP header value.
    #[error("server name {0:?} is not a valid HTTP header value")]
    InvalidName(String),
    /// `cpus` was given but empty.
    #[error("the cpus list is empty")]
    NoCpus,
    /// `cpus` named a CPU this process may not run on.
    #[error("cannot pin to cpu {0}: not an available CPU")]
    Cpu(usize),
    /// The runtime or the thread of a worker could not be created.
    #[error("cannot start worker {index}")]
    Worker {
        /// Index of the worker thread.
        index: usize,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// Counter snapshot, summed over the worker threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TermStats {
    /// Accepted TCP connections.
    pub connections: u64,
    /// Requests whose head was received (including those answered 400).
    pub requests: u64,
    /// Response body bytes handed to the HTTP layer (heads and TLS overhead not counted).
    pub bytes_sent: u64,
    /// Full TLS handshakes completed (so load generators can check what they claim).
    pub tls_full: u64,
    /// Resumed TLS handshakes completed.
    pub tls_resumed: u64,
    /// TLS handshakes that failed or timed out.
    pub tls_failures: u64,
    /// Connections served over HTTP/2 (ALPN `h2` or the h2c preface).
    pub http2: u64,
}

/// One worker's counters, alone on its cache lines so threads never write a shared line.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Counters {
    pub(crate) connections: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) bytes_sent: AtomicU64,
    pub(crate) tls_full: AtomicU64,
    pub(crate) tls_resumed: AtomicU64,
    pub(crate) tls_failures: AtomicU64,
    pub(crate) http2: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

#[derive(Debug)]
struct Worker {
    thread: JoinHandle<()>,
    stop: watch::Sender<bool>,
}

/// A running term server; dropping it shuts it down like [`TermHandle::shutdown`].
#[derive(Debug)]
pub struct TermHandle {
    addrs: Vec<SocketAddr>,
    workers: Vec<Worker>,
    counters: Vec<Arc<Counters>>,
    done_rx: mpsc::Receiver<usize>,
}

impl TermHandle {
    /// The bound addresses, in `listen` order, with port 0 resolved.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Current counters, summed over the worker threads.
    pub fn stats(&self) -> TermStats {
        let mut s = TermStats::default();
        for c in &self.counters {
            s.connections += c.connections.load(Ordering::Relaxed);
            s.requests += c.requests.load(Ordering::Relaxed);
            s.bytes_sent += c.bytes_sent.load(Ordering::Relaxed);
            s.tls_full += c.tls_full.load(Ordering::Relaxed);
            s.tls_resumed += c.tls_resumed.load(Ordering::Relaxed);
            s.tls_failures += c.tls_failures.load(Ordering::Relaxed);
            s.http2 += c.http2.load(Ordering::Relaxed);
        }
        s
    }

    /// Stops accepting, lets in-flight connections finish for up to one second, closes the rest
    /// and joins the threads; returns after at most about three seconds in every case.
    pub fn shutdown(self) {
        drop(self);
    }

    fn stop(&mut self) {
        let workers = std::mem::take(&mut self.workers);
        for w in &workers {
            // An error means the worker already exited, which is what we want.
            let _ = w.stop.send(true);
        }
        let deadline = Instant::now() + JOIN_BOUND;
        let mut finished = vec![false; workers.len()];
        let mut left = workers.len();
        while left > 0 {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.done_rx.recv_timeout(wait) {
                Ok(i) => {
                    if let Some(f) = finished.get_mut(i) {
                        if !*f {
                            *f = true;
                            left -= 1;
                        }
                    }
                }
                // Timeout, or every sender gone (a worker panicked): stop waiting.
                Err(_) => break,
            }
        }
        for (w, done) in workers.into_iter().zip(finished) {
            if done || w.thread.is_finished() {
                let _ = w.thread.join();
            } else {
                tracing::warn!("term worker did not stop in time; detaching it");
            }
        }
    }
}

impl Drop for TermHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Binds every socket, starts the worker threads and returns once all are accepting.
pub fn start(opts: TermOptions) -> Result<TermHandle, TermError> {
    if opts.listen.is_empty() {
        return Err(TermError::NoListen);
    }
    if opts.threads == 0 {
        return Err(TermError::NoThreads);
    }
    let cpus = check_cpus(opts.cpus.as_deref())?;
    let bound = listener::bind_all(&opts.listen, opts.threads)?;
    let name = match &opts.name {
        Some(n) => n.clone(),
        None => format!("term-{}", bound.addrs[0].port()),
    };
    if http::HeaderValue::from_str(&name).is_err() {
        return Err(TermError::InvalidName(name));
    }
    let (done_tx, done_rx) = mpsc::channel();
    let mut handle = TermHandle {
        addrs: bound.addrs,
        workers: Vec::with_capacity(opts.threads),
        counters: Vec::with_capacity(opts.threads),
        done_rx,
    };
    for (index, listeners) in bound.per_thread.into_iter().enumerate() {
        let counters = Arc::new(Counters::default());
        let setup = worker::Setup {
            index,
            listeners,
            tls: opts.tls.clone(),
            accept_proxy: opts.accept_proxy,
            name: name.clone(),
            cpu: cpus.as_ref().and_then(|c| c.get(index % c.len()).copied()),
            counters: counters.clone(),
            done: done_tx.clone(),
        };
        // On error, dropping `handle` stops the workers already started.
        let (thread, stop) = worker::spawn(setup)?;
        handle.workers.push(Worker { thread, stop });
        handle.counters.push(counters);
    }
    Ok(handle)
}

fn check_cpus(cpus: Option<&[usize]>) -> Result<Option<Vec<core_affinity::CoreId>>, TermError> {
    let Some(cpus) = cpus else { return Ok(None) };
    if cpus.is_empty() {
        return Err(TermError::NoCpus);
    }
    let available = core_affinity::get_core_ids().unwrap_or_default();
    cpus.iter()
        .map(|&id| {
            available
                .iter()
                .find(|c| c.id == id)
                .copied()
                .ok_or(TermError::Cpu(id))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}
