//! Stick tables across a reload: the new generation takes the old one's entries in-process,
//! as HAProxy's new process learns from the old one through its local peer.
//!
//! Counter tables are matched by name and key type; a backend's stickiness by backend name,
//! each entry's server by name (an entry whose server went away is dropped). Entries start a
//! new life in the new generation (their expiry counts from the reload), and `conn_cur` starts
//! at 0: the connections it counted stay with the old generation, which gives them back there.
//! A binary upgrade (a new process) does not carry tables; it resyncs from its peers.

use std::sync::Arc;

use tern_config::Config;

use crate::exchange::servers::{now, BackendState};
use crate::track::table::Tables;

/// A generation's tables, for the next generation of the same process.
#[derive(Debug, Clone)]
pub struct TablesCarry {
    counters: Arc<Tables>,
    states: Arc<Vec<BackendState>>,
    /// Each backend's name and its servers' names, in the old configuration's order.
    backends: Vec<(String, Vec<String>)>,
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
        Self {
            counters: Arc::clone(counters),
            states: Arc::clone(states),
            backends,
        }
    }

    /// Copies the old entries into the tables of `config`.
    pub(crate) fn apply(&self, config: &Config, counters: &Tables, states: &[BackendState]) {
        let now = now();
        for (i, t) in config.tables.iter().enumerate() {
            let (Some(new), Some(old)) =
                (counters.get(i), self.counters.named_like(&t.name, t.key))
            else {
                continue;
            };
            for (key, mut e) in old.entries(now, t.size) {
                e.conn_cur = 0;
                new.learn(&key, now, |n| *n = e);
            }
        }
        for (b, be) in config.backends.iter().enumerate() {
            let (Some(new), Some(_)) = (states.get(b), be.stick) else {
                continue;
            };
            let Some(old_b) = self.backends.iter().position(|(n, _)| *n == be.name) else {
                continue;
            };
            let (Some(old), Some((_, old_servers))) =
                (self.states.get(old_b), self.backends.get(old_b))
            else {
                continue;
            };
            for (ip, server) in old.stick_entries(now, usize::MAX) {
                let name = old_servers.get(server);
                if let Some(s) = name.and_then(|n| be.servers.iter().position(|s| s.name == *n)) {
                    new.learn_stick(ip, s, now);
                }
            }
        }
    }
}
