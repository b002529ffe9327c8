//! Stick tables shared with other load balancers over HAProxy's peers protocol (the codec is
//! `tern-peers`; this module owns sockets, timers and tables).
//!
//! Each `[[peers]]` section a table names runs on one thread of the generation (`tern-peers`,
//! a single-threaded runtime, off the workers): a listener at the local peer's address, a
//! connector per remote peer, and a pump. The data path only marks changed keys
//! ([`changes`]); every [`PUMP_EVERY`] the pump reads the marked entries and hands one batch
//! to every session (a bounded broadcast: a peer that falls [`QUEUE`] batches behind loses the
//! oldest, counted). A session sends the definition of each table before its first update,
//! applies what it learns without marking it (learnt entries are not sent on: the peers are a
//! full mesh, as in HAProxy), and answers a resync request with every entry.
//!
//! One session per remote peer: both sides connect, and when two sessions meet, the one
//! started by the peer whose name sorts first is kept (HAProxy keeps the newer one and retries
//! after a random delay; the deterministic rule spares tern nodes that dance). A new node asks
//! each peer for a full resync on its first session with it. On a reload the new generation
//! takes the old one's entries in-process (`handover.rs`) and asks its peers as well.
//!
//! What is shared: for source stickiness, the server (`server_id`, 1-based as HAProxy numbers
//! servers, and `server_key`, the server's name, which wins when both are known); for counter
//! tables, every stored counter but `conn_cur` (which HAProxy also keeps local). Rates go as
//! HAProxy's frequency counters (period start, current and previous counts).

pub(crate) mod changes;
mod image;
mod link;
mod session;

use std::fmt::Write as _;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tern_config::{Config, Counter, PeersSection, TableKey};
use tern_peers::table::dt;
use tern_peers::{DataType, KeyType, TableDef};
use tokio::sync::watch;

use crate::exchange::servers::BackendState;
use crate::stats::PeerSnapshot;
use crate::track::table::Tables;
use link::PeerState;

/// How often changed entries are sent: short, as a rate limit shared by N nodes lets through
/// what the other nodes accepted in the last interval (docs/operations.md); an idle wake-up
/// only looks at the set of changed keys.
pub(crate) const PUMP_EVERY: Duration = Duration::from_millis(10);
/// Batches a session may fall behind before it loses the oldest.
const QUEUE: usize = 256;

/// What a shared table is in tern.
#[derive(Debug, Clone)]
enum Kind {
    /// A backend's source stickiness; the servers' names, by id.
    Stick {
        backend: usize,
        servers: Vec<String>,
    },
    /// A counter table.
    Counters { table: usize },
}

/// A table shared with a section's peers.
#[derive(Debug)]
struct Shared {
    kind: Kind,
    /// What peers are told of it (`def.id` is its position in the section's list, plus 1).
    def: TableDef,
}

/// The tables a batch holds updates of, by position in the section's list.
type Batch = Vec<(usize, tern_peers::Update)>;

/// One section at run time.
#[derive(Debug)]
struct Section {
    cfg: PeersSection,
    tables: Vec<Shared>,
    states: Arc<Vec<BackendState>>,
    counters: Arc<Tables>,
    peers: Vec<PeerState>,
    /// Connections refused before a session started (bad hello, unknown peer, garbage).
    refused: std::sync::atomic::AtomicU64,
    updates: tokio::sync::broadcast::Sender<Arc<Batch>>,
}

/// The peers of a generation: their thread and what `show peers` reads.
#[derive(Debug)]
pub(crate) struct Runtime {
    thread: Option<JoinHandle<()>>,
    sections: Vec<Arc<Section>>,
}

impl Runtime {
    /// Starts the sections some table names; `None` when no table is shared. Stops when
    /// `stop` turns true (a drain or a stop of the generation).
    pub(crate) fn start(
        config: &Config,
        states: &Arc<Vec<BackendState>>,
        counters: &Arc<Tables>,
        stop: watch::Receiver<bool>,
    ) -> std::io::Result<Option<Runtime>> {
        let sections: Vec<Arc<Section>> = config
            .peers
            .iter()
            .enumerate()
            .map(|(i, cfg)| section(config, i, cfg, states, counters))
            .filter(|s| !s.tables.is_empty())
            .map(Arc::new)
            .collect();
        if sections.is_empty() {
            return Ok(None);
        }
        let run = sections.clone();
        let thread = std::thread::Builder::new()
            .name("tern-peers".to_owned())
            .spawn(move || link::run(run, stop))?;
        Ok(Some(Runtime {
            thread: Some(thread),
            sections,
        }))
    }

