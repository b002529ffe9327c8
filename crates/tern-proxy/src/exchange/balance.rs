//! The worker's balancers: one [`Balancer`] per backend, built from the configuration.
//!
//! Each worker owns its balancers (no lock, no shared cache line on the request path) and seeds
//! them with its index, so workers start their round-robin cycles on different servers and
//! random draws differ between workers while staying replayable. A pick counts the request as
//! in flight on its server until the returned [`InFlight`] guard drops, which is what
//! `leastconn`, `random` and `ewma` look at; `ewma` also learns the time to the response head.
//!
//! The request data a hashing algorithm needs (client address, path, query, one header) is read
//! from the parsed head only when the backend's algorithm asks for it ([`KeySource`]).

use std::cell::{Cell, RefCell};
use std::net::IpAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use tern_balance::{
    Algorithm, BalanceMethod, Balancer, HashKey, HashType, KeySource, NoServer, PickContext,
    ServerId, ServerSpec,
};
use tern_config::{self as config, Backend};
use tern_h1::RequestHead;
use tokio::time::Instant;

use crate::exchange::servers::{self, BackendState, Grant};
use crate::profiling::{Kind, Profiled};

/// Why a balancer could not be built from a validated configuration (a bug if it happens:
/// validation checks the same limits).
#[derive(Debug, thiserror::Error)]
#[error("backend `{backend}`: {cause}")]
pub struct BalanceError {
    backend: String,
    cause: tern_balance::BuildError,
}

/// All balancers of one worker.
#[derive(Debug)]
pub(crate) struct Balancers {
    list: RefCell<Vec<Balancer>>,
    /// What each backend's algorithm reads from a request, computed once.
    needs: Vec<Need>,
    /// Whether each backend's algorithm reads the clock and learns response times (`ewma`).
    clocks: Vec<bool>,
    /// The zero of the nanosecond clock `ewma` reads.
    epoch: Instant,
    /// Health, weights, slots and queues shared with the other workers.
    states: Arc<Vec<BackendState>>,
    /// The generation of each backend's shared state this worker's balancer reflects.
    seen: Vec<Cell<u64>>,
}

/// An owned copy of a [`KeySource`], so a pick does not hold the balancer borrowed while the
/// request is scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Need {
    Nothing,
    Client,
    Path,
    PathAndQuery,
    Query,
    Header(Box<[u8]>),
}

/// How a request may be placed, beyond what the algorithm decides.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Placement<'a> {
    /// The server persistence (cookie, stickiness) names; used if it is up.
    pub persist: Option<ServerId>,
    /// Servers not to use (they failed this request).
    pub avoid: &'a [ServerId],
}

/// Why a request got no server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("no server is usable")]
    Down,
    #[error("every usable server is full and the queue is full")]
    QueueFull,
    #[error("no server slot freed up within the queue timeout")]
    QueueTimeout,
    /// The persistent server the request waited for went down: place it again.
    #[error("the server waited for went down")]
    Moved,
}

impl Balancers {
    /// Builds one balancer per backend, seeded with `seed` (the worker index).
    pub(crate) fn new(
        backends: &[Backend],
        states: Arc<Vec<BackendState>>,
        seed: u64,
    ) -> Result<Self, BalanceError> {
        let mut list = Vec::with_capacity(backends.len());
        let mut needs = Vec::with_capacity(backends.len());
        let mut clocks = Vec::with_capacity(backends.len());
        for backend in backends {
            let specs: Vec<ServerSpec> = backend.servers.iter().map(server_spec).collect();
            let balancer =
                Balancer::new(method(&backend.balance), &specs, seed).map_err(|cause| {
                    BalanceError {
                        backend: backend.name.clone(),
                        cause,
                    }
                })?;
            needs.push(Need::of(balancer.key_source()));
            clocks.push(balancer.needs_clock());
            list.push(balancer);
        }
        // Never a generation: the first pick reads the shared state, which may already differ
        // from the file's weights (servers that start `disabled`, state carried by a reload).
        let seen = (0..backends.len()).map(|_| Cell::new(u64::MAX)).collect();
        Ok(Self {
            list: RefCell::new(list),
            needs,
            clocks,
            epoch: Instant::now(),
            states,
            seen,
        })
    }

    /// The shared state of `backend`.
    pub(crate) fn state(&self, backend: usize) -> Option<&BackendState> {
        self.states.get(backend)
    }

    /// Brings the worker's balancer of `backend` up to date with the shared health and weights.
    fn sync(&self, backend: usize) {
        let (Some(state), Some(seen)) = (self.states.get(backend), self.seen.get(backend)) else {
            return;
        };
        let generation = state.generation();
        if seen.get() == generation {
            return;
        }
        seen.set(generation);
        if let Some(balancer) = self.list.borrow_mut().get_mut(backend) {
            for (id, s) in state.servers.iter().enumerate() {
                balancer.set_usable(id, s.usable());
                balancer.set_weight(id, s.balance_weight());
            }
        }
    }

