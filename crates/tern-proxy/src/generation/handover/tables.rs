//! Stick tables across a reload: the new generation takes the old one's entries in-process,
//! as HAProxy's new process learns from the old one through its local peer.
//!
//! Counter tables are matched by name and key type; a backend's stickiness by backend name,
//! each entry's server by name (an entry whose server went away is dropped). Entries start a
//! new life in the new generation (their expiry counts from the reload), and `conn_cur` starts
//! at 0: the connections it counted stay with the old generation, which gives them back there.
//! A binary upgrade (a new process) takes them as data, [`TablesImage`], in the handover
//! message, and resyncs from its peers as well: a fleet of one node keeps its tables too.

use std::net::IpAddr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tern_config::{Config, Counter};

use crate::exchange::servers::{now, BackendState};
use crate::track::freq::FreqCtr;
use crate::track::table::{Entry, Key, Table, Tables};

/// A generation's tables, for the next generation: live (a reload, same process) or as data
/// (an upgrade, from the old process).
#[derive(Debug, Clone)]
pub struct TablesCarry(Carried);

#[derive(Debug, Clone)]
enum Carried {
    Live {
        counters: Arc<Tables>,
        states: Arc<Vec<BackendState>>,
        /// Each backend's name and its servers' names, in the old configuration's order.
        backends: Vec<(String, Vec<String>)>,
    },
    Image(TablesImage),
}

/// Stick tables as data: what an upgrade sends the new process (`tern/src/upgrade.rs`).
/// Rates travel as the peers protocol sends them (milliseconds into the period, current and
/// previous counts), as the two processes' clocks start at different times.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TablesImage {
    counters: Vec<CounterImage>,
    sticks: Vec<StickImage>,
}

/// One counter table's entries.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CounterImage {
    name: String,
    entries: Vec<(KeyImage, EntryImage)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum KeyImage {
    Ip(IpAddr),
    Text(Vec<u8>),
    Int(u64),
}

/// An entry's counters; `conn_cur` is not carried (its connections stay with the old process).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct EntryImage {
    conn_cnt: u32,
    http_req_cnt: u32,
    gpc0: u32,
    /// Each stored rate: HAProxy's name of the counter (`http_req_rate`), then (ms into the
    /// period, current, previous).
    rates: Vec<(String, (u32, u32, u32))>,
}

/// One backend's source-stickiness entries, each server by name.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StickImage {
    backend: String,
    entries: Vec<(IpAddr, String)>,
}

impl TablesCarry {
    pub(crate) fn of(
        config: &Config,
        counters: &Arc<Tables>,
        states: &Arc<Vec<BackendState>>,
    ) -> Self {
        let backends = config
            .backends
            .iter()
            .map(|b| {
                (
                    b.name.clone(),
                    b.servers.iter().map(|s| s.name.clone()).collect(),
                )
            })
            .collect();
        Self(Carried::Live {
            counters: Arc::clone(counters),
            states: Arc::clone(states),
            backends,
        })
    }

    /// Tables received from an old process.
    pub fn from_image(image: TablesImage) -> Self {
        Self(Carried::Image(image))
    }

    /// The tables as data, for a new process.
    pub fn image(&self) -> TablesImage {
        match &self.0 {
            Carried::Image(image) => image.clone(),
            Carried::Live {
                counters,
                states,
                backends,
            } => image_of(counters, states, backends),
        }
    }

    /// Copies the old entries into the tables of `config`: counter tables matched by name
    /// (and key type), stickiness by backend name and each entry's server by name.
    pub(crate) fn apply(&self, config: &Config, counters: &Tables, states: &[BackendState]) {
        let image = self.image();
        let now = now();
        for (i, t) in config.tables.iter().enumerate() {
            let (Some(new), Some(old)) = (
                counters.get(i),
                image.counters.iter().find(|c| c.name == t.name),
            ) else {
                continue;
            };
            for (key, e) in old.entries.iter().take(t.size) {
                let key = key_of(key);
                if key_fits(&key, new) {
                    new.learn(&key, now, |n| restore(new, n, e, now));
                }
            }
        }
        for (b, be) in config.backends.iter().enumerate() {
            let (Some(new), Some(_)) = (states.get(b), be.stick) else {
                continue;
            };
            let Some(old) = image.sticks.iter().find(|s| s.backend == be.name) else {
                continue;
            };
            for (ip, server) in &old.entries {
                if let Some(s) = be.servers.iter().position(|s| s.name == *server) {
                    new.learn_stick(*ip, s, now);
                }
            }
        }
    }
}

/// The live tables of a generation as data.
fn image_of(
    counters: &Tables,
    states: &[BackendState],
    backends: &[(String, Vec<String>)],
) -> TablesImage {
    let now = now();
    let counters = counters
        .iter()
        .map(|t| CounterImage {
            name: t.name.clone(),
            entries: t
                .entries(now, usize::MAX)
                .into_iter()
                .map(|(k, e)| (key_image(&k), entry_image(t, &e, now)))
                .collect(),
        })
        .collect();
    let sticks = states
        .iter()
        .zip(backends)
        .map(|(state, (backend, servers))| StickImage {
            backend: backend.clone(),
            entries: state
                .stick_entries(now, usize::MAX)
                .into_iter()
                .filter_map(|(ip, s)| Some((ip, servers.get(s)?.clone())))
                .collect(),
        })
        .filter(|s| !s.entries.is_empty())
        .collect();
    TablesImage { counters, sticks }
}

fn key_image(key: &Key) -> KeyImage {
    match key {
        Key::Ip(ip) => KeyImage::Ip(*ip),
        Key::Text(t) => KeyImage::Text(t.to_vec()),
        Key::Int(n) => KeyImage::Int(*n),
    }
}

fn key_of(key: &KeyImage) -> Key {
    match key {
        KeyImage::Ip(ip) => Key::Ip(*ip),
        KeyImage::Text(t) => Key::Text(t.clone().into_boxed_slice()),
        KeyImage::Int(n) => Key::Int(*n),
    }
}

/// Whether `key` is of the kind `table` keeps (a table renamed onto another type is skipped).
fn key_fits(key: &Key, table: &Table) -> bool {
    use tern_config::TableKey;
    matches!(
        (key, table.key),
        (Key::Ip(_), TableKey::Ip | TableKey::Ipv6)
            | (Key::Text(_), TableKey::String)
            | (Key::Int(_), TableKey::Integer)
    )
}

fn entry_image(t: &Table, e: &Entry, now: u64) -> EntryImage {
    let rates = Counter::ALL
        .into_iter()
        .filter_map(|c| {
            let period = t.period(c)?;
            let rate = e.rate(c)?;
            Some((c.name().to_owned(), rate.to_wire(now, period)))
        })
        .collect();
    EntryImage {
        conn_cnt: e.conn_cnt,
        http_req_cnt: e.http_req_cnt,
        gpc0: e.gpc0,
        rates,
    }
}

/// Fills a new entry from its image (`conn_cur` starts at 0).
fn restore(t: &Table, n: &mut Entry, e: &EntryImage, now: u64) {
    n.conn_cnt = e.conn_cnt;
    n.http_req_cnt = e.http_req_cnt;
    n.gpc0 = e.gpc0;
    for (name, (ms, curr, prev)) in &e.rates {
        let Some(c) = Counter::named(name) else {
            continue;
        };
        if t.period(c).is_some() {
            if let Some(r) = n.rate_mut(c) {
                *r = FreqCtr::from_wire(now, *ms, *curr, *prev);
            }
        }
    }
}
