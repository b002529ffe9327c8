//! The validated, typed configuration model.
//!
//! Everything downstream of the parser (TLS loading, the data path, `tern check`) works on these
//! types only. They are produced by [`crate::parse`] from the raw TOML structs after validation, so
//! code holding a [`Config`] may rely on its invariants: names are unique, every frontend's
//! `default_backend` exists, every backend has at least one server, durations are non-zero where
//! a zero would mean "hang forever", and addresses are resolved.
//!
//! Defaults are chosen to match what a HAProxy operator expects (see docs/configuration.md).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A whole, validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub global: Global,
    pub frontends: Vec<Frontend>,
    pub backends: Vec<Backend>,
}

impl Config {
    /// Index of the backend named `name`, if any.
    pub fn backend_index(&self, name: &str) -> Option<usize> {
        self.backends.iter().position(|b| b.name == name)
    }
}

/// Process-wide settings (`[global]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Global {
    /// Number of worker threads. `None` means one per CPU available to the process.
    pub workers: Option<usize>,
    /// Optional pinning: worker `i` runs on CPU `cpus[i]`. Same length as the worker count when set.
    pub cpus: Option<Vec<usize>>,
    /// Maximum concurrent client connections over all frontends and workers.
    pub maxconn: usize,
    /// How long a graceful stop waits for in-flight streams before closing them.
    pub grace: Duration,
    /// Listen backlog passed to `listen(2)` for every bind.
    pub backlog: u32,
}

/// A frontend: what clients connect to (`[[frontend]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Frontend {
    pub name: String,
    pub binds: Vec<Bind>,
    /// Requests whose path equals this answer 200 from tern itself, touching no backend.
    pub monitor_uri: Option<String>,
    /// Name of the backend that receives every request (validated to exist).
    pub default_backend: String,
    pub timeouts: FrontendTimeouts,
    /// Per-frontend connection limit; `None` means only the global limit applies.
    pub maxconn: Option<usize>,
    /// Append the client address to `X-Forwarded-For`.
    pub x_forwarded_for: bool,
    /// Set `X-Forwarded-Proto` to `https` or `http` according to the bind.
    pub x_forwarded_proto: bool,
    pub limits: RequestLimits,
}

/// One listening address of a frontend.
#[derive(Debug, Clone, PartialEq)]
pub struct Bind {
    pub address: SocketAddr,
    /// TLS settings for this bind; `None` means plain HTTP.
    pub tls: Option<TlsSettings>,
}

/// TLS termination settings of a bind.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsSettings {
    /// Certificates offered on this bind. The first is the default for unknown or absent SNI.
    pub certs: Vec<CertSource>,
}

/// Where one certificate chain and its private key come from. Paths are absolute (resolved
/// against the configuration file's directory during validation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertSource {
    /// One PEM file holding the chain (leaf first) and the private key.
    Combined(PathBuf),
    /// The chain and the key in two PEM files.
    Split { cert: PathBuf, key: PathBuf },
}

/// Client-side timeouts of a frontend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontendTimeouts {
    /// Inactivity on the client side while a stream is in progress (reading its body, or the
    /// client not accepting response bytes).
    pub client: Duration,
    /// Time allowed to receive a whole request head, from the start of the wait (accept for the
    /// first request, first byte for later ones). Expiry answers 408 and closes.
    pub http_request: Duration,
    /// Idle time allowed between two requests on a keep-alive connection. Expiry closes silently.
    pub keep_alive: Duration,
    /// Time allowed for the TLS handshake.
    pub handshake: Duration,
}

/// Limits on what a client may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLimits {
    /// Largest request head (request line + headers) in bytes; beyond it tern answers 431.
    pub max_head_size: usize,
    /// Largest number of header fields; beyond it tern answers 431.
    pub max_headers: usize,
}

/// A backend: a pool of servers and the algorithm spreading requests over them (`[[backend]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    pub name: String,
    pub balance: Balance,
    pub timeouts: BackendTimeouts,
    pub servers: Vec<Server>,
    /// Idle keep-alive connections kept per server per worker.
    pub pool: PoolSettings,
}

/// Load-balancing algorithm of a backend (`balance`, with `hash_type`, `hash_balance_factor`
/// and `ewma_decay`). The balancing core (tern-balance) implements each one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Balance {
    /// Smooth weighted round-robin, weights changeable at runtime (`roundrobin`).
    RoundRobin,
    /// Table-driven weighted round-robin (`static-rr`).
    StaticRoundRobin,
    /// Fewest requests in flight per unit of weight (`leastconn`).
    LeastConn,
    /// The first server in configuration order (`first`).
    First,
    /// A hash of a request key (`source`, `uri`, `hdr(NAME)`, `url_param(NAME)`).
    Hash { key: HashKey, hash_type: HashType },
    /// The least loaded of `draws` weighted random servers (`random`, `random(N)`).
    Random { draws: u32 },
    /// Peak-EWMA of response time × requests in flight, best of two (`ewma`).
    Ewma { decay: Duration },
}

/// What a hashing `balance` hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashKey {
    /// The client's IP address (`source`).
    Source,
    /// The request path (`uri`), with the query string when `whole` (`uri whole`).
    Uri { whole: bool },
    /// The value of a query-string parameter (`url_param(NAME)`).
    UrlParam(String),
    /// The value of a request header (`hdr(NAME)`), name in lower case.
    Header(String),
}

/// How a hash maps to a server (`hash_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashType {
    /// Modulo a weighted table: exact shares, but any change moves most keys (`map-based`).
    MapBased,
    /// A hash ring: a change moves about 1/N of the keys (`consistent`). `balance_factor` is 0
    /// (no bound) or a percentage above 100 (`hash_balance_factor`).
    Consistent { balance_factor: u32 },
}

/// Server-side timeouts of a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackendTimeouts {
    /// Time allowed to establish the TCP connection to a server.
    pub connect: Duration,
    /// Inactivity on the server side: waiting for the response head, or between body chunks.
    pub server: Duration,
}

/// Idle connection pool settings of a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Most idle connections kept per server in each worker; 0 disables reuse.
    pub max_idle_per_server: usize,
    /// An idle pooled connection older than this is closed instead of reused.
    pub idle_timeout: Duration,
}

/// One upstream server of a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    /// Resolved once at load time.
    pub address: SocketAddr,
    /// Relative share of requests; 0 means drained (receives no new requests).
    pub weight: u32,
    /// Used only when no non-backup server of the backend is usable.
    pub backup: bool,
}
