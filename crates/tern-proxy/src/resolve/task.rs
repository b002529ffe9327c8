//! The resolution of one name, forever: ask, judge, publish, sleep.
//!
//! After a good answer the name is asked again `hold valid` later (at least `timeout
//! resolve`), as HAProxy re-resolves a name whose last valid answer is older than `hold valid`;
//! after a failure, `timeout resolve` later. A failure (NXDOMAIN, REFUSED, another error code,
//! no answer after every try) keeps the servers on their last addresses for the `hold` of its
//! kind, counted from the last good answer; past it, every server of the name leaves
//! balancing until a good answer brings them back.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tern_config::{Family, Resolvers};
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{info, warn};

use super::answer::{additional, address_types, addresses, services, Entry, Reply};
use super::counters::{bump, ResolverCounters};
use super::query::ask;
use super::slots::{assign, Change, Held};
use crate::exchange::servers::BackendState;

/// One server resolved through a name.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub backend: usize,
    pub server: usize,
    pub backend_name: String,
    pub server_name: String,
}

/// A name and the servers it feeds (grouped by section, name, kind, family and port).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub name: String,
    pub srv: bool,
    pub prefer: Family,
    /// The port of A/AAAA answers (SRV records carry theirs).
    pub port: u16,
    pub members: Vec<Member>,
}

/// Why a resolution failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    Nx,
    Timeout,
    Refused,
    Other,
}

impl Failure {
    fn of(reply: Option<Reply>) -> Self {
        match reply {
            None => Failure::Timeout,
            Some(Reply::Nx) => Failure::Nx,
            Some(Reply::Refused) => Failure::Refused,
            Some(Reply::Other | Reply::Answer(_)) => Failure::Other,
        }
    }

    fn hold(self, section: &Resolvers) -> Duration {
        match self {
            Failure::Nx => section.hold.nx,
            Failure::Timeout => section.hold.timeout,
            Failure::Refused => section.hold.refused,
            Failure::Other => section.hold.other,
        }
    }

    fn counter(self, counters: &ResolverCounters) -> &std::sync::atomic::AtomicU64 {
        match self {
            Failure::Nx => &counters.nx,
            Failure::Timeout => &counters.timeouts,
            Failure::Refused => &counters.refused,
            Failure::Other => &counters.other,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Failure::Nx => "NXDOMAIN",
            Failure::Timeout => "timeout",
            Failure::Refused => "refused",
            Failure::Other => "error",
        }
    }
}

/// What the task works with.
pub(crate) struct Run {
    pub section: Arc<Resolvers>,
    pub counters: Arc<ResolverCounters>,
    pub states: Arc<Vec<BackendState>>,
    pub target: Target,
    /// Each member's configured address (a server that starts resolved holds it).
    pub configured: Vec<SocketAddr>,
}

/// Resolves `run.target` until `stop` turns true.
pub(crate) async fn run(run: Run, mut stop: watch::Receiver<bool>) {
    let mut held: Vec<Held> = run
        .target
        .members
        .iter()
        .zip(&run.configured)
        .map(|(m, configured)| run.held_now(m, *configured))
        .collect();
    let mut last_valid = Instant::now();
    loop {
        let outcome = tokio::select! {
            biased;
            _ = stop.changed() => return,
            outcome = resolve(&run) => outcome,
        };
        let now = Instant::now();
        let delay = match outcome {
            Ok(entries) => {
                bump(&run.counters.valid);
                last_valid = now;
                let changes = assign(
                    &mut held,
                    &entries,
                    now.into_std(),
                    run.section.hold.obsolete,
                );
                for (i, change) in changes {
                    run.publish(i, change);
                }
                run.section.hold.valid.max(run.section.resolve_interval)
            }
            Err(failure) => {
                bump(failure.counter(&run.counters));
                if now.duration_since(last_valid) >= failure.hold(&run.section) {
                    for (i, h) in held.iter_mut().enumerate() {
                        if h.entry.take().is_some() {
                            run.out(i, failure.as_str());
                        }
                    }
                }
                run.section.resolve_interval
            }
        };
        tokio::select! {
            biased;
            _ = stop.changed() => return,
            () = tokio::time::sleep(delay) => {}
        }
    }
}

