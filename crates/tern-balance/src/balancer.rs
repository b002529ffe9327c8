//! The balancer of one backend: the configured algorithm over the active servers, the same
//! algorithm over the backup servers, and the in-flight count of every server.
//!
//! Backups are a separate tier rather than a flag each algorithm checks: an algorithm instance
//! sees only the servers of its tier, so none of them needs to know about backups, and the backup
//! tier is consulted only when the active tier has no usable server (every active one down or
//! drained), as in HAProxy. A full active tier (`first` with every server at its `maxconn`) is
//! reported as [`NoServer::Full`], not spilled to the backups: full is a reason to queue, not
//! a failure.
//!
//! Server ids are the backend's (configuration order) on the outside, and each tier's own
//! indexes inside; the mapping is two small vectors, so every call stays O(1) on top of the
//! algorithm's own cost.

use std::time::Duration;

use crate::context::{KeySource, Nanos};
use crate::ewma::{Ewma, DEFAULT_DECAY, DEFAULT_INITIAL_RTT};
use crate::first::First;
use crate::hash::{Hash, HashKey, HashType};
use crate::leastconn::LeastConn;
use crate::random::{Random, DEFAULT_DRAWS};
use crate::rng::mix64;
use crate::roundrobin::RoundRobin;
use crate::slots::{Change, Slots};
use crate::static_rr::StaticRoundRobin;
use crate::{Algorithm, PickContext, ServerId};

/// The highest server weight (HAProxy's limit too); [`Balancer::set_weight`] clamps to it.
pub const MAX_WEIGHT: u32 = 256;
/// The most draws `random(N)` accepts.
pub const MAX_DRAWS: u32 = 64;

/// A balancing algorithm and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BalanceMethod {
    /// Smooth weighted round-robin, weights changeable at runtime (`roundrobin`).
    RoundRobin,
    /// Table-driven weighted round-robin, O(1) picks (`static-rr`).
    StaticRoundRobin,
    /// Fewest in flight per unit of weight (`leastconn`).
    LeastConn,
    /// First server with a free slot, in configuration order (`first`).
    First,
    /// A hash of a request key (`source`, `uri`, `hdr(NAME)`, `url_param(NAME)`).
    Hash { key: HashKey, hash_type: HashType },
    /// Least loaded of `draws` weighted random servers (`random(N)`).
    Random { draws: u32 },
    /// Peak-EWMA response time × load, best of two (`ewma`).
    Ewma {
        decay: Duration,
        initial_rtt: Duration,
    },
}

impl BalanceMethod {
    /// `random` with the default two draws.
    pub fn random() -> Self {
        BalanceMethod::Random {
            draws: DEFAULT_DRAWS,
        }
    }

    /// `ewma` with the default decay and initial response time.
    pub fn ewma() -> Self {
        BalanceMethod::Ewma {
            decay: DEFAULT_DECAY,
            initial_rtt: DEFAULT_INITIAL_RTT,
        }
    }

    /// Checks the parameters.
    fn validate(&self) -> Result<(), BuildError> {
        match self {
            BalanceMethod::Hash { key, hash_type } => {
                if let HashKey::UrlParam(name) | HashKey::Header(name) = key {
                    if name.is_empty() {
                        return Err(BuildError::EmptyName);
                    }
                }
                if let HashType::Consistent { balance_factor } = hash_type {
                    if (1..=100).contains(balance_factor) {
                        return Err(BuildError::BalanceFactor(*balance_factor));
                    }
                }
                Ok(())
            }
            BalanceMethod::Random { draws } if !(1..=MAX_DRAWS).contains(draws) => {
                Err(BuildError::Draws(*draws))
            }
            BalanceMethod::Ewma { decay, .. } if decay.is_zero() => Err(BuildError::ZeroDecay),
            _ => Ok(()),
        }
    }
}

/// What the balancer needs to know about one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerSpec {
    /// Relative share, 0 (drained) to [`MAX_WEIGHT`].
    pub weight: u32,
    /// Used only when no active server is usable.
    pub backup: bool,
    /// Most streams at once for `first` (0 = no limit).
    pub maxconn: u32,
    /// Stable identity on a consistent-hash ring (e.g. a hash of the server's name), so that
    /// editing the server list moves only the edited servers' keys; `None` uses its index.
    pub ring_id: Option<u64>,
}

impl ServerSpec {
    /// An active server of this weight, no `maxconn`, placed on rings by its index.
    pub fn new(weight: u32) -> Self {
        Self {
            weight,
            backup: false,
            maxconn: 0,
            ring_id: None,
        }
    }

    /// The same server as a backup.
    pub fn backup(mut self) -> Self {
        self.backup = true;
        self
    }

    /// The same server with a `maxconn`.
    pub fn maxconn(mut self, maxconn: u32) -> Self {
        self.maxconn = maxconn;
        self
    }

