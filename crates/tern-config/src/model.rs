//! The validated, typed configuration model.
//!
//! Everything downstream of the parser (TLS loading, the data path, `tern check`) works on these
//! types only. They are produced by [`crate::parse`] from the raw TOML structs after validation, so
//! code holding a [`Config`] may rely on its invariants: names are unique, every backend a
//! frontend names (`default_backend`, `use_backend`) exists, every backend has at least one
//! server, durations are non-zero where a zero would mean "hang forever", and addresses are
//! resolved.
//!
//! Defaults are chosen to match what a HAProxy operator expects (see docs/configuration.md).

use std::net::SocketAddr;
use std::time::Duration;

mod access_log;
mod client_auth;
pub(crate) mod compression;
mod condition;
mod connection;
mod control;
mod counters;
mod error_pages;
mod http_rules;
mod mode;
mod peers;
mod proxy_v2;
mod request_log;
mod resolvers;
mod rewrite;
mod tcp_request;
mod tls;
mod tls_engine;
mod tls_names;
mod userlist;

pub use access_log::{AccessLogSettings, LogFormat, LogTarget, SyslogFraming, SyslogSettings};
pub use client_auth::{ClientAuth, ClientVerify};
pub use compression::{Coding, Compression};
pub use condition::{
    Acl, AclTest, Condition, Facts, Fetch, IntRange, IpNet, Matcher, Regex, Term, TextMatch,
    UserlistRef,
};
pub use connection::ConnectionMode;
pub use control::{ControlAuth, ControlSettings, ControlToken};
pub use counters::{
    Counter, CounterFetch, CounterOp, CounterSource, CounterTable, Store, TableKey, TableRef,
    Track, MAX_STRING_KEY, TRACK_SLOTS,
};
pub use error_pages::{ErrorPage, ErrorPages, MAX_ERROR_PAGE};
pub use http_rules::{
    HttpAction, HttpRule, LinePart, NamePattern, Piece, Redirect, RedirectTo, ValueFormat,
    DENY_STATUSES, REDIRECT_CODES,
};
pub use mode::ProxyMode;
pub use peers::{Peer, PeersSection};
pub use proxy_v2::{ProxyV2, ProxyV2Tlv};
pub use request_log::{
    Capture, LogFlags, LogPiece, LogTemplate, LogVar, RequestLog, CAPTURES_MAX, CAPTURE_MAX,
    LOG_VARIABLES,
};
pub use resolvers::{Family, Hold, Resolvers, ServerResolve};
pub use tcp_request::{ConnectionAction, ConnectionRule, TcpRequest, TcpRule};
pub use tls::*;
pub use tls_engine::{banned_cipher, OpensslPolicy, OsslVersion, TlsEngine, CIPHER_EXCLUSIONS};
pub use userlist::{CryptScheme, Password, User, Userlist};

mod backend_tls;

pub use backend_tls::{ServerSni, ServerTls, ServerVerify};

/// A whole, validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub global: Global,
    pub frontends: Vec<Frontend>,
    pub backends: Vec<Backend>,
    /// The access log (`[access_log]`); `None`: requests are not logged.
    pub access_log: Option<AccessLogSettings>,
    /// The control API (`[control]`).
    pub control: ControlSettings,
    /// Users and groups for basic authentication (`[[userlist]]`).
    pub userlists: Vec<Userlist>,
    /// Counter tables for rate limits (`[[table]]`), shared by every worker.
    pub tables: Vec<CounterTable>,
    /// DNS resolvers for servers found by name (`[[resolvers]]`).
    pub resolvers: Vec<Resolvers>,
    /// Peers sections (`[[peers]]`): the nodes stick tables are shared with.
    pub peers: Vec<PeersSection>,
}

impl Config {
    /// Index of the backend named `name`, if any.
    pub fn backend_index(&self, name: &str) -> Option<usize> {
        self.backends.iter().position(|b| b.name == name)
    }

    /// Index of the userlist named `name`, if any.
    pub fn userlist_index(&self, name: &str) -> Option<usize> {
        self.userlists.iter().position(|u| u.name == name)
    }

