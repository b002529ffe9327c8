//! TCP mode (`mode = "tcp"`): a client connection relayed whole to one server, its bytes never
//! read. What stunnel and hitch do (TLS terminated, plain TCP to the server), what HAProxy's
//! `mode tcp` does (plain in and out, or TLS re-encrypted to servers with `tls`).
//!
//! A session runs these steps in turn, each in its own place:
//!
//! 1. **Route** (here): on a plain bind with `tcp_request.inspect_delay`, the client's
//!    ClientHello is read first and kept for the server ([`inspect`]: TLS passthrough by SNI);
//!    then the `tcp_request` content rules accept or reject, and the frontend's `use_backend`
//!    rules on connection facts (source, port, TLS, SNI, hello type; validation refuses
//!    conditions on requests) choose the backend, else `default_backend`.
//! 2. **Server and connection** ([`connect`]): stickiness on the source, the balancer's pick
//!    (every algorithm; `source` hashing reads the client address) under the servers'
//!    `maxconn` and the backend queue, then a new connection (TLS and the PROXY header as for
//!    HTTP, never pooled: a TCP server connection carries one client's bytes) under the
//!    `connect` timeout; a failed connect is retried `retries` times, on another server with
//!    `redispatch` ([`crate::exchange::attempt::Attempt`], as for HTTP).
//! 3. **Relay** ([`relay`]): the protocol-neutral [`crate::tunnel::Tunnel`] both ways at once,
//!    with one bounded buffer per direction, half-closes passed on (FIN; close_notify on TLS),
//!    a reset on one side passed on as a reset of the other, and the backend's `tunnel`
//!    timeout (else the frontend's `client` and the backend's `server`, as HAProxy does), with
//!    `client_fin` / `server_fin` once the other side finished.
//!    Counters, passive checks and the `tcplog` access log line are written when it ends.
//!
//! No server could be had (all down, queue full or timed out, every retry failed): the client
//! connection is closed, as HAProxy does, since there is no protocol to answer in.
//!
//! A graceful stop or a drain does not cut a TCP session: it has no request boundary, so like a
//! WebSocket tunnel it runs until both ends close, bounded by `global.grace` (stop) or
//! `hard_stop_after` (drain after a reload or upgrade).
//!
//! A PROXY header received on an `accept_proxy` bind (`listen/proxy_in.rs`) gives the session
//! its addresses ([`Addrs`]): routing, stickiness, hashing and the header sent on use them; its
//! v2 TLVs are what `fc_pp_tlv` reads in routing conditions and `proxy_v2_tlvs` sends on.
//!
//! Between a plain client and a plain server, the relay moves bulk transfers with `splice(2)`
//! (see [`crate::tunnel`]).

// A server for the session: stickiness, the pick, the queue, connect retries.
mod connect;
// The relay, and what the end of a session counts and logs.
mod relay;
// A plain connection's ClientHello, read before routing (TLS passthrough by SNI).
mod inspect;

use std::net::SocketAddr;
use std::rc::Rc;

use tern_config::Facts;
use tern_proxy_protocol::Tlvs;
use tracing::debug;

use crate::access_log::Tracker;
use crate::buffer::Buffer;
use crate::listen::client::ClientStream;
use crate::listen::proxy_in::Addrs;
use crate::rules::facts::connection_sample;
use crate::stats::bump;
use crate::worker::Worker;
use inspect::Inspected;

/// `req.ssl_hello_type` of a ClientHello.
const CLIENT_HELLO: u8 = 1;

/// Working size of the client side's buffer (the server side's is a server connection's).
const CLIENT_BUFFER: usize = 16 * 1024;

/// Serves a TCP-mode connection (after its TLS handshake, if any) until it ends.
pub(crate) async fn serve<S: ClientStream>(
    w: Rc<Worker>,
    frontend: usize,
    io: S,
    addrs: Addrs,
    tls: bool,
    mut log: Option<Box<Tracker>>,
) {
    bump(&w.stats.frontends[frontend].tcp_sessions);
    if let Some(log) = log.as_deref_mut() {
        log.tcp_session();
    }
    // The worker's spare session memory (an HTTP/1.1 session's read buffer has the same size):
    // allocating and zeroing a buffer for each session showed in profiles of short sessions.
    let mut spare = w.spares.take(CLIENT_BUFFER, CLIENT_BUFFER);
    session(&w, frontend, io, addrs, tls, log, &mut spare.buf).await;
    w.spares.give(spare, CLIENT_BUFFER);
}

/// [`serve`] with the client side's buffer `buf`.
async fn session<S: ClientStream>(
    w: &Worker,
    frontend: usize,
    mut io: S,
    addrs: Addrs,
    tls: bool,
    mut log: Option<Box<Tracker>>,
    buf: &mut Buffer,
) {
    let peer = addrs.peer;
    let rules = &w.shared.frontend(frontend).tcp_request;
    let hello = match rules.inspect_delay {
        Some(delay) if !tls => inspect::inspect(&mut io, buf, delay).await,
        _ => Inspected::default(),
    };
    let facts = Connection::of(&io, &addrs, tls, &hello);
    if let Some(log) = log.as_deref_mut() {
        sample_for_log(w, frontend, &facts, log);
    }
    let backend = match route(w, frontend, &facts) {
        Choice::Backend(backend) => backend,
        refused => return refuse(w, frontend, peer, &refused, log),
    };
    if let Some(log) = log.as_deref_mut() {
        log.backend(backend);
    }
    let session = connect::Session { w, backend, addrs };
    let Some((server, conn, attempt)) = session.server(&io, log.as_deref_mut()).await else {
        // Closed without a word: the tracker has the state (queue, connect) that ended it.
        if let Some(log) = log.as_deref_mut() {
            log.emit(w);
        }
        return;
    };
    let ends = relay::Ends {
        client: &mut io,
        client_buf: buf,
        server: conn,
    };
    relay::run(w, frontend, backend, server, ends, log.as_deref_mut()).await;
    // The server's slot is held until the relay ended.
    drop(attempt);
    if let Some(log) = log.as_deref_mut() {
        log.emit(w);
    }
}

