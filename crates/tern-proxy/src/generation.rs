//! A generation: the workers, the health checker and the shared server state started from one
//! configuration snapshot ([`start::start_with`]), held as a [`ProxyHandle`]. It hands over to
//! the next generation on a reload or a binary upgrade ([`handover`]), and the runtime API
//! changes its servers in place ([`operate`]).

// What one generation hands to the next: listening sockets, server state, TLS session caches.
pub(crate) mod handover;
// Runtime operations: the operator's server state, weights and addresses.
pub(crate) mod operate;
// Start-up: binding, worker threads, the health checker; the snapshot it starts from.
pub(crate) mod start;

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use tern_config::Config;
use tokio::sync::{watch, Semaphore};

use crate::access_log::AccessLog;
use crate::generation::handover::{Inherit, InheritedBind};
use crate::stats::Stats;
use crate::tls::info::BindTlsInfo;
use crate::tls::reload::{BindTlsError, ReloadSummary, Reloader};
use crate::worker::{Mode, Shared};

/// A listening address, as bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundBind {
    pub frontend: String,
    /// The address in the configuration (port 0 when the system chose it).
    pub configured: SocketAddr,
    pub address: SocketAddr,
    pub tls: bool,
}

/// A running proxy.
#[derive(Debug)]
pub struct ProxyHandle {
    binds: Vec<BoundBind>,
    /// Rebuilds the TLS binds' certificates and hands them to the workers (`tls/reload.rs`).
    reloader: Arc<Reloader>,
    workers: Vec<JoinHandle<()>>,
    /// The health checker thread, when some server is checked.
    checker: Option<JoinHandle<()>>,
    /// The DNS resolver thread, when some server is found by DNS (stopped with the checker).
    resolver: Option<JoinHandle<()>>,
    shutdown: watch::Sender<Mode>,
    /// Stops the health checker (at a drain as at a stop).
    checker_stop: watch::Sender<bool>,
    stats: Stats,
    /// What the workers share (configuration, server states), for the runtime operations.
    shared: Arc<Shared>,
    /// A duplicate of every listening socket, to hand to the next generation.
    sockets: Vec<InheritedBind>,
    /// The sessions with the peers stick tables are shared with, if any (`peers.rs`).
    peers: Option<crate::peers::Runtime>,
}