    /// Index of the counter table named `name`, if any.
    pub fn table_index(&self, name: &str) -> Option<usize> {
        self.tables.iter().position(|t| t.name == name)
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
    /// How long an old generation (after a reload or upgrade) may drain before its remaining
    /// connections are closed.
    pub hard_stop_after: Duration,
    /// Listen backlog passed to `listen(2)` for every bind.
    pub backlog: u32,
    /// Cap on full TLS handshakes per second for the whole process (HAProxy's `maxsslrate`),
    /// split evenly over the workers. `None`: no cap.
    pub max_tls_handshake_rate: Option<u32>,
    /// Cap on full TLS handshakes per second from one source address (an IPv6 source is its
    /// /64), split evenly over the workers. `None`: no per-source cap.
    pub max_tls_handshakes_per_source: Option<u32>,
    /// Task profiling (`show profiling`) on from the start; the runtime API switches it.
    pub profiling: bool,
    /// Run the CPU-heavy step of TLS handshakes on a low-priority thread next to each worker,
    /// so requests on established connections never wait behind a handshake.
    pub handshake_offload: bool,
    /// Most connections accepted per second over all frontends and workers (HAProxy's
    /// `maxconnrate`); beyond it the listeners pause and new connections wait in the kernel's
    /// backlog. `None`: no cap.
    pub max_conn_rate: Option<u32>,
    /// Most sessions per second (HAProxy's `maxsessrate`): connections that passed their
    /// frontend's `tcp_request.connection` rules. `None`: no cap.
    pub max_sess_rate: Option<u32>,
    /// Handshakes of one worker wait for each other to compute their X25519 key exchanges
    /// eight at a time on AVX-512 IFMA (`crypto_batch`; design note 0004).
    pub crypto_batch: CryptoBatch,
}

/// `global.crypto_batch`: batched key exchanges and ECDSA nonces in the TLS handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CryptoBatch {
    pub enabled: bool,
    /// Most handshakes in one batch (2 to 8): a full batch runs at once.
    pub size: usize,
    /// Longest a handshake waits for its batch to fill while others keep arriving; a batch
    /// also runs as soon as the worker has nothing else ready.
    pub deadline: Duration,
}

/// On by default: it measured 1.31x ECDSA P-256 handshakes per CPU-second, RSA unchanged, no
/// latency cost at one connection at a time (design note 0004); CPUs without IFMA fall back.
impl Default for CryptoBatch {
    fn default() -> Self {
        Self {
            enabled: true,
            size: 8,
            deadline: Duration::from_micros(50),
        }
    }
}

/// A frontend: what clients connect to (`[[frontend]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Frontend {
    pub name: String,
    /// What the frontend's connections carry: HTTP requests, or a byte stream relayed whole to
    /// one server (`mode`). Every backend it routes to is in the same mode.
    pub mode: ProxyMode,
    pub binds: Vec<Bind>,
    /// Requests whose path equals this answer 200 from tern itself, touching no backend.
    pub monitor_uri: Option<String>,
    /// Name of the backend that receives every request no `use_backend` rule takes
    /// (validated to exist). `None` only when `use_backend` has rules: a request none takes is
    /// answered 503, as HAProxy does.
    pub default_backend: Option<String>,
    /// Content switching: the first rule whose condition holds chooses the backend
    /// (`use_backend`, HAProxy's `use_backend NAME if COND`).
    pub use_backend: Vec<Route>,
    /// Rules on requests, run before the backend is chosen (`http_request`).
    pub http_request: Vec<HttpRule>,
    /// Rules on responses from servers, run after the backend's (`http_response`).
    pub http_response: Vec<HttpRule>,
    /// Pages that replace tern's own answers (`error_pages`, HAProxy's `errorfile`).
    pub error_pages: ErrorPages,
    /// Response compression (`compression`); a backend's table takes precedence.
    pub compression: Option<Compression>,
    /// What a TCP frontend reads of a plain connection before routing it (`tcp_request`):
    /// the ClientHello of a TLS passthrough, and the rules that accept or reject it.
    pub tcp_request: TcpRequest,
    pub timeouts: FrontendTimeouts,
    /// Per-frontend connection limit; `None` means only the global limit applies.
    pub maxconn: Option<usize>,
    /// Most new sessions per second on this frontend (HAProxy's `rate-limit sessions`);
    /// beyond it its listeners pause. `None`: no cap.
    pub rate_limit_sessions: Option<u32>,
    /// Append the client address to `X-Forwarded-For`.
    pub x_forwarded_for: bool,
    /// Set `X-Forwarded-Proto` to `https` or `http` according to the bind.
    pub x_forwarded_proto: bool,
    /// Pass the client certificate's verification result, subject and SHA-256 fingerprint to
    /// servers in `X-SSL-Client-*` headers, and drop those a client sent
    /// (`client_cert_headers`).
    pub client_cert_headers: bool,
    pub limits: RequestLimits,
    /// What closes after each response: nothing, the server connections, or both sides
    /// (`connection_mode`, HAProxy's `option http-keep-alive|http-server-close|httpclose`).
    pub connection_mode: ConnectionMode,
    /// HTTP/2 on this frontend's connections (`http2`): h2c on plain binds, and the settings
    /// and limits of every HTTP/2 connection (TLS binds speak it when ALPN chooses `h2`).
    pub http2: Http2Settings,
    /// Request ids, captured fields and the log line's layout (`unique_id_format`,
    /// `capture_*_headers`, `log_format`).
    pub request_log: RequestLog,
}