/// Closes a connection no backend takes: counted and logged (`PR`, as HAProxy's).
fn refuse(
    w: &Worker,
    frontend: usize,
    peer: SocketAddr,
    choice: &Choice,
    mut log: Option<Box<Tracker>>,
) {
    let fc = &w.stats.frontends[frontend];
    if matches!(choice, Choice::Rejected) {
        debug!(%peer, "a tcp_request rule rejected the connection: closing it");
        bump(&fc.denied);
    } else {
        debug!(%peer, "no backend for the connection: closing it");
        bump(&fc.no_backend);
    }
    if let Some(log) = log.as_deref_mut() {
        log.refused(*b"PR");
        log.emit(w);
    }
}

/// Where a connection goes.
enum Choice {
    Backend(usize),
    /// A `tcp_request` content rule rejected it.
    Rejected,
    /// No `use_backend` rule took it and there is no `default_backend`.
    NoBackend,
}

/// The `tcp_request` content rules' verdict, then the backend: the first `use_backend` rule
/// whose condition holds on the connection's facts, else `default_backend`.
fn route<S: ClientStream>(w: &Worker, frontend: usize, facts: &Connection<'_, S>) -> Choice {
    let fe = w.shared.frontend(frontend);
    let routing = &w.shared.routing[frontend];
    if !fe.tcp_request.accepts(facts) {
        return Choice::Rejected;
    }
    let backend = match routing.fixed() {
        Some(fixed) => fixed,
        None => routing.use_backend(&fe.use_backend, facts),
    };
    backend.map_or(Choice::NoBackend, Choice::Backend)
}

/// Takes the samples of the frontend's `log_format` (connection samples only: validation
/// refuses the others), as the HTTP loop does for a request.
fn sample_for_log<S: ClientStream>(
    w: &Worker,
    frontend: usize,
    facts: &Connection<'_, S>,
    log: &mut Tracker,
) {
    let log_format = w
        .shared
        .frontend(frontend)
        .request_log
        .log_format
        .as_deref();
    let Some(format) = log_format.filter(|f| f.samples > 0) else {
        return;
    };
    log.take_samples(format, &|fetch, out| connection_sample(fetch, facts, out));
}

/// What a TCP frontend's `use_backend` conditions may read: the connection only (validation
/// refuses conditions on request parts, so those answers are never asked for).
struct Connection<'a, S> {
    peer: SocketAddr,
    /// The address the client connected to, from its PROXY header; else the socket's is asked
    /// for (`getsockname`) only when a condition reads the port.
    local: Option<SocketAddr>,
    io: &'a S,
    tls: bool,
    sni: Option<&'a str>,
    hello_type: Option<u8>,
    /// The TLVs of the PROXY v2 header the connection opened with.
    pp_tlvs: Option<&'a Tlvs>,
}

impl<'a, S: ClientStream> Connection<'a, S> {
    /// The facts of the client connection `io` (its addresses `addrs`, TLS terminated here or
    /// not, what an inspection read of its ClientHello).
    fn of(io: &'a S, addrs: &'a Addrs, tls: bool, hello: &'a Inspected) -> Self {
        Connection {
            peer: addrs.peer,
            local: addrs.local(),
            io,
            tls,
            // Terminated here: the handshake read the ClientHello; else the inspection did.
            sni: io.sni().or(hello.sni.as_deref()),
            hello_type: if tls {
                Some(CLIENT_HELLO)
            } else {
                hello.hello_type
            },
            pp_tlvs: addrs.pp_tlvs(),
        }
    }
}

impl<S: ClientStream> Facts for Connection<'_, S> {
    fn method(&self) -> &[u8] {
        b""
    }

    fn url(&self) -> &[u8] {
        b""
    }

    fn path(&self) -> &[u8] {
        b""
    }

    fn any_header(&self, _name: &str, _each: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        false
    }

    fn version(&self) -> (u8, u8) {
        (0, 0)
    }

    fn src(&self) -> std::net::IpAddr {
        self.peer.ip()
    }

    fn dst_port(&self) -> u16 {
        self.local
            .map_or_else(|| self.io.local_addr(), Ok)
            .map_or(0, |a| a.port())
    }

    fn tls(&self) -> bool {
        self.tls
    }

    fn sni(&self) -> Option<&str> {
        self.sni
    }

    fn hello_type(&self) -> Option<u8> {
        self.hello_type
    }

    fn pp_tlv(&self, id: u8) -> Option<&[u8]> {
        self.pp_tlvs?.value(id)
    }
}
