//! The health checker: one thread that checks every checked server on its schedule and
//! publishes what it finds to the workers.
//!
//! Checks are light (a connect, a handshake, one small request), so one thread with its own
//! event loop runs all of them, away from the workers' loops: a slow check never delays a
//! request. Each checked server gets one task, which owns the server's [`Health`] state machine
//! (tern-balance) and:
//! - runs a [`probe`] when the state machine says (`interval`, `fast_interval` while in
//!   transition, `down_interval` while down), the first one offset by [`spread`] so that the
//!   checks of many servers do not fire together;
//! - acts on the passive check: the data path counts consecutive errors in the server's shared
//!   state and wakes the task when `error_limit` is reached, and the task applies `on_error`;
//! - ramps the weight of a server coming back up over `slowstart`;
//! - pauses while the server is in maintenance (`disabled`, `disable server`), as HAProxy
//!   does, and checks at once when it leaves it;
//! - publishes health and weight changes into the shared [`BackendState`], which workers pick
//!   up on their next request, and logs and counts every transition with its reason.

use std::sync::Arc;
use std::time::Duration;

use tern_balance::{slow_start_step, slow_start_weight, spread, Health, HealthSettings, InitState};
use tern_config::{Check, Config, OnError as ConfigOnError};
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{info, warn};

use super::probe::probe;
use crate::exchange::proxy_header::Proxied;
use crate::exchange::servers::{BackendState, ServerState};
use crate::profiling::{Kind, Profiled};
use crate::stats::{bump, AdminState, ServerCounters, WorkerStats};

/// Starts the checker thread if any server is checked; it runs until `shutdown` turns true.
/// `servers_tls` holds the TLS configuration of servers with `tls`: their TLS checks use it, so
/// they verify as the data path does and resume sessions.
pub(crate) fn spawn(
    config: &Config,
    servers_tls: &ServersTls,
    states: &Arc<Vec<BackendState>>,
    stats: &Arc<WorkerStats>,
    shutdown: watch::Receiver<bool>,
) -> std::io::Result<Option<std::thread::JoinHandle<()>>> {
    let jobs = jobs(config, servers_tls, states, stats);
    let stats = Arc::clone(stats);
    if jobs.is_empty() {
        return Ok(None);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let thread = std::thread::Builder::new()
        .name("tern-health".to_owned())
        .spawn(move || {
            crate::profiling::attach(&stats, crate::profiling::Table::Worker);
            runtime.block_on(async move {
                let tls = check_tls();
                let count = jobs.len();
                let mut tasks = tokio::task::JoinSet::new();
                for (i, job) in jobs.into_iter().enumerate() {
                    let first = spread(i, count, job.check.interval);
                    let tls = job.tls.clone().unwrap_or_else(|| Arc::clone(&tls));
                    let checks = run(job, first, tls, shutdown.clone());
                    tasks.spawn(Profiled::new(Kind::HealthCheck, checks));
                }
                while tasks.join_next().await.is_some() {}
            });
        })?;
    Ok(Some(thread))
}

/// One checked server.
struct Job {
    states: Arc<Vec<BackendState>>,
    /// The checker's own block of counters.
    stats: Arc<WorkerStats>,
    backend: usize,
    server: usize,
    backend_name: String,
    server_name: String,
    check: Check,
    on_error: Option<ConfigOnError>,
    slowstart: Option<Duration>,
    /// The server's own TLS configuration, when it has `tls`.
    tls: Option<Arc<rustls::ClientConfig>>,
    /// The server's configured address (its check follows a runtime address change).
    server_address: std::net::SocketAddr,
    /// The PROXY header of the server's `proxy_protocol`, when its checks go to its traffic
    /// address (HAProxy sends `send-proxy` on checks unless they have a `port` or `addr` of
    /// their own).
    proxy: Option<Proxied<'static>>,
}

impl Job {
    /// The check to run now: one that targets the server's own address follows an address set
    /// at runtime (`set server addr`); a check with its own address keeps it.
    fn check_now(&self, server: &ServerState) -> std::borrow::Cow<'_, Check> {
        let now = server.address(self.server_address);
        if now == self.server_address || self.check.address.ip() != self.server_address.ip() {
            return std::borrow::Cow::Borrowed(&self.check);
        }
        let mut check = self.check.clone();
        let port = if self.check.address.port() == self.server_address.port() {
            now.port()
        } else {
            self.check.address.port()
        };
        check.address = std::net::SocketAddr::new(now.ip(), port);
        std::borrow::Cow::Owned(check)
    }
}

