//! `tern bench`: an HTTP/1.1, HTTP/2 and HTTPS load generator built to measure TLS load
//! balancers honestly.
//!
//! Why our own generator: the usual tools resume TLS sessions without saying so (oha), drop slow
//! responses from their percentiles (wrk), hide queueing behind a closed loop (coordinated
//! omission), or run out of CPU before the server does (`ab` on OpenSSL 3). This one
//! - resumes only when asked (`--resume`, for a chosen share of connections) and proves what
//!   happened by counting full and resumed handshakes as rustls reports them; with resumption
//!   off a resumed handshake aborts the run;
//! - runs a closed loop (`-c`, to find capacity) or an open loop (`--rate`, arrivals at fixed
//!   intended times, latency measured from them, so queueing shows), with an optional ramp in
//!   stairs before the warm-up and the measured window;
//! - records connect, handshake, time-to-first-byte and time-to-last-byte latencies in
//!   HdrHistograms (percentiles to 99.9999 and the maximum), counts slow requests as timeouts
//!   and error statuses by class, never as latency samples, and keeps per-second series;
//! - can run a low-rate reference probe straight to the backend (`--ref-url`), so the latency
//!   the balancer adds shows;
//! - spends little CPU per request (rustls + aws-lc-rs, one pinned current-thread runtime per
//!   thread, a minimal HTTP/1.1 client that skips bodies), samples its own CPU every second and
//!   marks a run invalid when it saturates its CPUs or when the per-second rates are not flat.
//!
//! Layout: options in [`args`]; the TLS client in `tls` (rustls) and `ossl` (OpenSSL,
//! `--tls-engine openssl`); the timeline and shared plan in `plan`;
//! a connection's steps in `conn`; HTTP/2 (`--h2`, streams per connection) in `http2`; the
//! closed loop in `closed`, the open loop in `arrivals`
//! (with the precise `timer`); threads in `worker`; supervision (CPU sampling, progress, stop) in
//! `engine`; measurement in [`stats`], [`series`] and [`latency`]; the verdict in [`validity`];
//! output in [`report`] (text) and `json` (schema in JSON.md).

#![forbid(unsafe_code)]

pub mod args;
pub mod cpu;
pub mod http1;
pub mod latency;
pub mod progress;
pub mod report;
pub mod series;
pub mod slo;
pub mod stats;
pub mod system;
pub mod validity;

mod arrivals;
mod closed;
mod conn;
mod engine;
mod http2;
mod json;
mod ossl;
mod plan;
mod setup;
mod timer;
mod tls;
mod worker;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use args::BenchArgs;
pub use engine::{Phase, Tick};
pub use json::SCHEMA as JSON_SCHEMA;
pub use report::Report;
pub use stats::Stats;

/// Whether this build has the OpenSSL client engine (`--tls-engine openssl`, feature
/// `openssl-engine`): static-RSA, DHE and CBC suites and TLS 1.0/1.1.
pub fn has_openssl_engine() -> bool {
    cfg!(feature = "openssl-engine")
}

/// Why a run could not be made or cannot be trusted.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The URL's host did not resolve.
    #[error("cannot resolve {host}: {reason}")]
    Resolve {
        /// Host and port that failed.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// The TLS client configuration could not be built.
    #[error("TLS setup: {0}")]
    Tls(String),
    /// The SNI name is not a valid DNS name or IP address.
    #[error("invalid server name {0:?}")]
    ServerName(String),
    /// The options do not make sense together.
    #[error("{0}")]
    Options(String),
    /// A thread could not be pinned to its CPU.
    #[error("cannot pin a client thread to CPU {0} (see --cpus, --ref-cpu)")]
    Pin(usize),
    /// A thread or its runtime could not be started.
    #[error("cannot start a client thread: {0}")]
    Thread(std::io::Error),
    /// A client thread panicked (a bug).
    #[error("a client thread panicked")]
    Panicked,
    /// A handshake was resumed although resumption is off: the run would not measure full
    /// handshakes.
    #[error(
        "a TLS handshake was resumed although session resumption is off; \
         the run was aborted because its figures would not be full handshakes"
    )]
    Resumed,
    /// The JSON report could not be written.
    #[error("cannot write {path}: {cause}")]
    Json {
        /// The `--json` path.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The run was interrupted; the partial report was printed (and written).
    #[error("interrupted: the report above covers only part of the window")]
    Interrupted,
}

/// Runs the benchmark described by `args` as `tern bench` does: live progress on stderr (unless
/// `--quiet`), Ctrl-C (or SIGTERM) ends the run early with a partial report, the report goes
/// to stdout and to `--json` if asked.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    if args.slo.find_max {
        return slo::run(&args);
    }
    let stop = Arc::new(AtomicBool::new(false));
    install_stop_signals(stop.clone());
    let mut progress = (!args.quiet).then(progress::Progress::stderr);
    let result = execute_with_progress(&args, &stop, &mut |tick| {
        if let Some(p) = &mut progress {
            p.tick(tick);
        }
    });
    if let Some(p) = &mut progress {
        p.finish();
    }
    let report = result?;
    print!("{report}");
    if let Some(path) = &args.json {
        let mut json = report.to_json();
        json.push('\n');
        std::fs::write(path, json).map_err(|cause| BenchError::Json {
            path: path.clone(),
            cause,
        })?;
    }
    if report.partial {
        return Err(BenchError::Interrupted.into());
    }
    Ok(())
}

/// Runs the benchmark and returns its report without printing anything.
pub fn execute(args: &BenchArgs) -> Result<Report, BenchError> {
    execute_with_progress(args, &AtomicBool::new(false), &mut |_| {})
}

/// Like [`execute`], but ends the run early once `stop` becomes true (checked every 50 ms) and
/// then returns the partial report (`partial`, and invalid).
pub fn execute_with_stop(args: &BenchArgs, stop: Arc<AtomicBool>) -> Result<Report, BenchError> {
    execute_with_progress(args, &stop, &mut |_| {})
}

/// Like [`execute_with_stop`], and calls `progress` once a second with the run's counters.
pub fn execute_with_progress(
    args: &BenchArgs,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Tick),
) -> Result<Report, BenchError> {
    let prepared = setup::prepare(args)?;
    let collected = engine::run(prepared.setup, stop, progress)?;
    Ok(setup::report(args, prepared.capacity, collected))
}

/// On SIGINT (Ctrl-C) or SIGTERM, sets `stop`; a second one exits at once.
fn install_stop_signals(stop: Arc<AtomicBool>) {
    let spawned = std::thread::Builder::new()
        .name("tern-bench-signals".to_owned())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if signal().await.is_err() {
                    return;
                }
                stop.store(true, Ordering::Relaxed);
                eprintln!(
                    "\ninterrupted: stopping; the partial report follows \
                     (interrupt again to quit at once)"
                );
                if signal().await.is_ok() {
                    std::process::exit(130);
                }
            });
        });
    if spawned.is_err() {
        eprintln!("warning: cannot watch for Ctrl-C; an interrupt will end without a report");
    }
}

#[cfg(unix)]
async fn signal() -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    tokio::select! {
        _ = int.recv() => Ok(()),
        _ = term.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
async fn signal() -> std::io::Result<()> {
    tokio::signal::ctrl_c().await
}
