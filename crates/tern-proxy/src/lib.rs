//! tern's data path: pinned workers accept client connections, terminate TLS, and proxy
//! HTTP/1.1 streams to backend servers over pooled keep-alive connections, or (TCP mode,
//! `tcp`) relay each connection whole to one server.
//!
//! The flow of one connection through the modules (ARCHITECTURE.md has the whole picture and a
//! "where is X" table): a `worker` accepts under the connection limits (`listen`) → the
//! session runs the TLS handshake (`tls`) → the HTTP/1.1 loop (`http1`) reads each request
//! head, routes it to a backend under the request `rules` and answers it locally or hands it to
//! the `exchange`, which picks a server, takes a pooled connection or opens one, and the relay
//! carries the request body up and the response down. Everything is counted in [`stats`].
//!
//! Subsystems that know nothing of HTTP/1.1 (`listen`, `tls`, `exchange`, `rules`, `health`,
//! `access_log`, `profiling`) are what a second protocol reuses; each module's docs say what
//! in it still reads HTTP/1.1 types.

#![forbid(unsafe_code)]

// The access log: records filled on the data path, formatted and written by a thread of its own.
mod access_log;
// A connection's read buffer: heads parsed in place, bodies passed through.
mod buffer;
// Response compression: the coding a request accepts, the responses worth it, the encoders.
mod compress;
// The exchange with servers: balancing, persistence, the queue, pools, server connections.
mod exchange;
// A running generation (`ProxyHandle`): start-up, handover to the next, runtime operations.
mod generation;
// Active and passive health checks, on a thread of their own.
mod health;
// HTTP/1.1 bodies on HTTP/2 streams, both ways (client and server side).
mod h2body;
// HTTP/1.1 on a client connection: the proxy loop, routing, the relay.
mod http1;
// HTTP/2 on a client connection: each stream served as an HTTP/1.1 exchange (design note 0003).
mod http2;
// What a thread serving connections is asked to do (run, drain, stop).
mod lifecycle;
// Listening sockets, the accept loop and a session's steps.
mod listen;
// Tasks that survive their own panics: logged, counted, the worker goes on.
mod panics;
// Task profiling (`show profiling`): time per kind of work.
pub mod profiling;
// Service discovery over DNS: the resolver thread, slots filled from answers, counters.
mod resolve;
// Request and response rules, and the facts they read.
mod rules;
// Counters per frontend, backend and server, one block per worker.
pub mod stats;
// TCP mode: a connection relayed whole to one server (TLS terminated, or not, by tern).
mod tcp;
// Inactivity timers, armed only when an operation waits.
mod timer;
// Stick tables shared with other nodes over HAProxy's peers protocol.
mod peers;
// Stick-table counters: tracked entries, rates, the shared tables.
mod track;
// A byte tunnel between a client and a server stream (after a `101`), protocol-neutral.
mod tunnel;
// Client-side TLS termination: handshake, admission, offload, counters, certificate reload.
pub mod tls;
// Worker threads: one event loop per CPU, and what the workers share.
mod worker;

pub use access_log::{AccessLog, AccessLogError, AccessLogStats};
/// A request to an HTTP/2 server served in memory, for the fuzz targets only.
#[doc(hidden)]
pub use exchange::h2::fuzz as h2_upstream_fuzz;
pub use generation::handover::{
    Inherit, InheritedBind, ServerCarry, SessionCarry, TablesCarry, TablesImage,
};
pub use generation::operate::OperateError;
pub use generation::start::{servers_tls, start, start_with, ServerTlsError, Snapshot, StartError};
pub use generation::{BoundBind, ProxyHandle};
/// The HTTP part of a health check on any byte stream, for the fuzz targets only.
#[doc(hidden)]
pub use health::probe::fuzz as health_fuzz;
/// One HTTP/2 connection served in memory, for the fuzz targets (crates/tern-fuzz) only.
#[doc(hidden)]
pub use http2::fuzz as http2_fuzz;
pub use resolve::ResolverSnapshot;
pub use stats::{AdminState, PeerSnapshot, Stats, StatsSnapshot};
pub use tls::batch::BatchSnapshot;
pub use tls::info::{BindTlsInfo, CertificateInfo, CertificateSummary, TicketState};
pub use tls::ossl::{openssl_binds, OpensslBinds, OsslBind};
pub use tls::reload::{frontend_tls, BindTlsError, FrontendTls, ReloadSnapshot, ReloadSummary};