/// The TLS configurations of servers, `[backend][server]` (`None`: plain).
pub(crate) type ServersTls = [Vec<Option<Arc<rustls::ClientConfig>>>];

/// Every checked server of the configuration.
fn jobs(
    config: &Config,
    servers_tls: &ServersTls,
    states: &Arc<Vec<BackendState>>,
    stats: &Arc<WorkerStats>,
) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (b, be) in config.backends.iter().enumerate() {
        for (i, server) in be.servers.iter().enumerate() {
            if server.weight == 0 {
                info!(backend = %be.name, server = %server.name, "server is drained (weight 0)");
            }
            let Some(check) = server.check.clone() else {
                continue;
            };
            let proxy = Proxied::local(server).filter(|_| check.address == server.address);
            jobs.push(Job {
                states: Arc::clone(states),
                stats: Arc::clone(stats),
                backend: b,
                server: i,
                backend_name: be.name.clone(),
                server_name: server.name.clone(),
                check,
                on_error: be.observe.map(|o| o.on_error),
                slowstart: be.slowstart,
                tls: servers_tls
                    .get(b)
                    .and_then(|s| s.get(i))
                    .cloned()
                    .flatten()
                    .map(http1_only),
                server_address: server.address,
                proxy,
            });
        }
    }
    jobs
}

/// `config` without `h2` in its ALPN offer: HTTP/1.1 checks must not let a server that
/// negotiates pick HTTP/2. Checks with `proto = "h2"` offer `h2` alone instead (`probe.rs`).
/// The session cache stays shared.
fn http1_only(config: Arc<rustls::ClientConfig>) -> Arc<rustls::ClientConfig> {
    if !config.alpn_protocols.iter().any(|p| p == b"h2") {
        return config;
    }
    let mut own = (*config).clone();
    own.alpn_protocols.retain(|p| p != b"h2");
    if own.alpn_protocols.is_empty() {
        own.alpn_protocols.push(b"http/1.1".to_vec());
    }
    Arc::new(own)
}

/// The client configuration of TLS checks of servers without `tls` of their own: no certificate
/// verification (a check tests that the server answers, not who it is), no session resumption
/// (each check is a full handshake). Servers with `tls` are checked with their own
/// configuration (verification as configured, sessions resumed).
fn check_tls() -> Arc<rustls::ClientConfig> {
    tern_tls::client_config(&tern_tls::ClientOptions {
        resumption: false,
        ..tern_tls::ClientOptions::default()
    })
}

