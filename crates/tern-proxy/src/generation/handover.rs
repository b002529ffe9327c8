//! What one generation of workers hands to the next: listening sockets, server state and TLS
//! session caches.
//!
//! A reload (and a binary upgrade, across processes) starts a new generation with the new
//! configuration while the old one drains (worker.rs `Mode::Drain`). Nothing is refused and
//! nothing is forgotten because:
//! - **the listening sockets are the same**: the new generation gets duplicates of the old
//!   one's file descriptors for every bind whose configured address did not change, so the
//!   kernel's accept queues are never closed (closing one SO_REUSEPORT socket would reset the
//!   connections queued on it). Binds that are new are bound; binds that went away close when
//!   the old generation ends.
//! - **server state carries over** by backend and server name: health (a server found down
//!   stays down until it passes `rise` checks), the operator's state, and a weight or address
//!   set at runtime (a value from the file that did not change at runtime follows the file).
//!   The operator's state follows the same rule against the file's `disabled`: a server still
//!   in the state its old file set (maintenance with `disabled`, else ready) takes the new
//!   file's, so adding or removing `disabled` and reloading takes effect, while an `enable`,
//!   `drain` or `disable` given at runtime outlives the reload (HAProxy keeps runtime state
//!   across reloads only with `load-server-state-from-file`; tern always does).
//! - **TLS session caches** of binds whose TLS settings did not change carry over; ticket keys
//!   are process-wide (tern-tls `tickets.rs`) or come from the shared key file, so sessions keep
//!   resuming across a reload.

// Stick tables carried across a reload.
mod tables;

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::server::StoresServerSessions;
use tern_config::{Config, TlsSettings};

pub use tables::{TablesCarry, TablesImage};

use crate::exchange::servers::BackendState;
use crate::stats::AdminState;
use crate::tls::reload::FrontendTls;

/// The listening sockets of one bind.
#[derive(Debug)]
pub struct InheritedBind {
    pub frontend: String,
    /// The address in the configuration (a port 0 stays 0): how the next generation finds it.
    pub configured: SocketAddr,
    /// The address bound.
    pub address: SocketAddr,
    /// One socket per worker of the generation that bound them (SO_REUSEPORT group).
    pub sockets: Vec<std::net::TcpListener>,
}

/// A server's state to carry into the next generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCarry {
    pub backend: String,
    pub server: String,
    pub up: bool,
    pub admin: AdminState,
    /// Whether the carrying generation's file said `disabled = true`: `admin` was set at
    /// runtime only if it differs from the state that implies.
    pub disabled: bool,
    /// A weight set at runtime (`None`: the file's weight applies).
    pub weight: Option<u32>,
    /// An address set at runtime.
    pub address: Option<SocketAddr>,
}

/// A TLS bind's session cache.
pub struct SessionCarry {
    pub frontend: String,
    pub configured: SocketAddr,
    /// The settings the cache was made for; a bind whose settings changed starts afresh.
    pub settings: TlsSettings,
    pub store: Arc<dyn StoresServerSessions>,
}

impl std::fmt::Debug for SessionCarry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCarry")
            .field("frontend", &self.frontend)
            .field("configured", &self.configured)
            .finish_non_exhaustive()
    }
}

/// Everything a new generation takes from the previous one.
#[derive(Debug, Default)]
pub struct Inherit {
    pub listeners: Vec<InheritedBind>,
    pub servers: Vec<ServerCarry>,
    pub sessions: Vec<SessionCarry>,
    /// The old generation's stick tables (live across a reload, as data across an upgrade).
    pub tables: Option<TablesCarry>,
}

impl Inherit {
    /// Takes the sockets of the bind `frontend` configured at `configured`, if inherited.
    pub(crate) fn take_bind(
        &mut self,
        frontend: &str,
        configured: SocketAddr,
    ) -> Option<InheritedBind> {
        // A port-0 bind (tests) is inherited only by the same frontend; an explicit address
        // can move between frontends.
        let at = self.listeners.iter().position(|b| {
            b.configured == configured && (configured.port() != 0 || b.frontend == frontend)
        })?;
        Some(self.listeners.swap_remove(at))
    }
}