/// A frontend's HTTP/2 settings (`http2`); see docs/configuration.md for the defaults' reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Http2Settings {
    /// Plain binds speak HTTP/2 with prior knowledge (h2c) instead of HTTP/1.1 (HAProxy's
    /// `proto h2` on a bind).
    pub cleartext: bool,
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once.
    pub max_concurrent_streams: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE: what a client may send on a stream before tern reads it.
    pub initial_window_size: u32,
    /// The connection's receive window: what a client may send on all streams together.
    pub connection_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE: the largest frame payload tern accepts.
    pub max_frame_size: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE: the largest decoded header list (RFC 9113 §6.5.2 sizes).
    pub max_header_list_size: u32,
    /// Streams reset by the client kept in memory at once (a longer list is a protocol error).
    pub max_concurrent_reset_streams: usize,
    /// Streams reset by the client before tern accepted them (rapid reset, CVE-2023-44487):
    /// beyond this, GOAWAY with ENHANCE_YOUR_CALM.
    pub max_pending_accept_reset_streams: usize,
    /// Streams tern had to reset for the client's errors: beyond this, GOAWAY.
    pub max_local_error_reset_streams: usize,
    /// Streams the client reset after tern took them up and before their response ended, per
    /// connection: beyond this, GOAWAY with ENHANCE_YOUR_CALM. Each such stream may have cost a
    /// server request; this bounds what one connection can make tern do (rapid reset).
    pub max_client_resets: usize,
    /// Announce SETTINGS_ENABLE_CONNECT_PROTOCOL and carry WebSockets over streams (RFC 8441
    /// extended CONNECT) to HTTP/1.1 WebSocket servers.
    pub websocket: bool,
    /// Control frames (SETTINGS, PING, PRIORITY, RST_STREAM, WINDOW_UPDATE, GOAWAY, unknown
    /// types) a client may send per connection beyond one per request it sent and two per DATA
    /// frame tern sent it: beyond this, GOAWAY with ENHANCE_YOUR_CALM (floods, CVE-2019-9512
    /// and -9515).
    pub max_control_frames: usize,
}

impl Default for Http2Settings {
    fn default() -> Self {
        Http2Settings {
            cleartext: false,
            max_concurrent_streams: 100,
            initial_window_size: 65_535,
            connection_window_size: 1 << 20,
            max_frame_size: 16_384,
            max_header_list_size: 64 * 1024,
            max_concurrent_reset_streams: 10,
            max_pending_accept_reset_streams: 20,
            max_local_error_reset_streams: 1024,
            max_client_resets: 1000,
            websocket: true,
            max_control_frames: 1000,
        }
    }
}

/// One `use_backend` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// The backend chosen when the condition holds (validated to exist).
    pub backend: String,
    pub condition: Condition,
}