/// Checks one server until shutdown.
async fn run(
    job: Job,
    first: Duration,
    tls: Arc<rustls::ClientConfig>,
    mut stop: watch::Receiver<bool>,
) {
    let Some(state) = job.states.get(job.backend) else {
        return;
    };
    let Some(server) = state.server(job.server) else {
        return;
    };
    // A server found down by the previous generation (a reload) needs `rise` checks to come
    // back; one found up is fully up.
    let init = if server.is_up() {
        InitState::FullyUp
    } else {
        InitState::FullyDown
    };
    let settings = HealthSettings {
        rise: job.check.rise,
        fall: job.check.fall,
        interval: job.check.interval,
        fast_interval: job.check.fast_interval,
        down_interval: job.check.down_interval,
    };
    let mut health = Health::with_state(settings, init);
    let mut next_check = Instant::now() + first;
    // While slow start ramps the weight: when the server came up.
    let mut ramp: Option<Instant> = None;
    loop {
        let wake = match (ramp, job.slowstart) {
            (Some(since), Some(window)) => next_check.min(ramp_tick(since, window)),
            _ => next_check,
        };
        tokio::select! {
            biased;
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    return;
                }
                continue;
            }
            () = server.resumed.notified() => {
                // Out of maintenance: check now rather than at the end of the interval.
                next_check = Instant::now();
                continue;
            }
            () = server.passive.notified() => {
                bump(&job.counters().passive_trips);
                if let Some(action) = job.on_error {
                    let transition = health.on_passive(on_error(action));
                    if transition.is_some() {
                        let detail = "passive check: error limit reached on live traffic";
                        ramp = publish(&job, state, health.is_up(), detail, &health);
                    }
                    next_check = next_check.min(Instant::now() + health.next_delay());
                }
                continue;
            }
            () = tokio::time::sleep_until(wake) => {}
        }
        if let (Some(since), Some(window)) = (ramp, job.slowstart) {
            let weight = slow_start_weight(server.configured_weight(), since.elapsed(), window);
            state.set_weight(job.server, weight);
            if weight >= server.configured_weight() {
                ramp = None;
            }
        }
        if Instant::now() < next_check {
            continue;
        }
        if server.admin() == AdminState::Maint || server.is_unresolved() {
            // Paused: `resumed` wakes the task when the server leaves maintenance or DNS
            // gives it an address.
            next_check = Instant::now() + health.next_delay();
            continue;
        }
        let check = job.check_now(server);
        let outcome = probe(&check, &tls, job.proxy).await;
        bump(if outcome.passed {
            &job.counters().checks_passed
        } else {
            &job.counters().checks_failed
        });
        server.set_last_check(&outcome.detail);
        if health.on_check(outcome.passed).is_some() {
            ramp = publish(&job, state, health.is_up(), &outcome.detail, &health);
        }
        next_check = Instant::now() + health.next_delay();
    }
}

/// When the next slow-start step is due.
fn ramp_tick(since: Instant, window: Duration) -> Instant {
    let step = slow_start_step(window);
    let elapsed = since.elapsed();
    let steps = elapsed.as_nanos() / step.as_nanos().max(1) + 1;
    since + step * u32::try_from(steps).unwrap_or(u32::MAX)
}

impl Job {
    /// The checker's counters of this server.
    fn counters(&self) -> &ServerCounters {
        // Invariant: the counters and the jobs are built from the same configuration.
        &self.stats.servers[self.backend][self.server]
    }
}

/// Applies a transition: publishes health (and the first slow-start weight), logs and counts
/// it. Returns when slow start began, if it did.
fn publish(
    job: &Job,
    state: &BackendState,
    up: bool,
    detail: &str,
    health: &Health,
) -> Option<Instant> {
    let server = state.server(job.server)?;
    let (counter, span) = health.counter();
    let mut ramp = None;
    if up {
        match job.slowstart {
            Some(window) => {
                state.set_weight(
                    job.server,
                    slow_start_weight(server.configured_weight(), Duration::ZERO, window),
                );
                ramp = Some(Instant::now());
            }
            None => {
                state.set_weight(job.server, server.configured_weight());
            }
        }
    }
    state.set_up(job.server, up);
    let left = state.servers.iter().filter(|s| s.is_up()).count();
    if up {
        bump(&job.counters().went_up);
        info!(
            backend = %job.backend_name, server = %job.server_name, reason = detail,
            check = %format!("{counter}/{span}"), up_servers = left,
            "server is UP"
        );
    } else {
        bump(&job.counters().went_down);
        warn!(
            backend = %job.backend_name, server = %job.server_name, reason = detail,
            check = %format!("{counter}/{span}"), up_servers = left,
            "server is DOWN"
        );
    }
    ramp
}

/// The core's passive action for the configured one.
fn on_error(action: ConfigOnError) -> tern_balance::OnError {
    match action {
        ConfigOnError::FastInterval => tern_balance::OnError::FastInterval,
        ConfigOnError::FailCheck => tern_balance::OnError::FailCheck,
        ConfigOnError::SuddenDeath => tern_balance::OnError::SuddenDeath,
        ConfigOnError::MarkDown => tern_balance::OnError::MarkDown,
    }
}
