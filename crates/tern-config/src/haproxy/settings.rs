//! The settings of a `defaults`, `frontend`, `backend` or `listen` section, as read.
//!
//! This is HAProxy's own model: a proxy starts as a copy of its defaults section's settings
//! (`Clone`) and each of its lines changes them, later lines winning. Every value remembers the
//! line it came from ([`Src`]), so that the TOML written for it can be mapped back to that line.
//! Values that are complete once read (a `bind`, an ACL, a rule) are kept as TOML text; the
//! others stay structured until `build.rs` knows the whole proxy (a server's check depends on
//! `option httpchk`, which may come after it).

use crate::model::ConnectionMode;

/// A value and the `.cfg` line it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Src<T> {
    pub v: T,
    pub line: usize,
}

impl<T> Src<T> {
    pub fn new(v: T, line: usize) -> Self {
        Self { v, line }
    }
}

/// `timeout ...` values in milliseconds.
#[derive(Debug, Clone, Default)]
pub(crate) struct Timeouts {
    pub client: Option<Src<u64>>,
    pub client_hs: Option<Src<u64>>,
    pub http_request: Option<Src<u64>>,
    pub http_keep_alive: Option<Src<u64>>,
    pub server: Option<Src<u64>>,
    pub connect: Option<Src<u64>>,
    pub queue: Option<Src<u64>>,
    pub check: Option<Src<u64>>,
    pub tunnel: Option<Src<u64>>,
    pub client_fin: Option<Src<u64>>,
    pub server_fin: Option<Src<u64>>,
    pub tarpit: Option<Src<u64>>,
}

/// `option httpchk` and `http-check send`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpChk {
    pub method: String,
    pub path: String,
    pub host: Option<String>,
}

/// `http-check send`: what it sets replaces the request of `option httpchk`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CheckSend {
    pub method: Option<String>,
    pub path: Option<String>,
    pub host: Option<String>,
}

/// `http-check expect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Formatted TOML: a code, a class or a list.
    Status(String),
    Body(String),
}

/// `cookie NAME insert|rewrite|prefix ...`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cookie {
    pub name: String,
    /// `rewrite` or `prefix`; `None` for `insert`.
    pub mode: Option<&'static str>,
    pub indirect: bool,
    pub nocache: bool,
    pub postonly: bool,
    pub httponly: bool,
    pub secure: bool,
    pub domain: Option<String>,
}

/// `stick-table type ip|ipv6|string|integer size N [expire T] [store ...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StickTableLine {
    /// tern's table type (`ip`, `ipv6`, `string`, `integer`).
    pub key: String,
    pub size: u64,
    pub expire: Option<u64>,
    /// The `store` items, one counter each (`http_req_rate(10s)`); empty for a table of
    /// source stickiness only.
    pub store: Vec<String>,
    /// `peers NAME`: the peers section the entries are shared with.
    pub peers: Option<String>,
}

/// `stats ...` in a proxy.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stats {
    /// The first `stats` line (any sub-keyword).
    pub line: Option<usize>,
    pub uri: Option<Src<String>>,
    pub refresh: Option<Src<u64>>,
    /// `stats auth USER:PASS`, one per line.
    pub auth: Vec<Src<String>>,
    pub realm: Option<Src<String>>,
}

/// Server options, shared by `server` and `default-server` (a server starts from a copy of the
/// `default-server` options in force when it is declared).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServerParams {
    pub check: Option<bool>,
    pub inter: Option<u64>,
    pub fastinter: Option<u64>,
    pub downinter: Option<u64>,
    pub rise: Option<u64>,
    pub fall: Option<u64>,
    pub port: Option<u64>,
    pub addr: Option<String>,
    pub check_sni: Option<String>,
    /// `check-proto h1|h2`: the HTTP version of the server's checks.
    pub check_proto: Option<String>,
    pub check_ssl: Option<bool>,
    pub weight: Option<u64>,
    pub maxconn: Option<u64>,
    pub maxqueue: Option<u64>,
    pub backup: Option<bool>,
    pub disabled: Option<bool>,
    pub slowstart: Option<u64>,
    pub cookie: Option<String>,
    pub ssl: Option<bool>,
    pub verify_none: Option<bool>,
    pub ca_file: Option<String>,
    /// tern's `sni`: a name, or `host` for the request's Host.
    pub sni: Option<String>,
    pub alpn: Option<Vec<String>>,
    pub crt: Option<String>,
    pub ssl_reuse: Option<bool>,
    pub proxy_protocol: Option<&'static str>,
    /// `proxy-v2-options crc32c`, with the line that set it.
    pub proxy_v2_crc32c: Option<usize>,
    /// `set-proxy-v2-tlv-fmt(<id>) <fmt>`: type, format and line, in order.
    pub proxy_v2_tlvs: Vec<(u8, String, usize)>,
    /// `proto h1|h2`: the HTTP version spoken to the server.
    pub proto: Option<String>,
    /// `ws auto|h1|h2`: the HTTP version of WebSockets to the server.
    pub ws: Option<String>,
    pub observe: Option<String>,
    pub error_limit: Option<u64>,
    pub on_error: Option<String>,
    /// `resolvers NAME`: the address is found by DNS.
    pub resolvers: Option<String>,
    /// `resolve-prefer ipv4|ipv6`.
    pub resolve_prefer: Option<String>,
    /// `init-addr METHODS`, split at commas, with its line.
    pub init_addr: Option<Src<Vec<String>>>,
}