impl Run {
    /// What member `m` holds at start: its address unless it starts without one.
    fn held_now(&self, m: &Member, configured: SocketAddr) -> Held {
        let Some(server) = self.states.get(m.backend).and_then(|b| b.server(m.server)) else {
            return Held::default();
        };
        if server.is_unresolved() {
            return Held::default();
        }
        Held {
            entry: Some(Entry {
                address: server.address(configured),
                weight: None,
            }),
            seen: None,
        }
    }

    fn publish(&self, i: usize, change: Change) {
        match change {
            Change::Take(entry) => self.take(i, entry),
            Change::Out => self.out(i, "record gone"),
        }
    }

    fn take(&self, i: usize, entry: Entry) {
        let (Some(m), Some(state)) = (self.target.members.get(i), self.state_of(i)) else {
            return;
        };
        if let Some(w) = entry.weight {
            // SRV weights are 0 to 65535; tern's 1 to 256 (0 would drain the slot, which an
            // SRV weight of 0, "rarely", does not mean).
            let weight = u32::from(w).clamp(1, 256);
            let changed = state
                .server(m.server)
                .is_some_and(|s| s.configured_weight() != weight);
            if changed {
                state.set_configured_weight(m.server, weight);
            }
        }
        if state.set_resolved(m.server, Some(entry.address)) {
            bump(&self.counters.changes);
            info!(
                resolvers = %self.section.name, backend = %m.backend_name, server = %m.server_name,
                name = %self.target.name, address = %entry.address, "server address set by DNS"
            );
        }
    }

    fn out(&self, i: usize, why: &str) {
        let (Some(m), Some(state)) = (self.target.members.get(i), self.state_of(i)) else {
            return;
        };
        if state.set_resolved(m.server, None) {
            bump(&self.counters.changes);
            warn!(
                resolvers = %self.section.name, backend = %m.backend_name, server = %m.server_name,
                name = %self.target.name, reason = why, "server out of balancing: no address from DNS"
            );
        }
    }

    fn state_of(&self, i: usize) -> Option<&BackendState> {
        self.states.get(self.target.members.get(i)?.backend)
    }
}

/// One resolution of the target: its entries, or why there are none.
async fn resolve(run: &Run) -> Result<Vec<Entry>, Failure> {
    let t = &run.target;
    if !t.srv {
        return lookup(run, &t.name, t.prefer).await.map(|ips| {
            ips.into_iter()
                .map(|ip| Entry {
                    address: SocketAddr::new(ip, t.port),
                    weight: None,
                })
                .collect()
        });
    }
    let reply = ask(
        &run.section,
        &run.counters,
        &t.name,
        hickory_proto::rr::RecordType::SRV,
    )
    .await;
    let Some(Reply::Answer(message)) = reply else {
        return Err(Failure::of(reply));
    };
    let mut entries = Vec::new();
    for service in services(&message) {
        let ip = match additional(&message, &service.target, t.prefer) {
            Some(ip) => Some(ip),
            // A target the server gave no address for: asked on its own; one that does not
            // resolve is skipped, the others still fill slots.
            None => lookup(run, &service.target, t.prefer)
                .await
                .ok()
                .and_then(|ips| ips.first().copied()),
        };
        if let Some(ip) = ip {
            entries.push(Entry {
                address: SocketAddr::new(ip, service.port),
                weight: Some(service.weight),
            });
        }
    }
    Ok(entries)
}

/// The addresses of `name`, the preferred family asked first and the other only when the
/// first has none.
async fn lookup(run: &Run, name: &str, prefer: Family) -> Result<Vec<std::net::IpAddr>, Failure> {
    for rtype in address_types(prefer) {
        let reply = ask(&run.section, &run.counters, name, rtype).await;
        let Some(Reply::Answer(message)) = reply else {
            return Err(Failure::of(reply));
        };
        let found = addresses(&message);
        if !found.is_empty() {
            return Ok(found);
        }
    }
    Ok(Vec::new())
}