    /// The same server with a stable ring id.
    pub fn ring_id(mut self, id: u64) -> Self {
        self.ring_id = Some(id);
        self
    }
}

/// A balancer that cannot be built from its configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("server {server} has weight {weight}, above the maximum of {MAX_WEIGHT}")]
    Weight { server: usize, weight: u32 },
    #[error("hash balance factor {0} must be 0 (no bound) or above 100 (percent)")]
    BalanceFactor(u32),
    #[error("random draws must be between 1 and {MAX_DRAWS}, not {0}")]
    Draws(u32),
    #[error("ewma decay must be above zero")]
    ZeroDecay,
    #[error("the header or query parameter name to hash is empty")]
    EmptyName,
    #[error("too many servers: {0}")]
    TooManyServers(usize),
}

/// Why no server was picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoServer {
    /// No active or backup server is usable (all down or drained): answer 503.
    #[error("no server is usable")]
    Down,
    /// Usable servers exist but all are at their `maxconn`: queue, or answer 503.
    #[error("every usable server is full")]
    Full,
}

/// One algorithm instance per tier, dispatched without a virtual call.
#[derive(Debug, Clone)]
enum Engine {
    RoundRobin(RoundRobin),
    StaticRoundRobin(StaticRoundRobin),
    LeastConn(LeastConn),
    First(First),
    Hash(Hash),
    Random(Random),
    Ewma(Ewma),
}

macro_rules! dispatch {
    ($engine:expr, $a:ident => $call:expr) => {
        match $engine {
            Engine::RoundRobin($a) => $call,
            Engine::StaticRoundRobin($a) => $call,
            Engine::LeastConn($a) => $call,
            Engine::First($a) => $call,
            Engine::Hash($a) => $call,
            Engine::Random($a) => $call,
            Engine::Ewma($a) => $call,
        }
    };
}

impl Engine {
    fn new(method: &BalanceMethod, servers: &[&ServerSpec], seed: u64) -> Self {
        let weights: Vec<u32> = servers.iter().map(|s| s.weight).collect();
        match method {
            BalanceMethod::RoundRobin => {
                Engine::RoundRobin(RoundRobin::with_offset(&weights, seed as usize))
            }
            BalanceMethod::StaticRoundRobin => {
                Engine::StaticRoundRobin(StaticRoundRobin::new(&weights, seed as usize))
            }
            BalanceMethod::LeastConn => Engine::LeastConn(LeastConn::new(&weights)),
            BalanceMethod::First => {
                let maxconn: Vec<u32> = servers.iter().map(|s| s.maxconn).collect();
                Engine::First(First::new(&weights, &maxconn))
            }
            BalanceMethod::Hash { key, hash_type } => {
                let ids: Vec<u64> = servers
                    .iter()
                    .enumerate()
                    .map(|(i, s)| s.ring_id.unwrap_or(i as u64))
                    .collect();
                Engine::Hash(Hash::new(key.clone(), *hash_type, &weights, &ids))
            }
            BalanceMethod::Random { draws } => Engine::Random(Random::new(&weights, *draws, seed)),
            BalanceMethod::Ewma { decay, initial_rtt } => {
                Engine::Ewma(Ewma::new(&weights, *decay, *initial_rtt, seed))
            }
        }
    }
}

/// The servers of one tier.
#[derive(Debug, Clone)]
struct Tier {
    engine: Engine,
    /// Tier index → backend server id.
    ids: Vec<ServerId>,
    /// Weights and health, to know whether any server of the tier is usable.
    slots: Slots,
    /// Servers with a non-zero effective weight.
    live: usize,
}

impl Tier {
    fn new(method: &BalanceMethod, servers: &[(ServerId, &ServerSpec)], seed: u64) -> Self {
        let specs: Vec<&ServerSpec> = servers.iter().map(|(_, s)| *s).collect();
        let weights: Vec<u32> = specs.iter().map(|s| s.weight).collect();
        Self {
            engine: Engine::new(method, &specs, seed),
            ids: servers.iter().map(|(id, _)| *id).collect(),
            live: weights.iter().filter(|&&w| w > 0).count(),
            slots: Slots::new(&weights),
        }
    }

    fn account(&mut self, change: Option<Change>) {
        if let Some(c) = change {
            match (c.before > 0, c.after > 0) {
                (false, true) => self.live += 1,
                (true, false) => self.live -= 1,
                _ => {}
            }
        }
    }
}

const ACTIVE: usize = 0;
const BACKUP: usize = 1;

/// The balancing state of one backend in one worker.
#[derive(Debug, Clone)]
pub struct Balancer {
    method: BalanceMethod,
    tiers: [Tier; 2],
    /// Backend server id → (tier, index in tier).
    place: Vec<(usize, usize)>,
    inflight: Vec<u32>,
}