/// One listening address of a frontend.
#[derive(Debug, Clone, PartialEq)]
pub struct Bind {
    pub address: SocketAddr,
    /// TLS settings for this bind; `None` means plain HTTP.
    pub tls: Option<TlsSettings>,
    /// Whether each connection starts with a PROXY protocol header (v1 or v2) carrying the
    /// client's addresses (HAProxy's `accept-proxy`); one that does not is closed.
    pub accept_proxy: bool,
    /// With `accept_proxy`: when not empty, only connections from these sources must start
    /// with the header, and the others must not (they are read as they come): HAProxy's
    /// `tcp-request connection expect-proxy layer4 if { src ... }`.
    pub accept_proxy_from: Vec<IpNet>,
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
    /// Inactivity on the client side of a TCP session or tunnel once the direction towards the
    /// client is closed (the server finished): HAProxy's `timeout client-fin`. `None`: the
    /// timeout the client side had before.
    pub client_fin: Option<Duration>,
    /// How long a `tarpit` rule holds a request before answering (HAProxy's `timeout
    /// tarpit`; default: 5 s, tern's default `connect` timeout, as HAProxy falls back to
    /// `timeout connect`).
    pub tarpit: Duration,
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
    /// HTTP requests, or TCP connections relayed whole (`mode`); only frontends of the same
    /// mode route here.
    pub mode: ProxyMode,
    pub balance: Balance,
    pub timeouts: BackendTimeouts,
    pub servers: Vec<Server>,
    /// Idle keep-alive connections kept per server per worker.
    pub pool: PoolSettings,
    /// Requests waiting for a server slot when every usable server is at its `maxconn`.
    pub queue: QueueSettings,
    /// Connection attempts after the first one fails, before the client gets 503 (`retries`).
    pub retries: u32,
    /// Whether each retry goes to another server than the ones that failed (`redispatch`),
    /// rather than to the same one. (A persistent request whose server is down always goes to
    /// another server.)
    pub redispatch: bool,
    /// Cookie persistence (`cookie`); `None` when off.
    pub cookie: Option<CookiePersistence>,
    /// Source-address stickiness (`stick`); `None` when off.
    pub stick: Option<Stickiness>,
    /// Passive health checks on live traffic (`observe`); `None` when off.
    pub observe: Option<Observe>,
    /// Time over which a server coming back up ramps from a small weight to its own
    /// (`slowstart`); `None` when off.
    pub slowstart: Option<Duration>,
    /// Rules on requests routed here, run after the frontend's (`http_request`).
    pub http_request: Vec<HttpRule>,
    /// Rules on responses of its servers, run before the frontend's (`http_response`).
    pub http_response: Vec<HttpRule>,
    /// Pages that replace tern's 500, 502, 503 and 504 answers to requests routed here
    /// (`error_pages`).
    pub error_pages: ErrorPages,
    /// Response compression (`compression`), used in place of the frontend's.
    pub compression: Option<Compression>,
    /// `KeepAlive` or `ServerClose`: whether server connections close after each response
    /// (`connection_mode`, HAProxy's `option http-server-close`).
    pub connection_mode: ConnectionMode,
}

/// The backend queue (`queue = { max, timeout }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    /// Most requests waiting at once; beyond it a request is answered 503 at once. `None`:
    /// no limit other than `timeout`.
    pub max: Option<usize>,
    /// Longest wait in the queue before the answer is 503 (default: `timeouts.connect`).
    pub timeout: Duration,
}

/// Cookie persistence (`cookie = { name, mode, ... }`), like HAProxy's
/// `cookie NAME insert|rewrite|prefix [indirect] [nocache] [postonly] [httponly] [secure]
/// [domain D]`. The attribute options (`nocache` to `max_age`) act on the cookie tern inserts,
/// so only in insert mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookiePersistence {
    /// Cookie name (an HTTP token).
    pub name: String,
    /// Who sets the cookie and how tern reads it (`mode`).
    pub mode: CookieMode,
    /// Strip the cookie from requests before they reach the server, and do not set it again on
    /// a client that already holds a valid one (the server never sees it).
    pub indirect: bool,
    /// Add `Cache-Control: private` to responses that set the cookie, so that a shared cache
    /// does not hand one client's cookie to another.
    pub nocache: bool,
    /// Set the cookie only on responses to POST requests.
    pub postonly: bool,
    /// `HttpOnly` attribute.
    pub httponly: bool,
    /// `Secure` attribute.
    pub secure: bool,
    /// `Domain` attribute.
    pub domain: Option<String>,
    /// `Max-Age` attribute; `None` makes a session cookie.
    pub max_age: Option<Duration>,
    /// Cookie value of each server, in server order: from the `values` map, else the server name.
    pub values: Vec<String>,
}