/// The state of every server of `config` worth carrying over.
pub(crate) fn servers_of(config: &Config, states: &[BackendState]) -> Vec<ServerCarry> {
    let mut out = Vec::new();
    for (be, state) in config.backends.iter().zip(states) {
        for (server, s) in be.servers.iter().zip(&state.servers) {
            let weight = s.configured_weight();
            let address = s.address(server.address);
            out.push(ServerCarry {
                backend: be.name.clone(),
                server: server.name.clone(),
                up: s.is_up(),
                admin: s.admin(),
                disabled: server.disabled,
                weight: (weight != server.weight).then_some(weight),
                // A server DNS left without an address carries none: the next generation's
                // first resolution decides.
                address: (address != server.address && !s.is_unresolved()).then_some(address),
            });
        }
    }
    out
}

/// Applies carried server state to a new generation's states (before its workers start).
pub(crate) fn apply_servers(config: &Config, states: &[BackendState], carry: &[ServerCarry]) {
    for c in carry {
        let Some(b) = config.backend_index(&c.backend) else {
            continue;
        };
        let (Some(be), Some(state)) = (config.backends.get(b), states.get(b)) else {
            continue;
        };
        let Some(id) = be.servers.iter().position(|s| s.name == c.server) else {
            continue;
        };
        let checked = be.servers[id].check.is_some();
        // Health only matters for checked servers: an unchecked one is always up.
        if checked && !c.up {
            state.set_up(id, false);
        }
        // The new file's state stands unless the operator changed the old one at runtime.
        if c.admin != file_admin(c.disabled) {
            state.set_admin(id, c.admin);
        }
        if let Some(w) = c.weight {
            state.set_configured_weight(id, w);
        }
        match (c.address, &be.servers[id].resolve) {
            // `init_addr` with `last`: the address DNS gave the previous generation.
            (Some(a), Some(resolve)) if resolve.keep_last => {
                state.set_resolved(id, Some(a));
            }
            (Some(_), Some(_)) | (None, _) => {}
            (Some(a), None) => {
                state.set_address(id, a);
            }
        }
    }
}

/// The operator's state a file sets: maintenance for a `disabled` server.
fn file_admin(disabled: bool) -> AdminState {
    if disabled {
        AdminState::Maint
    } else {
        AdminState::Ready
    }
}

/// The session caches of every TLS bind of `config` (`tls` in bind order).
pub(crate) fn sessions_of(config: &Config, tls: &FrontendTls) -> Vec<SessionCarry> {
    let mut out = Vec::new();
    for (fe, binds) in config.frontends.iter().zip(tls) {
        for (bind, built) in fe.binds.iter().zip(binds) {
            if let (Some(settings), Some(built)) = (&bind.tls, built) {
                out.push(SessionCarry {
                    frontend: fe.name.clone(),
                    configured: bind.address,
                    settings: settings.clone(),
                    store: Arc::clone(&built.session_storage),
                });
            }
        }
    }
    out
}

/// Puts carried session caches into a new generation's TLS configurations.
pub(crate) fn apply_sessions(config: &Config, tls: &mut FrontendTls, carry: &[SessionCarry]) {
    for (fe, binds) in config.frontends.iter().zip(tls.iter_mut()) {
        for (bind, built) in fe.binds.iter().zip(binds.iter_mut()) {
            let (Some(settings), Some(built)) = (&bind.tls, built.as_mut()) else {
                continue;
            };
            let found = carry.iter().find(|c| {
                c.frontend == fe.name && c.configured == bind.address && &c.settings == settings
            });
            if let Some(c) = found {
                Arc::make_mut(built).session_storage = Arc::clone(&c.store);
            }
        }
    }
}

#[cfg(test)]
mod tests;