    /// `show peers`: a line per section, then one per remote peer.
    pub(crate) fn show(&self) -> String {
        let mut out = String::new();
        for s in &self.sections {
            let names: Vec<&str> = s.tables.iter().map(|t| t.def.name.as_str()).collect();
            let _ = writeln!(
                out,
                "# peers: {}, local: {}, bind: {}, tables: {}, refused: {}",
                s.cfg.name,
                s.cfg.local,
                s.cfg.bind,
                names.join(","),
                s.refused.load(std::sync::atomic::Ordering::Relaxed)
            );
            for p in &s.peers {
                out.push_str(&p.show());
                out.push('\n');
            }
        }
        out
    }

    /// Each remote peer's counters, for the stats.
    pub(crate) fn counters(&self) -> Vec<PeerSnapshot> {
        let mut rows = Vec::new();
        for s in &self.sections {
            let refused = s.refused.load(std::sync::atomic::Ordering::Relaxed);
            for p in &s.peers {
                let (connected, sent, received, errors) = p.counts();
                rows.push(PeerSnapshot {
                    section: s.cfg.name.clone(),
                    peer: p.name.clone(),
                    connected,
                    sent,
                    received,
                    errors,
                    refused,
                });
            }
        }
        rows
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    pub(crate) fn join(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Section `index` and the tables that name it.
fn section(
    config: &Config,
    index: usize,
    cfg: &PeersSection,
    states: &Arc<Vec<BackendState>>,
    counters: &Arc<Tables>,
) -> Section {
    let mut tables = Vec::new();
    for (b, be) in config.backends.iter().enumerate() {
        let Some(stick) = be.stick.filter(|s| s.peers == Some(index)) else {
            continue;
        };
        let def = TableDef {
            id: tables.len() as u64 + 1,
            name: be.name.clone(),
            key_type: KeyType::Ipv4,
            key_len: 4,
            data_types: (1 << dt::SERVER_ID) | (1 << dt::SERVER_KEY),
            expire_ms: millis(stick.expire),
            params: Vec::new(),
        };
        let servers = be.servers.iter().map(|s| s.name.clone()).collect();
        tables.push(Shared {
            kind: Kind::Stick {
                backend: b,
                servers,
            },
            def,
        });
    }
    for (i, t) in config.tables.iter().enumerate() {
        if t.peers != Some(index) || tables.iter().any(|s: &Shared| s.def.name == t.name) {
            continue;
        }
        let (key_type, key_len) = match t.key {
            TableKey::Ip => (KeyType::Ipv4, 4),
            TableKey::Ipv6 => (KeyType::Ipv6, 16),
            TableKey::String => (KeyType::Str, tern_config::MAX_STRING_KEY as u32),
            TableKey::Integer => (KeyType::Sint, 4),
        };
        let mut data_types = 0u64;
        let mut params = Vec::new();
        for c in Counter::ALL {
            let Some(d) = data_type(c).filter(|_| t.store.keeps(c)) else {
                continue;
            };
            data_types |= 1 << d;
            if let Some(p) = t.store.period(c) {
                params.push((d, millis(p), 0));
            }
        }
        params.sort_by_key(|p| p.0);
        let def = TableDef {
            id: tables.len() as u64 + 1,
            name: t.name.clone(),
            key_type,
            key_len,
            data_types,
            expire_ms: millis(t.expire),
            params,
        };
        tables.push(Shared {
            kind: Kind::Counters { table: i },
            def,
        });
    }
    let peers = cfg
        .remotes
        .iter()
        .map(|p| PeerState::new(&p.name, p.address))
        .collect();
    Section {
        cfg: cfg.clone(),
        tables,
        states: Arc::clone(states),
        counters: Arc::clone(counters),
        peers,
        refused: Default::default(),
        updates: tokio::sync::broadcast::channel(QUEUE).0,
    }
}

/// HAProxy's data type of a counter; `None` for `conn_cur`, which stays local.
fn data_type(c: Counter) -> Option<DataType> {
    Some(match c {
        Counter::ConnCur => return None,
        Counter::ConnCnt => dt::CONN_CNT,
        Counter::ConnRate => dt::CONN_RATE,
        Counter::HttpReqCnt => dt::HTTP_REQ_CNT,
        Counter::HttpReqRate => dt::HTTP_REQ_RATE,
        Counter::HttpErrRate => dt::HTTP_ERR_RATE,
        Counter::BytesInRate => dt::BYTES_IN_RATE,
        Counter::BytesOutRate => dt::BYTES_OUT_RATE,
        Counter::Gpc0 => dt::GPC0,
        Counter::Gpc0Rate => dt::GPC0_RATE,
    })
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