/// Where a persistence cookie comes from (`cookie.mode`), as HAProxy's cookie modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CookieMode {
    /// tern sets a cookie of its own naming the server (`insert`).
    #[default]
    Insert,
    /// The server sets the cookie; tern replaces its value with the server's cookie value, and
    /// requests carrying that value go back to the server (`rewrite`).
    Rewrite,
    /// The server sets the cookie (an application cookie); tern puts `<server value>~` before
    /// its value, routes requests by that prefix and removes it before they reach the server
    /// (`prefix`).
    Prefix,
}

/// Source-address stickiness (`stick = { on = "source", size, expire }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stickiness {
    /// Most client addresses remembered; the least recently seen is forgotten first.
    pub size: usize,
    /// An entry not used for this long is forgotten.
    pub expire: Duration,
    /// The peers section (index in `Config::peers`) the entries are shared with.
    pub peers: Option<usize>,
}

/// Passive health checking (`observe = { on, error_limit, on_error }`), like HAProxy's
/// `observe layer4|layer7`, `error-limit` and `on-error`. Needs active checks, which bring a
/// server back up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observe {
    /// What counts as an error.
    pub on: ObserveOn,
    /// Consecutive errors that trigger `on_error`.
    pub error_limit: u32,
    pub on_error: OnError,
}

/// What passive checks count as an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObserveOn {
    /// Connection failures (connect refused or timed out, reset before a response) (`layer4`).
    Layer4,
    /// The same plus 5xx responses and invalid responses (`layer7`).
    Layer7,
}

/// What reaching `error_limit` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Switch checks to the fast interval (`fastinter`).
    FastInterval,
    /// Count as one failed active check (`fail-check`).
    FailCheck,
    /// Leave the server one failed check away from down (`sudden-death`).
    SuddenDeath,
    /// Mark the server down at once (`mark-down`).
    MarkDown,
}

/// An active health check of one server (`check = { ... }`, on the backend for every server,
/// overridable per server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub kind: CheckKind,
    /// Time between checks of a server in a stable state (`interval`).
    pub interval: Duration,
    /// Time between checks while a server is in transition, i.e. between its first failure
    /// and `fall`, or its first success and `rise` (`fast_interval`, default `interval`).
    pub fast_interval: Duration,
    /// Time between checks of a server that is down (`down_interval`, default `interval`).
    pub down_interval: Duration,
    /// Time allowed for one check (connect, handshake and response) (`timeout`, default
    /// `interval`, at most `interval`).
    pub timeout: Duration,
    /// Consecutive successes that bring a down server up.
    pub rise: u32,
    /// Consecutive failures that take an up server down.
    pub fall: u32,
    /// Where checks connect: the server's address with its port replaced by `port` when set,
    /// or the `address` of the server's own `check` table.
    pub address: SocketAddr,
}

/// What a check does once connected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckKind {
    /// A TCP connect is enough (`type = "tcp"`).
    Tcp,
    /// An HTTP request in plain text (`type = "http"`).
    Http(HttpCheck),
    /// A TLS handshake (`type = "tls"`), followed by an HTTP request with `type = "https"`. The
    /// server's certificate is not verified: checks test liveness, not identity.
    Tls {
        /// Server name sent in the handshake; `None` sends none.
        sni: Option<String>,
        /// HTTP request sent over the TLS connection, if any.
        http: Option<HttpCheck>,
    },
}

/// The HTTP part of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpCheck {
    /// Request method (`method`, default `GET`).
    pub method: String,
    /// Request target (`path`, default `/`).
    pub path: String,
    /// `Host` header (`host`; default: the check address).
    pub host: Option<String>,
    /// Statuses that pass (`expect_status`: one code, a list, or a class like `"2xx"`; default
    /// 2xx and 3xx).
    pub expect_status: Vec<StatusRange>,
    /// A substring the response body must contain (`expect_body`); only the first 16 KiB of
    /// the body are searched.
    pub expect_body: Option<String>,
    /// The check speaks HTTP/2 (`proto = "h2"`, HAProxy `check-proto h2`): h2c over TCP, ALPN
    /// `h2` over TLS. Default: the server's `proto`, HTTP/1.1 for `proto = "h1"` or a
    /// negotiated one.
    pub h2: bool,
}

