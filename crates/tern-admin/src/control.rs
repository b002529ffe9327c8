//! What the runtime surface may ask of a running tern: the [`Control`] trait and the plain data
//! it returns.
//!
//! Every method is synchronous and cheap (it reads atomics or queues a change); a method that
//! changes state either applies the whole change or returns an error and changes nothing.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tern_config::Config;
pub use tern_proxy::AdminState;
use tern_proxy::StatsSnapshot;

/// Process-wide facts for `show info`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Info {
    pub version: String,
    pub pid: u32,
    /// When this process started.
    pub started: SystemTime,
    pub uptime: Duration,
    pub workers: usize,
    /// Generations started by reloads since the process started (0 = the first).
    pub generation: u64,
    /// Old generations still draining.
    pub draining_generations: usize,
    /// Client connections open now, over all frontends.
    pub connections: u64,
    /// Whether task profiling is on.
    pub profiling: bool,
    /// Batched key exchanges (`global.crypto_batch`) over all generations; `None` when off.
    /// (Rendered by `render::json::info`, not serialized as is.)
    #[serde(skip)]
    pub crypto_batch: Option<tern_proxy::BatchSnapshot>,
}

/// A consistent picture of the running proxy: the configuration in use (with runtime changes:
/// added and deleted servers, addresses) and its counters and server states.
#[derive(Debug, Clone)]
pub struct View {
    pub info: Info,
    pub config: Arc<Config>,
    pub stats: StatsSnapshot,
}

/// `add server B/S ADDR [weight N] [maxconn N] [check] [backup]`: the server's settings; every
/// other setting comes from the backend's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    pub address: SocketAddr,
    pub weight: Option<u32>,
    pub maxconn: Option<u32>,
    pub check: bool,
}

/// Why a command was refused; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    #[error("no backend named '{0}'")]
    UnknownBackend(String),
    #[error("no server named '{server}' in backend '{backend}'")]
    UnknownServer { backend: String, server: String },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Failed(String),
}

/// The running proxy, as the control API sees it. Implemented by the `tern` binary over its
/// current generation; tests implement it with a fake.
pub trait Control: Send + Sync + 'static {
    /// `show info`.
    fn info(&self) -> Info;
    /// Configuration and counters, for `show stat`, `show servers`, the stats page, metrics.
    fn view(&self) -> View;
    /// `enable|disable|drain server B/S` (enable = ready, disable = maint).
    fn set_admin(&self, backend: &str, server: &str, state: AdminState)
        -> Result<(), ControlError>;
    /// `set weight B/S N` (0..=256; 0 drains the server).
    fn set_weight(&self, backend: &str, server: &str, weight: u32) -> Result<(), ControlError>;
    /// `set server B/S addr A`: new connections go to `addr`; pooled ones to the old address
    /// are closed.
    fn set_addr(&self, backend: &str, server: &str, addr: SocketAddr) -> Result<(), ControlError>;
    /// `add server B/S ...`: the server starts in maintenance unless `enable`d... see docs.
    fn add_server(&self, backend: &str, spec: ServerSpec) -> Result<(), ControlError>;
    /// `del server B/S`: only a server in maintenance with no request in flight.
    fn del_server(&self, backend: &str, server: &str) -> Result<(), ControlError>;
    /// `show tls`: one JSON object per TLS bind (certificates with names and expiry, ticket
    /// key age).
    fn tls(&self) -> serde_json::Value;
    /// `reload`: re-read the configuration file; a refused one leaves everything as it was.
    fn reload(&self) -> Result<String, ControlError>;
    /// `upgrade`: start a new tern binary that takes over the listening sockets.
    fn upgrade(&self) -> Result<String, ControlError>;
    /// `set profiling on|off`.
    fn set_profiling(&self, on: bool);
    /// `show profiling`: a table per kind of task (text).
    fn profiling(&self) -> String;
    /// `show table [NAME [key K]]`: the counter tables, or a table's entries (text).
    fn show_table(&self, _name: Option<&str>, _key: Option<&str>) -> Result<String, ControlError> {
        Err(ControlError::Invalid("no counter tables".to_owned()))
    }
    /// `show peers`: the peers sections and the state of each remote peer (text).
    fn show_peers(&self) -> String {
        "# no table is shared with peers\n".to_owned()
    }
    /// `clear table NAME [key K]`: forgets a table's entries, or one.
    fn clear_table(&self, _name: &str, _key: Option<&str>) -> Result<String, ControlError> {
        Err(ControlError::Invalid("no counter tables".to_owned()))
    }
}