    /// Picks a server of `backend` for a request, taking a slot under its `maxconn`, and
    /// counts it in flight until the guard drops. `request` is the parsed head and its buffer
    /// (for algorithms hashing a part of it; `None` for a TCP connection, whose backend hashes
    /// at most the source), `client` its peer. Does not wait: `Err(NoServer::Full)` means the
    /// request may queue ([`Balancers::wait`]).
    pub(crate) fn pick(
        self: &Rc<Self>,
        backend: usize,
        request: Option<(&RequestHead, &[u8])>,
        client: IpAddr,
        place: Placement<'_>,
    ) -> Result<InFlight, NoServer> {
        self.sync(backend);
        let state = self.states.get(backend).ok_or(NoServer::Down)?;
        if let Some(p) = place.persist.filter(|p| !place.avoid.contains(p)) {
            match state.server(p) {
                Some(s) if s.usable() => {
                    return if s.try_take() {
                        Ok(self.start(backend, p, true))
                    } else {
                        Err(NoServer::Full)
                    };
                }
                _ => {}
            }
        }
        let need = self.needs.get(backend).ok_or(NoServer::Down)?;
        let ctx = need.context(request, client, self.now());
        let server = {
            let mut list = self.list.borrow_mut();
            let balancer = list.get_mut(backend).ok_or(NoServer::Down)?;
            balancer.select_with(&ctx, |s| {
                !place.avoid.contains(&s) && state.server(s).is_some_and(|s| s.try_take())
            })?
        };
        Ok(self.start(backend, server, false))
    }

    /// Waits in the backend's queue for a slot: of the persistent server `want`, or of any.
    pub(crate) async fn wait(
        self: &Rc<Self>,
        backend: usize,
        want: Option<ServerId>,
        timeout: Duration,
    ) -> Result<InFlight, Refusal> {
        let state = self.states.get(backend).ok_or(Refusal::Down)?;
        let deadline = servers::now().saturating_add(nanos(timeout));
        let (ticket, mut grant) = state
            .enqueue(want, deadline)
            .map_err(|()| Refusal::QueueFull)?;
        let queued = tokio::time::timeout(timeout, &mut grant);
        let granted = match Profiled::new(Kind::Queue, queued).await {
            Ok(Ok(g)) => g,
            Ok(Err(_)) => Grant::GiveUp,
            Err(_) if state.withdraw(ticket) => return Err(Refusal::QueueTimeout),
            // Granted just as the wait ended: the grant is in the channel.
            Err(_) => grant.try_recv().unwrap_or(Grant::GiveUp),
        };
        match granted {
            Grant::Server(server) => {
                self.sync(backend);
                Ok(self.start(backend, server, want == Some(server)))
            }
            Grant::Rebalance => Err(Refusal::Moved),
            Grant::GiveUp => Err(Refusal::Down),
        }
    }

    /// Counts a request in flight on `server`, whose slot it holds.
    fn start(self: &Rc<Self>, backend: usize, server: ServerId, persisted: bool) -> InFlight {
        if let Some(balancer) = self.list.borrow_mut().get_mut(backend) {
            balancer.on_start(server);
        }
        InFlight {
            balancers: Rc::clone(self),
            backend,
            server,
            persisted,
            started: Instant::now(),
        }
    }

    fn now(&self) -> u64 {
        nanos(self.epoch.elapsed())
    }

