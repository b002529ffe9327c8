//! DNS service discovery: `[[resolvers]]` sections (HAProxy's `resolvers`) and what a server
//! resolved by name carries (`resolvers`, `resolve_prefer`, `init_addr`, templates).
//!
//! The configuration only describes what to ask and how long to trust answers; tern-proxy's
//! `resolve/` asks, off the data path, and publishes addresses into the servers' shared state.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// One `[[resolvers]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolvers {
    pub name: String,
    /// Asked in turn, over UDP: a query that times out goes to the next one.
    pub nameservers: Vec<SocketAddr>,
    /// Queries sent for one resolution before it counts as a timeout (`resolve_retries`).
    pub resolve_retries: u32,
    /// Time between two resolutions of a name (`timeouts.resolve`, HAProxy `timeout resolve`).
    pub resolve_interval: Duration,
    /// Time to wait for an answer before the next try (`timeouts.retry`).
    pub retry: Duration,
    pub hold: Hold,
    /// The EDNS0 payload size announced; 512 announces none (`accepted_payload_size`).
    pub accepted_payload_size: u16,
}

/// How long the last good answer is kept after each kind of failure (`hold`), and how long a
/// record missing from a good answer keeps its slot (`obsolete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    /// How long a good answer is used before the name is asked again, at most.
    pub valid: Duration,
    pub nx: Duration,
    pub timeout: Duration,
    pub refused: Duration,
    pub other: Duration,
    pub obsolete: Duration,
}

impl Default for Hold {
    /// HAProxy's defaults.
    fn default() -> Self {
        Self {
            valid: Duration::from_secs(10),
            nx: Duration::from_secs(30),
            timeout: Duration::from_secs(30),
            refused: Duration::from_secs(30),
            other: Duration::from_secs(30),
            obsolete: Duration::ZERO,
        }
    }
}

/// How a server finds its address by DNS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerResolve {
    /// Index into `Config::resolvers`.
    pub resolvers: usize,
    /// The name asked, lower-case, without a trailing dot.
    pub name: String,
    /// SRV records (a name starting with `_`): targets, ports and weights come from them.
    pub srv: bool,
    /// The port of A/AAAA answers (0 for SRV, whose records give it).
    pub port: u16,
    pub prefer: Family,
    /// The slot's number in its template (1-based as in its name); `None` for a plain server.
    pub slot: Option<u32>,
    /// The template's first slot number, so slots of one template share answers in order.
    pub first_slot: u32,
    /// The server starts with no address (init-addr `none` was reached, or a template slot)
    /// and stays out of balancing until DNS gives it one.
    pub starts_unresolved: bool,
    /// `init_addr` includes `last`: a reload keeps the previous generation's address.
    pub keep_last: bool,
}

/// The address family a server prefers (`resolve_prefer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    #[default]
    Ipv6,
    Ipv4,
}

impl Family {
    /// Whether `ip` is of this family.
    pub fn matches(self, ip: IpAddr) -> bool {
        matches!(
            (self, ip),
            (Family::Ipv4, IpAddr::V4(_)) | (Family::Ipv6, IpAddr::V6(_))
        )
    }
}
