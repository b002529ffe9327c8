//! Counters: what happened, per frontend, backend and server.
//!
//! Each worker (and the health checker) owns its own block of atomics (allocated separately),
//! and only that thread increments it, with relaxed ordering: the per-request path never writes a cache line another
//! worker writes. Readers (shutdown summary, tests, later the runtime API) sum the blocks of all
//! workers into a plain [`StatsSnapshot`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tern_config::Config;

use crate::exchange::servers::{BackendState, ServerState};
use crate::tls::reload::ReloadCounters;
pub use crate::tls::reload::ReloadSnapshot;
pub use crate::tls::stats::{KindSnapshot, TlsCounters, TlsSnapshot};

/// Defines a struct of atomic counters and its plain snapshot twin.
macro_rules! counters {
    ($(#[$doc:meta])* $name:ident / $snap:ident { $($(#[$fdoc:meta])* $field:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Default)]
        pub struct $name { $($(#[$fdoc])* pub $field: AtomicU64,)* }

        $(#[$doc])*
        #[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
        pub struct $snap { $($(#[$fdoc])* pub $field: u64,)* }

        impl $name {
            fn add_to(&self, snap: &mut $snap) {
                $(snap.$field += self.$field.load(Ordering::Relaxed);)*
            }
        }

        impl $snap {
            /// Adds `other`'s counts to these.
            pub fn add(&mut self, other: &Self) {
                $(self.$field += other.$field;)*
            }

            /// `name=value` pairs, for the log line printed at exit.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($field), self.$field),)*]
            }
        }
    };
}

counters! {
    /// Counters of one frontend.
    FrontendCounters / FrontendSnapshot {
        /// Client connections accepted.
        sessions,
        /// Full TLS handshakes completed.
        tls_full,
        /// Resumed TLS handshakes completed.
        tls_resumed,
        /// TLS handshakes that failed (bad ClientHello, plain HTTP on a TLS port, alerts).
        tls_failures,
        /// TLS handshakes that did not finish within the handshake timeout.
        tls_timeouts,
        /// Requests received (heads parsed), HTTP/2 streams included.
        requests,
        /// Client connections that negotiated HTTP/2 (ALPN `h2`, or h2c with prior knowledge).
        h2_sessions,
        /// HTTP/2 streams opened by clients (each also counts in `requests` once its head is
        /// parsed).
        h2_streams,
        /// HTTP/2 connections ended by a protocol or flow-control error (GOAWAY sent or
        /// received with an error code, or a broken preface); counted once per connection.
        h2_errors,
        /// Turns of HTTP/2 client connections' tasks that ended at their read budget, letting
        /// the worker's other connections go first (`http2/pace.rs`): large header blocks,
        /// control-frame floods, fast uploads.
        h2_yields,
        /// Requests answered by `monitor_uri`.
        monitor,
        /// Requests refused by an `http_request` `deny` rule (or answered 500 for a rewrite that
        /// cannot be sent), responses refused by an `http_response` `deny` rule, and TCP
        /// connections refused by a `tcp_request` `reject` rule.
        denied,
        /// Requests answered by an `http_request` `return` or `redirect` rule, and responses
        /// replaced by an `http_response` `return` rule.
        intercepted,
        /// Requests answered 401 by an `http_request` `auth` rule (a challenge for
        /// credentials).
        auth_challenges,
        /// Requests no `use_backend` rule took, on a frontend without `default_backend`
        /// (answered 503).
        no_backend,
        /// Malformed requests answered 400.
        bad_requests,
        /// Requests whose head exceeded the limits, answered 431.
        head_too_large,
        /// Request heads not received within `http_request`, answered 408.
        request_timeouts,
        /// Keep-alive connections closed after `keep_alive` idle time.
        keepalive_timeouts,
        /// Client inactivity beyond `client` during a stream.
        client_timeouts,
        /// Client connections that ended with an I/O error or a reset.
        client_aborts,
        /// Connections turned into tunnels by a `101` to an upgrade request (WebSocket).
        tunnels,
        /// Connections served in TCP mode (`mode = "tcp"`), relayed whole to a server; their
        /// bytes count in `bytes_in` and `bytes_out` when they end.
        tcp_sessions,
        /// Connections on an `accept_proxy` bind closed because their PROXY protocol header
        /// was malformed, truncated or late (`listen/proxy_in.rs`).
        proxy_errors,
        /// Client connections and HTTP/2 streams whose task panicked (a bug): the connection
        /// or stream was closed, the worker went on (`panics.rs`).
        panics,
        /// Responses by status class.
        resp_1xx, resp_2xx, resp_3xx, resp_4xx, resp_5xx,
        /// Request bytes (head and body, as received) passed to servers.
        bytes_in,
        /// Response bytes (head, body and framing) written to clients from servers.
        bytes_out,
    }
}

counters! {
    /// Counters of one backend.
    BackendCounters / BackendSnapshot {
        /// Requests sent towards this backend.
        requests,
        /// Requests answered 503 because no server could take them.
        no_server,
        /// Failed attempts to connect to one of its servers.
        connect_errors,
        /// Connection attempts repeated after a failure (`retries`).
        retries,
        /// Requests that went to another server after a connection failure.
        redispatches,
        /// Requests that waited in the queue for a server slot.
        queued,
        /// Requests answered 503 because the queue was full.
        queue_full,
        /// Requests answered 503 after waiting `queue.timeout` in the queue.
        queue_timeouts,
        /// Server errors before a response head (answered 502).
        upstream_errors,
        /// Servers silent beyond `server` before the response head (answered 504).
        server_timeouts,
        /// TCP-mode connections relayed to one of its servers (counted once connected).
        tcp_sessions,
        /// Responses cut short by the server (the client connection was closed).
        aborted_responses,
        /// HTTP/2 connections to its servers whose task panicked (a bug): the connection was
        /// dropped, its streams failed, the worker went on (`panics.rs`).
        panics,
        /// Request bytes (head and body, as received) passed to its servers.
        bytes_in,
        /// Response bytes written to clients from its servers.
        bytes_out,
    }
}

counters! {
    /// Counters of one server.
    ServerCounters / ServerSnapshot {
        /// Requests sent to the server.
        requests,
        /// New connections opened to the server.
        connects,
        /// Failed connection attempts.
        connect_errors,
        /// Requests sent on a reused keep-alive connection.
        reused,
        /// TCP-mode connections relayed to the server (counted once connected).
        tcp_sessions,
        /// Active health checks that passed.
        checks_passed,
        /// Active health checks that failed.
        checks_failed,
        /// Transitions to down.
        went_down,
        /// Transitions to up.
        went_up,
        /// Times the passive check's error limit was reached on live traffic.
        passive_trips,
        /// Request bytes (head and body, as received) passed to the server.
        bytes_in,
        /// Response bytes written to clients from the server.
        bytes_out,
    }
}

/// The counters one worker increments.
#[derive(Debug)]
pub struct WorkerStats {
    pub frontends: Vec<FrontendCounters>,
    /// TLS handshake details of each frontend (`tls/stats.rs`).
    pub tls: Vec<TlsCounters>,
    pub backends: Vec<BackendCounters>,
    pub servers: Vec<Vec<ServerCounters>>,
    /// Task profiling: polls, time and latency per kind of work (`profiling.rs`).
    pub profile: crate::profiling::Counters,
    /// The same for the worker's handshake offload thread (`handshake_offload`).
    pub offload_profile: crate::profiling::Counters,
    /// Batched key exchanges of the worker's handshakes (`global.crypto_batch`).
    pub crypto_batch: crate::tls::batch::BatchCounters,
}

impl WorkerStats {
    /// Counters for `frontends` frontends and backends with these server counts.
    pub fn new(frontends: usize, servers_per_backend: &[usize]) -> Self {
        Self {
            frontends: (0..frontends)
                .map(|_| FrontendCounters::default())
                .collect(),
            tls: (0..frontends).map(|_| TlsCounters::default()).collect(),
            backends: servers_per_backend
                .iter()
                .map(|_| BackendCounters::default())
                .collect(),
            servers: servers_per_backend
                .iter()
                .map(|&n| (0..n).map(|_| ServerCounters::default()).collect())
                .collect(),
            profile: crate::profiling::Counters::default(),
            offload_profile: crate::profiling::Counters::default(),
            crypto_batch: crate::tls::batch::BatchCounters::default(),
        }
    }
}

/// Increments a counter by one (relaxed: counters order nothing).
#[inline]
pub fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Adds `n` to a counter.
#[inline]
pub fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

/// All workers' counters, for readers.
#[derive(Debug, Clone)]
pub struct Stats {
    pub(crate) workers: Vec<Arc<WorkerStats>>,
    pub(crate) states: Arc<Vec<BackendState>>,
    /// Certificate reloads (tls/reload.rs).
    pub(crate) reloads: Arc<ReloadCounters>,
    /// The access log, whose counters are process-wide (shared by generations).
    pub(crate) access_log: Option<crate::AccessLog>,
    /// Basic authentication checks (`None` when no rule reads `http_auth`).
    pub(crate) auth: Option<Arc<tern_auth::AuthStats>>,
    /// DNS resolutions, one block per `[[resolvers]]`.
    pub(crate) resolvers: Vec<Arc<crate::resolve::counters::ResolverCounters>>,
}

/// Counters summed over all workers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    pub frontends: Vec<FrontendSnapshot>,
    pub tls: Vec<TlsSnapshot>,
    pub backends: Vec<BackendSnapshot>,
    pub servers: Vec<Vec<ServerSnapshot>>,
    /// Each server's state at the time of the snapshot.
    pub status: Vec<Vec<ServerStatus>>,
    /// Certificate reloads applied and refused.
    pub reloads: ReloadSnapshot,
    /// Task profiling, a row per kind (`profiling.rs`; all zero unless profiling was on).
    pub profile: Vec<crate::profiling::ProfileRow>,
    /// Access log lines written and dropped (`None` without `[access_log]`); process-wide, so
    /// [`StatsSnapshot::absorb`] leaves them as they are.
    pub access_log: Option<crate::AccessLogStats>,
    /// Requests waiting in each backend's queue at the time of the snapshot.
    pub queued: Vec<u64>,
    /// The outcome of each server's last active check (`L4CON: connection refused in 0 ms`);
    /// empty for unchecked servers and before the first check.
    pub checks: Vec<Vec<String>>,
    /// Basic authentication checks of `http_auth` (all zero when no rule reads it).
    pub auth: tern_auth::AuthCounts,
    /// DNS resolutions per `[[resolvers]]`, in configuration order.
    pub resolvers: Vec<crate::ResolverSnapshot>,
    /// Each remote peer of the current generation's peers sections (`peers.rs`).
    pub peers: Vec<PeerSnapshot>,
    /// Batched key exchanges (`global.crypto_batch`), over all workers.
    pub crypto_batch: crate::tls::batch::BatchSnapshot,
}

/// The counters of one remote peer (stick tables shared over the peers protocol).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerSnapshot {
    /// The `[[peers]]` section and the peer's name.
    pub section: String,
    pub peer: String,
    pub connected: bool,
    /// Entry updates sent to and received from the peer.
    pub sent: u64,
    pub received: u64,
    /// Malformed messages and updates dropped for a peer that fell behind.
    pub errors: u64,
    /// Connections refused on the section's port before a session (bad hello, garbage).
    pub refused: u64,
}

/// A server's state (not a counter).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStatus {
    /// Passes its health checks (always, when not checked).
    pub up: bool,
    /// Effective weight (lower than configured while slow start ramps it; 0 when drained).
    pub weight: u32,
    /// Requests in flight, counted only for servers with `maxconn`.
    pub active: u32,
    /// The operator's state (runtime API), on top of health.
    pub admin: AdminState,
    /// The configured weight: the file's, or set at runtime (`set weight`).
    pub configured_weight: u32,
    /// The address set at runtime (`set server addr`, or by DNS); `None`: the configured one.
    pub address: Option<std::net::SocketAddr>,
    /// Found by DNS and without an address now: out of balancing ("MAINT (resolution)").
    pub unresolved: bool,
}

/// The operator's state of a server, on top of its health (HAProxy's `set server ... state`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum AdminState {
    /// Takes traffic when its health checks pass.
    #[default]
    Ready,
    /// Takes no new traffic except persistent clients (cookie, stickiness); requests in flight
    /// finish.
    Drain,
    /// Takes no traffic at all and is not checked (maintenance).
    Maint,
}

impl AdminState {
    /// The lower-case name used by the runtime API, the stats page and the metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Drain => "drain",
            Self::Maint => "maint",
        }
    }
}

impl ServerStatus {
    /// `name=value` pairs, for the log line printed at exit.
    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("up", u64::from(self.up)),
            ("weight", u64::from(self.weight)),
            ("active", u64::from(self.active)),
            ("unresolved", u64::from(self.unresolved)),
        ]
    }
}

