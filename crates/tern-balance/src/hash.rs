//! Hash-based balancing: `source`, `uri`, `hdr(NAME)` and `url_param(NAME)`, each with
//! `hash_type = "map-based"` or `"consistent"`.
//!
//! A key taken from the request (the client address, the path, a header value, a query
//! parameter) is hashed (8 bytes at a time, then a 64-bit finalizer; fixed, so every worker and
//! every restart agree), and the hash chooses the server: the same key keeps going to the same
//! server while the set of servers does not change, so caches stay warm and sessions stay put. A
//! request without the key (no such header or parameter) goes round-robin, as in HAProxy.
//!
//! - **map-based**: a table of `sum(weights) / gcd` entries in which each server appears `weight`
//!   times; the hash indexes it (multiply-shift, no division). O(1) per pick and an exact weight
//!   split, but any change of a server's state rebuilds the table and moves most keys.
//! - **consistent**: a ring ([`ring`]) with `weight × k` virtual points per server; a key goes to
//!   the first point at or after its hash, found through a bucket index in O(1) expected.
//!   Removing one of N servers moves only the keys it held (about 1/N of them); the others stay.
//!   With a `balance_factor` (HAProxy's `hash-balance-factor`, a percentage above 100), a server
//!   whose in-flight count would exceed `factor`% of its weighted share of the total is skipped
//!   for the next point on the ring, which bounds every server's load at the cost of moving the
//!   keys of hot servers while they are hot.
//!
//! Both rebuild their table or ring when a server's effective weight changes: O(sum of weights)
//! for the map, O(points × log points) for the ring (a few milliseconds at 1,000 servers). That
//! suits health changes; weights ramped every second on large backends would want an incremental
//! ring.

pub mod ring;

use crate::context::KeySource;
use crate::exclude::{Exclude, Excluded};
use crate::keyhash::{hash_addr, hash_bytes, hash_path, url_param};
use crate::roundrobin::RoundRobin;
use crate::slots::{Change, Slots};
use crate::static_rr::smooth_table;
use crate::{Algorithm, PickContext, ServerId};
use ring::Ring;

/// What a hashing algorithm hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashKey {
    /// The client's address (`source`).
    Source,
    /// The path (`uri`), with the query too when `whole`.
    Uri { whole: bool },
    /// The value of a query parameter (`url_param(NAME)`).
    UrlParam(Box<str>),
    /// The value of a request header (`hdr(NAME)`).
    Header(Box<str>),
}

impl HashKey {
    /// The request data this key is taken from.
    pub fn source(&self) -> KeySource<'_> {
        match self {
            HashKey::Source => KeySource::ClientAddr,
            HashKey::Uri { whole: false } => KeySource::Path,
            HashKey::Uri { whole: true } => KeySource::PathAndQuery,
            HashKey::UrlParam(_) => KeySource::Query,
            HashKey::Header(name) => KeySource::Header(name),
        }
    }
}

/// How a hash becomes a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashType {
    /// Modulo a weighted table: exact split, but a change moves most keys.
    MapBased,
    /// A hash ring: a change moves about 1/N of the keys. `balance_factor` is 0 (no bound) or a
    /// percentage above 100 (the [`Balancer`](crate::Balancer) refuses other values).
    Consistent { balance_factor: u32 },
}

#[derive(Debug, Clone)]
enum Table {
    Map(Vec<u32>),
    Ring(Ring),
}

/// A hashing algorithm: key extraction, map or ring, and the round-robin fallback.
#[derive(Debug, Clone)]
pub struct Hash {
    key: HashKey,
    slots: Slots,
    table: Table,
    /// Streams in flight on eligible servers (the bounded-load total).
    total_load: u64,
    fallback: RoundRobin,
    /// Eligible servers.
    live: usize,
    /// Servers excluded from the hashed picks.
    excluded: Excluded,
    /// Whether the last pick had no key and went to the fallback.
    fell_back: bool,
}

impl Hash {
    /// Creates the state for servers with these weights. `ring_ids` gives each server its stable
    /// identity on a consistent ring (so that adding or removing a server in the configuration
    /// does not move the others' points); a missing entry uses the server's index.
    pub fn new(key: HashKey, hash_type: HashType, weights: &[u32], ring_ids: &[u64]) -> Self {
        let slots = Slots::new(weights);
        let table = match hash_type {
            HashType::MapBased => Table::Map(Vec::new()),
            HashType::Consistent { balance_factor } => {
                let ids = (0..weights.len())
                    .map(|i| ring_ids.get(i).copied().unwrap_or(i as u64))
                    .collect();
                Table::Ring(Ring::new(ids, weights, balance_factor))
            }
        };
        let mut hash = Self {
            key,
            slots,
            table,
            total_load: 0,
            fallback: RoundRobin::new(weights),
            live: 0,
            excluded: Excluded::default(),
            fell_back: false,
        };
        hash.rebuild();
        hash
    }