    fn finish(&self, backend: usize, server: ServerId) {
        if let Some(balancer) = self.list.borrow_mut().get_mut(backend) {
            balancer.on_finish(server);
        }
        if let Some(state) = self.states.get(backend) {
            state.release(server);
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A request in flight on a server, as the balancer sees it: it holds the server's slot.
/// Dropping it ends the request and gives the slot back (to a queued request first).
#[derive(Debug)]
pub(crate) struct InFlight {
    balancers: Rc<Balancers>,
    backend: usize,
    server: ServerId,
    persisted: bool,
    started: Instant,
}

impl InFlight {
    /// The server picked.
    pub(crate) fn server(&self) -> ServerId {
        self.server
    }

    /// Whether persistence (cookie, stickiness) chose the server rather than the algorithm.
    pub(crate) fn persisted(&self) -> bool {
        self.persisted
    }

    /// The server's response head arrived at `at`: feeds its response time to the algorithm
    /// (`ewma`; the others ignore it).
    pub(crate) fn responded(&self, at: Instant) {
        let b = &self.balancers;
        if b.clocks.get(self.backend).copied().unwrap_or(false) {
            let latency = at.saturating_duration_since(self.started);
            let now = b.now();
            if let Some(balancer) = b.list.borrow_mut().get_mut(self.backend) {
                balancer.on_response(self.server, latency, now);
            }
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.balancers.finish(self.backend, self.server);
    }
}

impl Need {
    fn of(source: KeySource<'_>) -> Self {
        match source {
            KeySource::None => Need::Nothing,
            KeySource::ClientAddr => Need::Client,
            KeySource::Path => Need::Path,
            KeySource::PathAndQuery => Need::PathAndQuery,
            KeySource::Query => Need::Query,
            KeySource::Header(name) => Need::Header(name.as_bytes().into()),
        }
    }

    /// The pick context with only the data this algorithm reads. Without a request (TCP
    /// mode), a request key is absent: the algorithm falls back as for a request without it
    /// (validation refuses such algorithms on TCP backends anyway).
    fn context<'a>(
        &self,
        request: Option<(&RequestHead, &'a [u8])>,
        client: IpAddr,
        now: u64,
    ) -> PickContext<'a> {
        let ctx = PickContext::new().with_now(now);
        if let Need::Client = self {
            return ctx.with_client(client);
        }
        let Some((head, buf)) = request else {
            return ctx;
        };
        match self {
            Need::Nothing | Need::Client => ctx,
            Need::Path => ctx.with_path(split_target(target(head, buf)).0),
            Need::PathAndQuery | Need::Query => {
                let (path, query) = split_target(target(head, buf));
                let ctx = ctx.with_path(path);
                match query {
                    Some(q) => ctx.with_query(q),
                    None => ctx,
                }
            }
            Need::Header(name) => match header(head, buf, name) {
                Some(value) => ctx.with_header(value),
                None => ctx,
            },
        }
    }
}

/// The request target in origin-form (path and query), `/` when empty.
fn target<'a>(head: &RequestHead, buf: &'a [u8]) -> &'a [u8] {
    match buf.get(head.path().range()) {
        Some(t) if !t.is_empty() => t,
        _ => b"/",
    }
}

/// Splits a target into path and query (without the `?`).
fn split_target(target: &[u8]) -> (&[u8], Option<&[u8]>) {
    match target.iter().position(|&b| b == b'?') {
        Some(at) => (&target[..at], Some(&target[at + 1..])),
        None => (target, None),
    }
}

/// The value of the first field named `name` (compared case-insensitively), if any.
fn header<'a>(head: &RequestHead, buf: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    head.fields()
        .iter()
        .find(|f| f.name(buf).eq_ignore_ascii_case(name))
        .map(|f| f.value(buf))
}

/// The balancing core's method for a configured algorithm.
fn method(balance: &config::Balance) -> BalanceMethod {
    match balance {
        config::Balance::RoundRobin => BalanceMethod::RoundRobin,
        config::Balance::StaticRoundRobin => BalanceMethod::StaticRoundRobin,
        config::Balance::LeastConn => BalanceMethod::LeastConn,
        config::Balance::First => BalanceMethod::First,
        config::Balance::Hash { key, hash_type } => BalanceMethod::Hash {
            key: match key {
                config::BalanceKey::Source => HashKey::Source,
                config::BalanceKey::Uri { whole } => HashKey::Uri { whole: *whole },
                config::BalanceKey::UrlParam(name) => HashKey::UrlParam(name.as_str().into()),
                config::BalanceKey::Header(name) => HashKey::Header(name.as_str().into()),
            },
            hash_type: match hash_type {
                config::BalanceHashType::MapBased => HashType::MapBased,
                config::BalanceHashType::Consistent { balance_factor } => HashType::Consistent {
                    balance_factor: *balance_factor,
                },
            },
        },
        config::Balance::Random { draws } => BalanceMethod::Random { draws: *draws },
        config::Balance::Ewma { decay } => match BalanceMethod::ewma() {
            BalanceMethod::Ewma { initial_rtt, .. } => BalanceMethod::Ewma {
                decay: *decay,
                initial_rtt,
            },
            other => other,
        },
    }
}

/// A server as the balancing core sees it; its ring position follows its name, so editing the
/// server list moves only the edited servers' keys on a consistent-hash ring.
fn server_spec(server: &config::Server) -> ServerSpec {
    let spec = ServerSpec::new(server.weight)
        .ring_id(name_hash(&server.name))
        .maxconn(server.maxconn.unwrap_or(0));
    if server.backup {
        spec.backup()
    } else {
        spec
    }
}

/// FNV-1a of a server name: stable across versions and runs (unlike `DefaultHasher`).
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests;