impl StatsSnapshot {
    /// Adds the counters of `other` (a snapshot of another generation, whose configuration is
    /// `other_config`) to those of the frontends, backends and servers of the same names in
    /// `config` (the configuration of `self`). Objects that exist only in `other_config` are
    /// left out; server states are not counters and stay as they are.
    pub fn absorb(&mut self, config: &Config, other: &StatsSnapshot, other_config: &Config) {
        for (fe, (counts, tls)) in other_config
            .frontends
            .iter()
            .zip(other.frontends.iter().zip(&other.tls))
        {
            let Some(f) = config.frontends.iter().position(|x| x.name == fe.name) else {
                continue;
            };
            if let Some(mine) = self.frontends.get_mut(f) {
                mine.add(counts);
            }
            if let Some(mine) = self.tls.get_mut(f) {
                mine.add(tls);
            }
        }
        for (be, (counts, servers)) in other_config
            .backends
            .iter()
            .zip(other.backends.iter().zip(&other.servers))
        {
            let Some(b) = config.backend_index(&be.name) else {
                continue;
            };
            if let Some(mine) = self.backends.get_mut(b) {
                mine.add(counts);
            }
            for (srv, counts) in be.servers.iter().zip(servers) {
                let Some(s) = config.backends[b]
                    .servers
                    .iter()
                    .position(|x| x.name == srv.name)
                else {
                    continue;
                };
                if let Some(mine) = self.servers.get_mut(b).and_then(|v| v.get_mut(s)) {
                    mine.add(counts);
                }
            }
        }
        self.reloads.reloads += other.reloads.reloads;
        self.reloads.failed += other.reloads.failed;
        self.auth.add(&other.auth);
        self.crypto_batch.add(&other.crypto_batch);
        for old in &other.resolvers {
            if let Some(mine) = self.resolvers.iter_mut().find(|r| r.name == old.name) {
                mine.absorb(old);
            }
        }
        crate::profiling::absorb(&mut self.profile, &other.profile);
    }
}

