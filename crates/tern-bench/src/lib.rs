//! `tern bench`: a closed-loop HTTP/1.1 and HTTPS load generator built to measure TLS
//! load balancers honestly.
//!
//! Why our own generator: the usual tools resume TLS sessions without saying so (oha), drop slow
//! responses from their percentiles (wrk), or run out of CPU before the server does (`ab` on
//! OpenSSL 3). This one
//! - never resumes, and proves it by counting full and resumed handshakes (a resumed one aborts
//!   the run with an error);
//! - spends little CPU per request: rustls + aws-lc-rs, one pinned current-thread runtime per
//!   thread, a minimal hand-rolled HTTP/1.1 client that skips response bodies;
//! - reports its own CPU time per request and warns when it, not the server, may be the
//!   bottleneck;
//! - records latencies in HdrHistograms (connect, handshake, whole request) and reports
//!   percentiles up to 99.9999 and the maximum, counting slow requests as timeouts rather than
//!   dropping them.
//!
//! Today it runs a closed loop (fixed concurrency). It is laid out to grow into open-loop
//! (fixed arrival rate, latency from the intended send time) and SLO search: arguments in
//! [`args`], the wire protocol in [`http1`], per-thread measurement in [`stats`], output in
//! [`report`], and the event loops in `worker`.

#![forbid(unsafe_code)]

pub mod args;
pub mod cpu;
pub mod http1;
pub mod report;
pub mod stats;
mod tls;
mod worker;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rustls::pki_types::ServerName;

pub use args::BenchArgs;
pub use report::Report;

use cpu::CpuTime;
use report::Settings;
use stats::Stats;
use worker::Plan;

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
    /// A thread could not be pinned to its CPU.
    #[error("cannot pin a client thread to CPU {0} (see --cpus)")]
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
}

/// Runs the benchmark described by `args`, prints the report and writes `--json` if asked.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    let report = execute(&args)?;
    print!("{report}");
    if let Some(path) = &args.json {
        let mut json = report.to_json();
        json.push('\n');
        std::fs::write(path, json).map_err(|cause| BenchError::Json {
            path: path.clone(),
            cause,
        })?;
    }
    Ok(())
}

/// Runs the benchmark and returns its report without printing anything.
pub fn execute(args: &BenchArgs) -> Result<Report, BenchError> {
    let target = &args.url;
    let addr = resolve(&target.host, target.port)?;
    let tls = if target.tls {
        let config = tls::client_config(args)?;
        let name = args.sni.clone().unwrap_or_else(|| target.host.clone());
        let server_name =
            ServerName::try_from(name.clone()).map_err(|_| BenchError::ServerName(name))?;
        Some((tokio_rustls::TlsConnector::from(config), server_name))
    } else {
        None
    };
    let threads = args.threads.min(args.connections);
    let start = Instant::now();
    let window_start = start + args.warmup;
    let plan = Arc::new(Plan {
        addr,
        tls,
        keep_alive_request: http1::request(target, false),
        close_request: http1::request(target, true),
        requests_per_conn: args.requests_per_conn,
        timeout: args.timeout,
        window_start,
        end: window_start + args.duration,
        stop: AtomicBool::new(false),
        resumed: AtomicBool::new(false),
        main: std::thread::current(),
    });
    let cpus = args.cpus.as_ref().map(|c| c.0.clone()).unwrap_or_default();
    let (stats, cpu) = run_threads(&plan, threads, args.connections, &cpus)?;
    if plan.resumed.load(Ordering::Relaxed) {
        return Err(BenchError::Resumed);
    }
    let verify = match (target.tls, &args.cacert) {
        (false, _) => "none",
        (true, Some(_)) => "verified against --cacert",
        (true, None) => "not verified (handshake signatures checked)",
    };
    let settings = Settings {
        target: target.to_string(),
        connections: args.connections,
        requests_per_conn: args.requests_per_conn,
        threads,
        cpus,
        duration: args.duration,
        warmup: args.warmup,
        timeout: args.timeout,
        verify,
    };
    Ok(Report {
        settings,
        stats,
        cpu,
    })
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, BenchError> {
    let failed = |reason: String| BenchError::Resolve {
        host: format!("{host}:{port}"),
        reason,
    };
    (host, port)
        .to_socket_addrs()
        .map_err(|e| failed(e.to_string()))?
        .next()
        .ok_or_else(|| failed("no addresses".to_owned()))
}

/// Starts the client threads, samples CPU time at the window's edges, and merges the stats.
fn run_threads(
    plan: &Arc<Plan>,
    threads: u32,
    connections: u32,
    cpus: &[usize],
) -> Result<(Stats, Option<CpuTime>), BenchError> {
    let mut handles = Vec::with_capacity(threads as usize);
    for i in 0..threads {
        let share = connections / threads + u32::from(i < connections % threads);
        let cpu = (!cpus.is_empty()).then(|| cpus[i as usize % cpus.len()]);
        let thread_plan = plan.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("tern-bench-{i}"))
            .spawn(move || worker::thread_main(thread_plan, share, cpu));
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(e) => {
                plan.stop.store(true, Ordering::Relaxed);
                for handle in handles {
                    let _ = handle.join(); // the run is failing anyway; its results are moot
                }
                return Err(BenchError::Thread(e));
            }
        }
    }
    wait_until(plan, plan.window_start);
    let before = CpuTime::now();
    wait_until(plan, plan.end);
    let after = CpuTime::now();
    let cpu = before.zip(after).map(|(b, a)| a.since(&b));
    let mut total = Stats::new(plan.window_start, plan.end);
    let mut first_error = None;
    for handle in handles {
        match handle.join() {
            Ok(Ok(stats)) => total.merge(&stats),
            Ok(Err(e)) => first_error = first_error.or(Some(e)),
            Err(_) => first_error = first_error.or(Some(BenchError::Panicked)),
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok((total, cpu)),
    }
}

/// Parks until `at`, or until a thread asks to stop the run early.
fn wait_until(plan: &Plan, at: Instant) {
    loop {
        let now = Instant::now();
        if now >= at || plan.stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::park_timeout(at - now);
    }
}
