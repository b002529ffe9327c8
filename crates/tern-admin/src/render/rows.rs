//! The [`View`] as named rows: each frontend, backend and server paired with its counters.
//!
//! The configuration and the snapshot are parallel lists (the snapshot's index `i` is the
//! configuration's frontend or backend `i`). Every renderer walks them the same way, so the
//! pairing lives here once. A snapshot shorter than the configuration (a server added a moment
//! ago) reads as zeros rather than failing: the views are for people and scrapers, and a
//! missing number is better than a missing page.

use std::net::SocketAddr;

use tern_config::Bind;
use tern_proxy::stats::{
    BackendSnapshot, FrontendSnapshot, ServerSnapshot, ServerStatus, TlsSnapshot,
};
use tern_proxy::AdminState;

use crate::View;

/// A server's state as the stats page shows it: the operator's state first, then health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Ready, passing its checks, and taking traffic.
    Up,
    /// Ready but failing its checks.
    Down,
    /// Drained by the operator, or its weight is 0: no new traffic.
    Drain,
    /// In maintenance: no traffic, no checks.
    Maint,
}

impl Status {
    /// All states, in the order the page lists them.
    pub const ALL: [Status; 4] = [Status::Up, Status::Down, Status::Drain, Status::Maint];

    /// Classifies a server's state; a server DNS left without an address is in maintenance
    /// (HAProxy's "MAINT (resolution)").
    pub fn of(status: &ServerStatus) -> Self {
        match status.admin {
            AdminState::Maint => Self::Maint,
            _ if status.unresolved => Self::Maint,
            AdminState::Drain => Self::Drain,
            AdminState::Ready if !status.up => Self::Down,
            AdminState::Ready if status.weight == 0 => Self::Drain,
            AdminState::Ready => Self::Up,
        }
    }

    /// `UP`, `DOWN`, `DRAIN` or `MAINT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Up => "UP",
            Self::Down => "DOWN",
            Self::Drain => "DRAIN",
            Self::Maint => "MAINT",
        }
    }

    /// The lower-case name, for CSS classes and metric labels.
    pub fn lower(self) -> &'static str {
        match self {
            Self::Up => "up",
            Self::Down => "down",
            Self::Drain => "drain",
            Self::Maint => "maint",
        }
    }
}

/// One frontend and its counters.
#[derive(Debug)]
pub struct FrontendRow<'a> {
    pub name: &'a str,
    pub binds: &'a [Bind],
    /// Whether any bind terminates TLS.
    pub tls_enabled: bool,
    pub counters: FrontendSnapshot,
    pub tls: &'a TlsSnapshot,
}

/// One backend, its counters and its servers.
#[derive(Debug)]
pub struct BackendRow<'a> {
    pub name: &'a str,
    pub counters: BackendSnapshot,
    pub servers: Vec<ServerRow<'a>>,
}

impl BackendRow<'_> {
    /// How many of its servers are in `status`.
    pub fn count(&self, status: Status) -> usize {
        self.servers.iter().filter(|s| s.state == status).count()
    }
}

/// One server: its settings, counters and state.
#[derive(Debug)]
pub struct ServerRow<'a> {
    pub name: &'a str,
    pub address: SocketAddr,
    /// The weight set in the configuration or at runtime.
    pub configured_weight: u32,
    pub backup: bool,
    pub maxconn: Option<u32>,
    /// Whether it has an active health check.
    pub checked: bool,
    /// The outcome of its last active check (`L7OK: status 200 in 2 ms`); empty if none.
    pub last_check: &'a str,
    pub counters: ServerSnapshot,
    pub status: ServerStatus,
    pub state: Status,
}

/// An empty TLS snapshot, for frontends the snapshot does not cover yet.
static NO_TLS: TlsSnapshot = TlsSnapshot {
    full: EMPTY_KIND,
    resumed: EMPTY_KIND,
    certs: Vec::new(),
    failures: Vec::new(),
    latency: Vec::new(),
    admission: Vec::new(),
};

const EMPTY_KIND: tern_proxy::stats::KindSnapshot = tern_proxy::stats::KindSnapshot {
    versions: Vec::new(),
    suites: Vec::new(),
    groups: Vec::new(),
};

/// The frontends of `view`, in configuration order.
pub fn frontends(view: &View) -> Vec<FrontendRow<'_>> {
    let stats = &view.stats;
    view.config
        .frontends
        .iter()
        .enumerate()
        .map(|(i, f)| FrontendRow {
            name: &f.name,
            binds: &f.binds,
            tls_enabled: f.binds.iter().any(|b| b.tls.is_some()),
            counters: stats.frontends.get(i).copied().unwrap_or_default(),
            tls: stats.tls.get(i).unwrap_or(&NO_TLS),
        })
        .collect()
}

/// The backends of `view` with their servers, in configuration order.
pub fn backends(view: &View) -> Vec<BackendRow<'_>> {
    let stats = &view.stats;
    view.config
        .backends
        .iter()
        .enumerate()
        .map(|(b, backend)| BackendRow {
            name: &backend.name,
            counters: stats.backends.get(b).copied().unwrap_or_default(),
            servers: backend
                .servers
                .iter()
                .enumerate()
                .map(|(s, server)| {
                    let status = nested(&stats.status, b, s);
                    let found = stats.status.get(b).and_then(|v| v.get(s)).is_some();
                    ServerRow {
                        name: &server.name,
                        address: status.address.unwrap_or(server.address),
                        configured_weight: if found {
                            status.configured_weight
                        } else {
                            server.weight
                        },
                        backup: server.backup,
                        maxconn: server.maxconn,
                        checked: server.check.is_some(),
                        last_check: stats
                            .checks
                            .get(b)
                            .and_then(|v| v.get(s))
                            .map_or("", String::as_str),
                        counters: nested(&stats.servers, b, s),
                        status,
                        state: Status::of(&status),
                    }
                })
                .collect(),
        })
        .collect()
}

fn nested<T: Copy + Default>(table: &[Vec<T>], outer: usize, inner: usize) -> T {
    table
        .get(outer)
        .and_then(|row| row.get(inner))
        .copied()
        .unwrap_or_default()
}