impl ProxyHandle {
    /// The addresses listened on (port 0 resolved).
    pub fn binds(&self) -> &[BoundBind] {
        &self.binds
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// Counters summed over all workers, readable at any time.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Re-reads the certificate, OCSP and ticket key files of every TLS bind and swaps them in
    /// for connections accepted from now on, or keeps every current certificate when any file
    /// is broken (logged, counted and returned). `tern.toml` is not read again.
    pub fn reload_certificates(&self) -> Result<ReloadSummary, BindTlsError> {
        self.reloader.reload()
    }

    /// `show tls`: every TLS bind with its certificates as loaded (start-up or the last reload)
    /// and its resumption state (`tls/info.rs`).
    pub fn tls_info(&self) -> Vec<BindTlsInfo> {
        self.reloader.tls_info()
    }

    /// Starts a graceful stop: listeners close, idle connections close, streams in flight get up
    /// to `global.grace` to finish.
    pub fn shutdown(&self) {
        let _ = self.shutdown.send(Mode::Stop);
        let _ = self.checker_stop.send(true);
    }

    /// Hands over to a newer generation: accept nothing more, let connections finish (see
    /// `hard_stop_after`); [`ProxyHandle::shutdown`] still stops it sooner.
    pub fn drain(&self) {
        self.shutdown.send_if_modified(|mode| {
            let run = *mode == Mode::Run;
            if run {
                *mode = Mode::Drain;
            }
            run
        });
        let _ = self.checker_stop.send(true);
    }

    /// Drops this generation's duplicates of its listening sockets (after a newer generation
    /// took what it needs): the sockets of binds the new configuration removed then close as
    /// soon as this generation's accept loops stop, rather than when it has drained.
    pub fn release_listeners(&mut self) {
        self.sockets.clear();
    }

    /// Whether every thread of this generation has ended.
    pub fn is_finished(&self) -> bool {
        self.workers.iter().all(JoinHandle::is_finished)
            && self.checker.as_ref().is_none_or(JoinHandle::is_finished)
            && self.resolver.as_ref().is_none_or(JoinHandle::is_finished)
            && self
                .peers
                .as_ref()
                .is_none_or(crate::peers::Runtime::is_finished)
    }

    /// `show table [NAME [key K]]`: the counter tables and the backends' stickiness tables
    /// (named like their backend), or one table's entries (text).
    pub fn show_table(&self, name: Option<&str>, key: Option<&str>) -> Result<String, String> {
        let config = self.config();
        let now = crate::exchange::servers::now();
        let stick = |be: &tern_config::Backend, only: Option<std::net::IpAddr>, limit| {
            let i = config.backend_index(&be.name)?;
            self.shared.states.get(i)?.show_stick(be, only, limit, now)
        };
        let Some(name) = name else {
            let mut lines = vec![self.shared.tables.show(None, None)?];
            // Headers only.
            lines.extend(config.backends.iter().filter_map(|be| stick(be, None, 0)));
            lines.retain(|l| !l.is_empty());
            return Ok(lines.join("\n"));
        };
        let backend = config
            .backends
            .iter()
            .find(|b| b.name == name && b.stick.is_some());
        match backend {
            Some(be) if config.table_index(name).is_none() => {
                let only = key
                    .map(|k| k.parse::<std::net::IpAddr>().map(|ip| ip.to_canonical()))
                    .transpose()
                    .map_err(|_| {
                        format!(
                            "'{}' is not a key of table '{name}'",
                            key.unwrap_or_default()
                        )
                    })?;
                stick(be, only, crate::track::table::SHOW_LIMIT)
                    .ok_or_else(|| format!("no table named '{name}'"))
            }
            _ => self.shared.tables.show(Some(name), key),
        }
    }

    /// `show peers`: each peers section and the state of its remote peers (text).
    pub fn show_peers(&self) -> String {
        self.peers.as_ref().map_or_else(
            || "# no table is shared with peers\n".to_owned(),
            |p| p.show(),
        )
    }

    /// Each remote peer's counters (none without shared tables).
    pub fn peer_counters(&self) -> Vec<crate::stats::PeerSnapshot> {
        self.peers
            .as_ref()
            .map(|p| p.counters())
            .unwrap_or_default()
    }

    /// `clear table NAME [key K]`: forgets a table's entries, or one.
    pub fn clear_table(&self, name: &str, key: Option<&str>) -> Result<String, String> {
        self.shared.tables.clear(name, key)
    }

    /// The configuration this generation runs.
    pub fn config(&self) -> &Config {
        self.shared.config()
    }

    /// Client connections open now (taken from the global `maxconn`).
    pub fn connections(&self) -> u64 {
        let max = self.config().global.maxconn.min(Semaphore::MAX_PERMITS);
        max.saturating_sub(self.shared.global_limit.available_permits()) as u64
    }

    /// What a next generation needs from this one: duplicates of the listening sockets, the
    /// servers' state and the TLS session caches (generation/handover.rs).
    pub fn handover(&self) -> std::io::Result<Inherit> {
        let listeners = self
            .sockets
            .iter()
            .map(|b| {
                Ok(InheritedBind {
                    frontend: b.frontend.clone(),
                    configured: b.configured,
                    address: b.address,
                    sockets: b
                        .sockets
                        .iter()
                        .map(std::net::TcpListener::try_clone)
                        .collect::<std::io::Result<_>>()?,
                })
            })
            .collect::<std::io::Result<_>>()?;
        Ok(Inherit {
            listeners,
            servers: handover::servers_of(self.config(), &self.shared.states),
            sessions: handover::sessions_of(self.config(), &self.reloader.current()),
            tables: Some(handover::TablesCarry::of(
                self.config(),
                &self.shared.tables,
                &self.shared.states,
            )),
        })
    }

    /// Waits for every worker to finish (after [`ProxyHandle::shutdown`]).
    pub fn join(mut self) {
        if let Some(p) = &mut self.peers {
            p.join();
        }
        for w in self.workers {
            let _ = w.join();
        }
        if let Some(checker) = self.checker {
            let _ = checker.join();
        }
        if let Some(resolver) = self.resolver {
            let _ = resolver.join();
        }
        // Every line of the workers is written before the caller reads the counters.
        if let Some(log) = &self.stats.access_log {
            log.flush(std::time::Duration::from_secs(2));
        }
    }

    /// The access log the workers write to, if any (a reload keeps it when `[access_log]` is
    /// unchanged).
    pub fn access_log(&self) -> Option<&AccessLog> {
        self.shared.access_log()
    }
}