/// A `server` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerCfg {
    pub name: String,
    /// `host:port` as tern writes it.
    pub address: String,
    pub params: ServerParams,
    pub line: usize,
    /// `server-template`: the slots as written (`10` or `1-10`); the name is their prefix.
    pub count: Option<String>,
}

/// Everything a proxy section says.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProxyCfg {
    pub mode: Option<Src<String>>,
    /// TOML items of `bind`, one per address.
    pub binds: Vec<Src<String>>,
    /// The address of the first bind, as tern writes it (for a stats listener).
    pub first_bind_address: Option<String>,
    /// Whether any bind has TLS (a stats listener cannot).
    pub tls_binds: bool,
    /// `proto h2` on a plain bind: the frontend speaks h2c on its plain binds.
    pub h2c: Option<Src<bool>>,
    /// `option h2-workaround-bogus-websocket-clients` (false) or `no option ...` (true): whether
    /// HTTP/2 connections announce the extended CONNECT for WebSockets (`http2.websocket`).
    pub h2_websocket: Option<Src<bool>>,
    pub servers: Vec<ServerCfg>,
    pub default_server: ServerParams,
    pub timeouts: Timeouts,
    pub maxconn: Option<Src<u64>>,
    pub monitor_uri: Option<Src<String>>,
    pub default_backend: Option<Src<String>>,
    /// TOML inline tables of `use_backend`.
    pub use_backend: Vec<Src<String>>,
    /// The backends `use_backend` names.
    pub route_targets: Vec<String>,
    /// (name, expression) in file order.
    pub acls: Vec<Src<(String, String)>>,
    /// TOML inline tables of `http_request` / `http_response`.
    pub http_request: Vec<Src<String>>,
    pub http_response: Vec<Src<String>>,
    /// TOML inline tables of `redirect` lines, run after `http_request` (as in HAProxy).
    pub redirects: Vec<Src<String>>,
    /// `errorfile` / `http-error`: (status, TOML inline table of the page), in file order.
    pub error_pages: Vec<Src<(u16, String)>>,
    /// `tcp-request inspect-delay`, in milliseconds.
    pub inspect_delay: Option<Src<u64>>,
    /// TOML inline tables of `tcp-request content accept|reject`.
    pub tcp_content: Vec<Src<String>>,
    /// TOML inline tables of `tcp-request connection accept|reject|silent-drop|track-sc*`.
    pub tcp_connection: Vec<Src<String>>,
    /// `rate-limit sessions N`.
    pub rate_limit: Option<Src<u64>>,
    /// The sources of `tcp-request connection expect-proxy layer4 if { src ... }`.
    pub expect_proxy_from: Vec<Src<String>>,
    /// tern's `balance` value.
    pub balance: Option<Src<String>>,
    pub hash_type: Option<Src<String>>,
    pub hash_balance_factor: Option<Src<u64>>,
    pub retries: Option<Src<u64>>,
    pub redispatch: Option<Src<bool>>,
    pub forwardfor: Option<Src<bool>>,
    /// `option http-keep-alive|http-server-close|httpclose`, the last one wins (see
    /// `options::connection_mode` for `no option`).
    pub conn_mode: Option<Src<ConnectionMode>>,
    /// `http-reuse never`.
    pub reuse_never: Option<Src<bool>>,
    pub httpchk: Option<Src<HttpChk>>,
    pub check_send: Option<Src<CheckSend>>,
    pub expect: Option<Src<Expect>>,
    pub cookie: Option<Src<Cookie>>,
    pub stick_table: Option<Src<StickTableLine>>,
    pub stick_on: Option<Src<()>>,
    pub stats: Stats,
    pub allbackups: Option<Src<bool>>,
    /// `unique-id-format`, `unique-id-header`, `log-format` (cleared by a later `option
    /// httplog|httpslog|tcplog`).
    pub unique_id_format: Option<Src<String>>,
    pub unique_id_header: Option<Src<String>>,
    pub log_format: Option<Src<String>>,
    /// TOML inline tables of `capture request|response header`.
    pub capture_request: Vec<Src<String>>,
    pub capture_response: Vec<Src<String>>,
    pub compression: super::compression::CompressionCfg,
}