/// An inclusive range of HTTP status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusRange {
    pub low: u16,
    pub high: u16,
}

impl StatusRange {
    /// Whether `status` is in the range.
    pub fn contains(self, status: u16) -> bool {
        (self.low..=self.high).contains(&status)
    }
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
    Hash {
        key: BalanceKey,
        hash_type: BalanceHashType,
    },
    /// The least loaded of `draws` weighted random servers (`random`, `random(N)`).
    Random { draws: u32 },
    /// Peak-EWMA of response time × requests in flight, best of two (`ewma`).
    Ewma { decay: Duration },
}

/// What a hashing `balance` hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BalanceKey {
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
pub enum BalanceHashType {
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
    /// Inactivity of a tunnel (a WebSocket after its `101`), in both directions at once, or of
    /// one direction whose bytes the receiver does not take. `None`: the client side gets the
    /// frontend's `client` timeout and the server side `server`, as HAProxy does without
    /// `timeout tunnel`.
    pub tunnel: Option<Duration>,
    /// Inactivity on the server side of a TCP session or tunnel once the direction towards the
    /// server is closed (the client finished): HAProxy's `timeout server-fin`. `None`: the
    /// timeout the server side had before.
    pub server_fin: Option<Duration>,
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
    /// Most requests in flight on this server over all workers; `None` means no limit. Beyond
    /// it requests wait in the backend queue.
    pub maxconn: Option<u32>,
    /// Active health check; `None` means the server is always considered up.
    pub check: Option<Check>,
    /// TLS to the server (`tls`); `None` means plain TCP.
    pub tls: Option<ServerTls>,
    /// Starts in maintenance, as `disable server` leaves it (`disabled`, HAProxy's `disabled`).
    pub disabled: bool,
    /// A PROXY protocol header at the start of every connection (`proxy_protocol`); `None`
    /// sends none.
    pub proxy_protocol: Option<ProxyProtocol>,
    /// What a v2 header carries beyond addresses and TLS (`proxy_v2_*`); default without v2.
    pub proxy_v2: ProxyV2,
    /// The HTTP version spoken to the server (`proto`, and `h2` in the TLS `alpn`).
    pub proto: ServerProto,
    /// Found by DNS (`resolvers`); `None`: `address` is fixed.
    pub resolve: Option<ServerResolve>,
    /// The HTTP version WebSockets to the server go over (`ws`, HAProxy's `ws`).
    pub ws: WsProto,
}

impl Server {
    /// The HTTP version a WebSocket to this server goes over: HTTP/1.1 (`Upgrade`), HTTP/2
    /// (RFC 8441 extended CONNECT), or with [`WsProto::Auto`] the server's own protocol.
    pub fn websocket_proto(&self) -> ServerProto {
        match self.ws {
            WsProto::Auto => self.proto,
            WsProto::H1 => ServerProto::Http1,
            WsProto::H2 => ServerProto::Http2,
        }
    }
}

/// `ws` of a server (HAProxy's `ws auto|h1|h2`): the protocol of its WebSockets, apart from
/// its requests' `proto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WsProto {
    /// As the server's other requests (the default).
    #[default]
    Auto,
    /// HTTP/1.1 `Upgrade`, on a connection of its own, whatever `proto` says (an HTTP/2 server
    /// without RFC 8441 support).
    H1,
    /// HTTP/2 extended CONNECT (RFC 8441), on the server's HTTP/2 connections, whatever
    /// `proto` says.
    H2,
}

/// The HTTP version tern speaks to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerProto {
    /// HTTP/1.1, pooled keep-alive connections (the default).
    #[default]
    Http1,
    /// HTTP/2 on every connection (`proto = "h2"`, HAProxy's `proto h2`): with prior knowledge
    /// (h2c) to a plain server, over TLS with ALPN `h2` offered otherwise. Requests share
    /// connections as streams, up to the server's stream limit.
    Http2,
    /// HTTP/2 or HTTP/1.1, as the TLS server picks from the `alpn` offer (which lists `h2`).
    Negotiated,
}

/// The PROXY protocol version a server receives (`proxy_protocol`, HAProxy's `send-proxy` and
/// `send-proxy-v2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyProtocol {
    /// The text header: `PROXY TCP4 src dst sport dport\r\n`.
    V1,
    /// The binary header.
    V2,
}