impl Balancer {
    /// Builds the balancer. `seed` fixes every random choice and offsets the round-robin cycle:
    /// give each worker its own (its index, say), and replay a run by reusing it.
    pub fn new(
        method: BalanceMethod,
        servers: &[ServerSpec],
        seed: u64,
    ) -> Result<Self, BuildError> {
        method.validate()?;
        if u32::try_from(servers.len()).is_err() {
            return Err(BuildError::TooManyServers(servers.len()));
        }
        if let Some((server, s)) = servers
            .iter()
            .enumerate()
            .find(|(_, s)| s.weight > MAX_WEIGHT)
        {
            return Err(BuildError::Weight {
                server,
                weight: s.weight,
            });
        }
        let mut groups: [Vec<(ServerId, &ServerSpec)>; 2] = [Vec::new(), Vec::new()];
        let mut place = Vec::with_capacity(servers.len());
        for (id, spec) in servers.iter().enumerate() {
            let tier = if spec.backup { BACKUP } else { ACTIVE };
            place.push((tier, groups[tier].len()));
            groups[tier].push((id, spec));
        }
        let tiers = [
            Tier::new(&method, &groups[ACTIVE], seed),
            Tier::new(&method, &groups[BACKUP], mix64(seed ^ 0xBAC0_0B0B)),
        ];
        Ok(Self {
            method,
            tiers,
            place,
            inflight: vec![0; servers.len()],
        })
    }

    /// The algorithm and its parameters.
    pub fn method(&self) -> &BalanceMethod {
        &self.method
    }

    /// The request data [`PickContext`] must carry; everything else may be left empty.
    pub fn key_source(&self) -> KeySource<'_> {
        match &self.method {
            BalanceMethod::Hash { key, .. } => key.source(),
            _ => KeySource::None,
        }
    }

    /// Whether picks read [`PickContext::now`] (and `on_response` matters).
    pub fn needs_clock(&self) -> bool {
        matches!(self.method, BalanceMethod::Ewma { .. })
    }

    /// Streams in flight on a server (0 for an unknown id).
    pub fn inflight(&self, server: ServerId) -> u32 {
        self.inflight.get(server).copied().unwrap_or(0)
    }

    /// Picks a server for the next stream: from the active tier, or from the backups when no
    /// active server is usable. Does not count the stream: call [`Algorithm::on_start`].
    pub fn select(&mut self, ctx: &PickContext<'_>) -> Result<ServerId, NoServer> {
        for tier in &mut self.tiers {
            if tier.live == 0 {
                continue;
            }
            let local = dispatch!(&mut tier.engine, a => a.pick(ctx));
            return match local.and_then(|i| tier.ids.get(i)) {
                Some(&id) => Ok(id),
                None => Err(NoServer::Full),
            };
        }
        Err(NoServer::Down)
    }

    /// The tier and tier index of a backend server id.
    fn locate(&mut self, server: ServerId) -> Option<(&mut Tier, usize)> {
        let &(tier, local) = self.place.get(server)?;
        Some((&mut self.tiers[tier], local))
    }
}

impl Algorithm for Balancer {
    fn pick(&mut self, ctx: &PickContext<'_>) -> Option<ServerId> {
        self.select(ctx).ok()
    }

    /// Changes a server's weight, clamped to [`MAX_WEIGHT`]; 0 drains it.
    fn set_weight(&mut self, server: ServerId, weight: u32) {
        let weight = weight.min(MAX_WEIGHT);
        if let Some((tier, local)) = self.locate(server) {
            let change = tier.slots.set_weight(local, weight);
            tier.account(change);
            dispatch!(&mut tier.engine, a => a.set_weight(local, weight));
        }
    }

    fn set_usable(&mut self, server: ServerId, usable: bool) {
        if let Some((tier, local)) = self.locate(server) {
            let change = tier.slots.set_usable(local, usable);
            tier.account(change);
            dispatch!(&mut tier.engine, a => a.set_usable(local, usable));
        }
    }

    fn on_start(&mut self, server: ServerId) {
        if let Some(n) = self.inflight.get_mut(server) {
            *n = n.saturating_add(1);
        }
        if let Some((tier, local)) = self.locate(server) {
            dispatch!(&mut tier.engine, a => a.on_start(local));
        }
    }

    fn on_finish(&mut self, server: ServerId) {
        if let Some(n) = self.inflight.get_mut(server) {
            *n = n.saturating_sub(1);
        }
        if let Some((tier, local)) = self.locate(server) {
            dispatch!(&mut tier.engine, a => a.on_finish(local));
        }
    }

    fn on_response(&mut self, server: ServerId, latency: Duration, now: Nanos) {
        if let Some((tier, local)) = self.locate(server) {
            dispatch!(&mut tier.engine, a => a.on_response(local, latency, now));
        }
    }
}

mod select_with;
#[cfg(test)]
mod tests;