    /// The request data this algorithm hashes.
    pub fn key_source(&self) -> KeySource<'_> {
        self.key.source()
    }

    /// Streams in flight on `server`.
    pub fn inflight(&self, server: ServerId) -> u32 {
        self.slots.inflight(server)
    }

    /// The hash of the request's key, if it has one.
    fn key_hash(&self, ctx: &PickContext<'_>) -> Option<u64> {
        match &self.key {
            HashKey::Source => ctx.client.map(hash_addr),
            HashKey::Uri { whole } => ctx
                .path
                .map(|p| hash_path(p, if *whole { ctx.query } else { None })),
            HashKey::UrlParam(name) => ctx
                .query
                .and_then(|q| url_param(q, name.as_bytes()))
                .map(hash_bytes),
            HashKey::Header(_) => ctx.header.map(hash_bytes),
        }
    }

    /// The hashed pick when servers are excluded: the next table entry, or the next point on
    /// the ring, of a server not excluded.
    fn pick_excluding(&self, hash: u64) -> Option<ServerId> {
        if self.excluded.len() >= self.live {
            return None;
        }
        match &self.table {
            Table::Map(table) => {
                let len = table.len();
                let start = ((u128::from(hash) * len as u128) >> 64) as usize;
                (0..len)
                    .filter_map(|k| table.get((start + k) % len))
                    .map(|&s| s as ServerId)
                    .find(|&s| !self.excluded.contains(s))
            }
            Table::Ring(ring) => {
                ring.lookup_excluding(hash, &self.slots, self.total_load, &self.excluded)
            }
        }
    }

    fn rebuild(&mut self) {
        self.live = (0..self.slots.len())
            .filter(|&i| self.slots.eligible(i))
            .count();
        self.total_load = (0..self.slots.len())
            .filter(|&i| self.slots.eligible(i))
            .map(|i| u64::from(self.slots.inflight(i)))
            .sum();
        match &mut self.table {
            Table::Map(table) => {
                *table = smooth_table(&self.slots.effective_weights().collect::<Vec<_>>());
            }
            Table::Ring(ring) => ring.rebuild(&self.slots),
        }
    }

    fn apply(&mut self, change: Option<Change>) {
        if change.is_some_and(Change::changed) {
            self.rebuild();
        }
    }
}

impl Exclude for Hash {
    fn exclude(&mut self, server: ServerId) {
        if self.fell_back {
            self.fallback.exclude(server);
        } else {
            self.excluded.insert(server);
        }
    }

    fn restore(&mut self) {
        self.fallback.restore();
        self.excluded.clear_each(|_| {});
    }
}

impl Algorithm for Hash {
    fn pick(&mut self, ctx: &PickContext<'_>) -> Option<ServerId> {
        let Some(hash) = self.key_hash(ctx) else {
            self.fell_back = true;
            return self.fallback.pick(ctx);
        };
        self.fell_back = false;
        if !self.excluded.is_empty() {
            return self.pick_excluding(hash);
        }
        match &self.table {
            Table::Map(table) => {
                let index = (u128::from(hash) * table.len() as u128) >> 64;
                table.get(index as usize).map(|&s| s as ServerId)
            }
            Table::Ring(ring) => ring.lookup(hash, &self.slots, self.total_load),
        }
    }

    fn set_weight(&mut self, server: ServerId, weight: u32) {
        self.fallback.set_weight(server, weight);
        let change = self.slots.set_weight(server, weight);
        self.apply(change);
    }

    fn set_usable(&mut self, server: ServerId, usable: bool) {
        self.fallback.set_usable(server, usable);
        let change = self.slots.set_usable(server, usable);
        self.apply(change);
    }

    fn on_start(&mut self, server: ServerId) {
        if self.slots.start(server).is_some() && self.slots.eligible(server) {
            self.total_load += 1;
        }
    }

    fn on_finish(&mut self, server: ServerId) {
        let before = self.slots.inflight(server);
        if self.slots.finish(server).is_some() && before > 0 && self.slots.eligible(server) {
            self.total_load = self.total_load.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests;
