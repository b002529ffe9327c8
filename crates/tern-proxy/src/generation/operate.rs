//! Runtime operations on a running generation: the operator's server state, weights and
//! addresses (the runtime API's `enable|disable|drain server`, `set weight`, `set server addr`).
//!
//! Each change is made on the state all workers share (exchange/servers.rs) and bumps the backend's
//! generation, so every worker's balancer follows at its next pick; nothing is restarted.

use std::net::SocketAddr;

use crate::stats::AdminState;
use crate::ProxyHandle;

/// The largest weight (HAProxy's).
pub const MAX_WEIGHT: u32 = 256;

/// Why a runtime operation was refused (nothing changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperateError {
    #[error("no backend named '{0}'")]
    UnknownBackend(String),
    #[error("no server named '{server}' in backend '{backend}'")]
    UnknownServer { backend: String, server: String },
    #[error("weight {0} is out of range (0 to 256)")]
    Weight(u32),
}

impl ProxyHandle {
    /// Finds a server's indexes by name.
    fn server_index(&self, backend: &str, server: &str) -> Result<(usize, usize), OperateError> {
        let config = self.config();
        let b = config
            .backend_index(backend)
            .ok_or_else(|| OperateError::UnknownBackend(backend.to_owned()))?;
        let s = config.backends[b]
            .servers
            .iter()
            .position(|s| s.name == server)
            .ok_or_else(|| OperateError::UnknownServer {
                backend: backend.to_owned(),
                server: server.to_owned(),
            })?;
        Ok((b, s))
    }

    /// Sets a server's operator state: ready (takes traffic when up), drain (only persistent
    /// clients), maint (no traffic).
    pub fn set_admin(
        &self,
        backend: &str,
        server: &str,
        state: AdminState,
    ) -> Result<(), OperateError> {
        let (b, s) = self.server_index(backend, server)?;
        self.shared.states[b].set_admin(s, state);
        tracing::info!(backend, server, state = state.as_str(), "server state set");
        Ok(())
    }

    /// Sets a server's weight (0 to 256; 0 takes it out of balancing like a drain).
    pub fn set_weight(&self, backend: &str, server: &str, weight: u32) -> Result<(), OperateError> {
        if weight > MAX_WEIGHT {
            return Err(OperateError::Weight(weight));
        }
        let (b, s) = self.server_index(backend, server)?;
        self.shared.states[b].set_configured_weight(s, weight);
        tracing::info!(backend, server, weight, "server weight set");
        Ok(())
    }

    /// Sends a server's new connections to `address`; idle pooled connections to the old one
    /// are not reused. A check aimed at the server's address follows it.
    pub fn set_address(
        &self,
        backend: &str,
        server: &str,
        address: SocketAddr,
    ) -> Result<(), OperateError> {
        let (b, s) = self.server_index(backend, server)?;
        self.shared.states[b].set_address(s, address);
        tracing::info!(backend, server, %address, "server address set");
        Ok(())
    }

    /// A server's current address (the configured one unless set at runtime).
    pub fn server_address(&self, backend: &str, server: &str) -> Result<SocketAddr, OperateError> {
        let (b, s) = self.server_index(backend, server)?;
        let configured = self.config().backends[b].servers[s].address;
        Ok(self.shared.states[b].servers[s].address(configured))
    }
}
