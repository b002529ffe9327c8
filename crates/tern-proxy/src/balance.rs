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

use std::cell::RefCell;
use std::net::IpAddr;
use std::rc::Rc;

use tern_balance::{
    Algorithm, Balancer, HashKey, HashType, KeySource, Method, NoServer, PickContext, ServerId,
    ServerSpec,
};
use tern_config::{self as config, Backend};
use tern_h1::RequestHead;
use tokio::time::Instant;

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

impl Balancers {
    /// Builds one balancer per backend, seeded with `seed` (the worker index).
    pub(crate) fn new(backends: &[Backend], seed: u64) -> Result<Self, BalanceError> {
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
        Ok(Self {
            list: RefCell::new(list),
            needs,
            clocks,
            epoch: Instant::now(),
        })
    }

    /// Picks a server of `backend` for a request and counts it in flight until the guard drops.
    /// `head` and `buf` are the parsed request (for hashing algorithms), `client` its peer.
    pub(crate) fn pick(
        self: &Rc<Self>,
        backend: usize,
        head: &RequestHead,
        buf: &[u8],
        client: IpAddr,
    ) -> Result<InFlight, NoServer> {
        let need = self.needs.get(backend).ok_or(NoServer::Down)?;
        let ctx = need.context(head, buf, client, self.now());
        let mut list = self.list.borrow_mut();
        let balancer = list.get_mut(backend).ok_or(NoServer::Down)?;
        let server = balancer.select(&ctx)?;
        balancer.on_start(server);
        Ok(InFlight {
            balancers: Rc::clone(self),
            backend,
            server,
            started: Instant::now(),
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn finish(&self, backend: usize, server: ServerId) {
        if let Some(balancer) = self.list.borrow_mut().get_mut(backend) {
            balancer.on_finish(server);
        }
    }
}

/// A request in flight on a server, as the balancer sees it. Dropping it ends the request.
#[derive(Debug)]
pub(crate) struct InFlight {
    balancers: Rc<Balancers>,
    backend: usize,
    server: ServerId,
    started: Instant,
}

impl InFlight {
    /// The server picked.
    pub(crate) fn server(&self) -> ServerId {
        self.server
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

    /// The pick context with only the data this algorithm reads.
    fn context<'a>(
        &self,
        head: &RequestHead,
        buf: &'a [u8],
        client: IpAddr,
        now: u64,
    ) -> PickContext<'a> {
        let ctx = PickContext::new().with_now(now);
        match self {
            Need::Nothing => ctx,
            Need::Client => ctx.with_client(client),
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
fn method(balance: &config::Balance) -> Method {
    match balance {
        config::Balance::RoundRobin => Method::RoundRobin,
        config::Balance::StaticRoundRobin => Method::StaticRoundRobin,
        config::Balance::LeastConn => Method::LeastConn,
        config::Balance::First => Method::First,
        config::Balance::Hash { key, hash_type } => Method::Hash {
            key: match key {
                config::HashKey::Source => HashKey::Source,
                config::HashKey::Uri { whole } => HashKey::Uri { whole: *whole },
                config::HashKey::UrlParam(name) => HashKey::UrlParam(name.as_str().into()),
                config::HashKey::Header(name) => HashKey::Header(name.as_str().into()),
            },
            hash_type: match hash_type {
                config::HashType::MapBased => HashType::MapBased,
                config::HashType::Consistent { balance_factor } => HashType::Consistent {
                    balance_factor: *balance_factor,
                },
            },
        },
        config::Balance::Random { draws } => Method::Random { draws: *draws },
        config::Balance::Ewma { decay } => match Method::ewma() {
            Method::Ewma { initial_rtt, .. } => Method::Ewma {
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
    let spec = ServerSpec::new(server.weight).ring_id(name_hash(&server.name));
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