impl Stats {
    /// Sums the counters of every worker.
    pub fn snapshot(&self) -> StatsSnapshot {
        let mut snap = StatsSnapshot::default();
        for w in &self.workers {
            snap.frontends
                .resize(w.frontends.len(), FrontendSnapshot::default());
            snap.backends
                .resize(w.backends.len(), BackendSnapshot::default());
            snap.servers.resize(w.servers.len(), Vec::new());
            for (c, s) in w.frontends.iter().zip(snap.frontends.iter_mut()) {
                c.add_to(s);
            }
            w.crypto_batch.add_to(&mut snap.crypto_batch);
            snap.tls.resize(w.tls.len(), TlsSnapshot::default());
            for (c, s) in w.tls.iter().zip(snap.tls.iter_mut()) {
                c.add_to(s);
            }
            for (c, s) in w.backends.iter().zip(snap.backends.iter_mut()) {
                c.add_to(s);
            }
            for (cs, ss) in w.servers.iter().zip(snap.servers.iter_mut()) {
                ss.resize(cs.len(), ServerSnapshot::default());
                for (c, s) in cs.iter().zip(ss.iter_mut()) {
                    c.add_to(s);
                }
            }
        }
        snap.reloads = self.reloads.snapshot();
        snap.queued = self.states.iter().map(|b| b.queued() as u64).collect();
        snap.checks = self
            .states
            .iter()
            .map(|b| b.servers.iter().map(ServerState::last_check).collect())
            .collect();
        snap.access_log = self.access_log.as_ref().map(crate::AccessLog::stats);
        snap.auth = self.auth.as_ref().map(|a| a.counts()).unwrap_or_default();
        snap.resolvers = self.resolvers.iter().map(|r| r.snapshot()).collect();
        snap.profile = crate::profiling::report(self).rows;
        snap.status = self
            .states
            .iter()
            .map(|b| {
                b.servers
                    .iter()
                    .map(|s| ServerStatus {
                        up: s.is_up(),
                        weight: s.weight(),
                        active: s.active(),
                        admin: s.admin(),
                        configured_weight: s.configured_weight(),
                        address: s.runtime_address(),
                        unresolved: s.is_unresolved(),
                    })
                    .collect()
            })
            .collect();
        snap
    }
}
