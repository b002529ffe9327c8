//! Forwarding one request: choose a server, get a connection, send the head, relay, and judge
//! the outcome.
//!
//! - **Server and connection.** Persistence ([`crate::exchange::persist`]) names a server, or the
//!   worker's balancer picks one, taking a slot under its `maxconn`; when every usable server is
//!   full the request waits in the backend queue (503 when the queue is full or `queue.timeout`
//!   passes). An idle pooled connection to the server is taken ([`crate::exchange::pool`]) or a new one
//!   opened under the `connect` timeout. A failed connect is retried up to `retries` times
//!   (nothing was sent, so this is safe for every method): on another server when `redispatch`
//!   is on (the failed ones are avoided), else on the same one; then the answer is 503. A TLS
//!   server refusing the session with an alert in place of the first response on a new
//!   connection (a TLS 1.3 client-certificate refusal) counts as a failed connect too; the
//!   request is retried only if it is still whole in the buffer (else 502).
//! - **Passive checks.** With `observe`, each exchange tells the server's shared state whether
//!   it failed (connection errors; at layer 7 also invalid responses and 5xx), and the health
//!   checker acts when `error_limit` consecutive errors are reached.
//! - **Sending.** The rewritten head and the body bytes that came with it leave in one write.
//!   `Expect: 100-continue` is answered with `100 Continue` once the head is out (the header
//!   itself is not forwarded), then [`Relay`] carries the rest.
//! - **Sending again.** A pooled connection can turn out closed by the server only once the
//!   request is on it. If nothing at all came back (end of stream or reset before any response
//!   byte), the request is idempotent and all of it is still in the client buffer (no body byte
//!   was read past what came with the head), it is sent again on a fresh connection to the same
//!   server, at most [`MAX_RESENDS`] times. Otherwise tern never replays a request.
//! - **Judging.** A complete exchange returns the server connection to the pool when both
//!   messages ended cleanly and the server keeps it alive, unless the frontend or the backend
//!   is in server-close or close mode (`connection_mode`, HAProxy's `http-server-close` and
//!   `httpclose`): the request then said `Connection: close` and the connection is dropped.
//!   A fault before the response started is answered with a page (408, 400, 502, 504) blaming
//!   the right side and the connection is closed, since part of the request body may be unread;
//!   a fault after it cuts the response, and the client connection is dropped so that it cannot
//!   take the response as complete.

// The worker's balancers: one per backend, built from the configuration.
pub(crate) mod balance;
// Persistence: the cookie and the stickiness table name a server.
pub(crate) mod persist;
// Idle keep-alive connections to servers, one pool per worker.
pub(crate) mod pool;
// The PROXY protocol header sent to servers with `proxy_protocol`.
pub(crate) mod proxy_header;
// What all workers share about a backend's servers: health, weights, slots, queue.
pub(crate) mod servers;
// Connections to servers: TCP, TLS, the PROXY header, idle checks.
pub(crate) mod upstream;

use std::rc::Rc;

use tern_balance::NoServer;
use tern_config::{Backend, ConnectionMode, ObserveOn, ProxyProtocol};
use tern_h1::local::Page;
use tern_h1::{write_request_edited, Edits, Method};
use tracing::{debug, warn};

use crate::exchange::balance::{InFlight, Placement, Refusal};
use crate::exchange::proxy_header::Origin;
use crate::exchange::servers::BackendState;
use crate::exchange::upstream::ServerConn;
use crate::http1::conn::{count_status, Next, Session};
use crate::http1::relay::{
    ClientSide, End, Fault, Outcome, Relay, ResponseRules, ServerSide, Stage, Upload,
};
use crate::listen::client::ClientStream;
use crate::profiling::{Kind, Profiled};
use crate::stats::{add, bump, BackendCounters, FrontendCounters};
use crate::worker::Worker;

/// How many times a request that got nothing back on a reused connection is sent again.
const MAX_RESENDS: usize = 2;

/// Whether a request may be repeated without changing its effect (RFC 9110 §9.2.2).
fn idempotent(m: Method) -> bool {
    matches!(
        m,
        Method::Get | Method::Head | Method::Put | Method::Delete | Method::Options | Method::Trace
    )
}

/// The field line that asks a server to close its connection after the response.
const CLOSE_LINE: &[u8] = b"connection: close\r\n";

/// Whether the server connection of the current request closes after the response
/// (`connection_mode` of the frontend or of the backend, see `tern_config::ConnectionMode`).
fn closes_server<S>(s: &Session<S>) -> bool {
    ConnectionMode::closes_server(
        s.w.shared.frontend(s.frontend).connection_mode,
        s.w.shared.backend(s.backend).connection_mode,
    )
}

/// Forwards the request whose head (`hlen` bytes) is at the front of the session's buffer.
pub(crate) async fn forward<S: ClientStream>(s: &mut Session<S>, hlen: usize) -> Next {
    let w = Rc::clone(&s.w);
    let b = s.backend;
    let be = w.shared.backend(b);
    let bc = &w.stats.backends[b];
    bump(&bc.requests);
    let head_only = s.head.method() == Method::Head;

    // The body bytes that arrived with the head leave with it.
    let mut reader = s.head.body_reader(&s.limits);
    let first = match reader.advance(&s.buf.data()[hlen..]) {
        Ok(p) => p,
        Err(e) => {
            debug!(error = %e, "invalid request body");
            bump(&s.w.stats.frontends[s.frontend].bad_requests);
            if let Some(log) = s.log.as_deref_mut() {
                log.refused(*b"PD");
            }
            return s.answer(Page::BadRequest, false, head_only).await;
        }
    };
    let sent = hlen + first.used;
    let resendable = first.done && idempotent(s.head.method());
    if let Some(log) = s.log.as_deref_mut() {
        log.backend(b);
        log.received(first.used);
    }
    let Some(state) = w.balancers.state(b) else {
        if let Some(log) = s.log.as_deref_mut() {
            log.unplaced(*b"SC");
        }
        return unavailable(s, sent, first.done, head_only).await;
    };
    let persisted = persist::lookup(be, state, &s.head, s.buf.data(), s.peer);
    let mut attempt = Attempt {
        retries_left: be.retries,
        failed: Vec::new(),
        inflight: None,
    };
    let mut resends = 0;
    let mut fresh = false;
    loop {
        let server = match &attempt.inflight {
            Some(picked) => picked.server(),
            None => match place(s, persisted.server, &attempt.failed).await {
                Ok(picked) => {
                    if let Some(log) = s.log.as_deref_mut() {
                        log.placed(picked.server());
                    }
                    attempt.inflight.insert(picked).server()
                }
                Err(refusal) => {
                    debug!(backend = %be.name, %refusal, "no server");
                    bump(&bc.no_server);
                    if let Some(log) = s.log.as_deref_mut() {
                        log.unplaced(refusal_state(&refusal));
                    }
                    return unavailable(s, sent, first.done, head_only).await;
                }
            },
        };
        let sc = &w.stats.servers[b][server];
        let host = s.head.host().map(|h| h.get(s.buf.data()));
        let new_conn = std::mem::take(&mut fresh);
        let proxy = be.servers[server]
            .proxy_protocol
            .map(|version| (version, origin(&s.io)));
        let (mut conn, reused) = match obtain(&w, b, server, new_conn, host, proxy).await {
            Ok(got) => got,
            Err(e) => {
                if e.is_tls() {
                    warn!(backend = %be.name, server = %be.servers[server].name, error = %e, "connect failed");
                } else {
                    debug!(backend = %be.name, server = %be.servers[server].name, error = %e, "connect failed");
                }
                let timed_out = matches!(e, upstream::ConnectError::Timeout { .. });
                if attempt.failed_to_connect(s, server, timed_out) {
                    continue;
                }
                return unavailable(s, sent, first.done, head_only).await;
            }
        };
        if let Some(log) = s.log.as_deref_mut() {
            log.connected();
        }
        if !reused && !persisted_to(&attempt.inflight) {
            persist::remember(state, s.peer, server);
        }
        persist::response_fields(be, server, &persisted, s.head.method(), &mut s.extra);
        let outcome = exchange(s, &mut conn, sent, hlen, reader.clone(), resendable).await;
        if let (Some(picked), Some(at)) = (&attempt.inflight, outcome.responded_at) {
            picked.responded(at);
        }
        if let (false, Some(alert)) = (reused, refused_session(&outcome)) {
            warn!(backend = %be.name, server = %be.servers[server].name, ?alert,
                "server refused the TLS session after the handshake (its client certificate check?)");
            // Nothing reached the server's application. A request still whole in the buffer
            // is handled as after a failed connect (retried, else 503); any other is answered
            // as a fault below (502).
            if resendable {
                if attempt.failed_to_connect(s, server, false) {
                    continue;
                }
                return unavailable(s, sent, first.done, head_only).await;
            }
        }
        if let End::Failed {
            fault: Fault::ServerClosed | Fault::ServerIo(_),
            stage: Stage::Head,
            received: false,
        } = outcome.end
        {
            if reused && resendable && resends < MAX_RESENDS {
                debug!(backend = %be.name, server = %be.servers[server].name, "pooled connection closed, sending again");
                resends += 1;
                fresh = true;
                if let Some(log) = s.log.as_deref_mut() {
                    log.retried(false);
                }
                continue;
            }
        }
        observe(be, state, server, seen(&outcome));
        if let Some(log) = s.log.as_deref_mut() {
            log.relayed(&outcome);
        }
        bump(&sc.requests);
        if reused {
            bump(&sc.reused);
        }
        let (up, down) = (sent as u64 + outcome.uploaded, outcome.sent);
        let fc = &w.stats.frontends[s.frontend];
        for (bytes_in, bytes_out) in [
            (&sc.bytes_in, &sc.bytes_out),
            (&bc.bytes_in, &bc.bytes_out),
            (&fc.bytes_in, &fc.bytes_out),
        ] {
            add(bytes_in, up);
            add(bytes_out, down);
        }
        return judge(s, outcome, conn, server, head_only).await;
    }
}

/// One request's way to a server, across its connection attempts.
struct Attempt {
    retries_left: u32,
    /// Servers this request failed to connect to, avoided when it is redispatched.
    failed: Vec<usize>,
    /// The request holds a slot on its server, and counts as in flight, until `forward`
    /// returns or it leaves the server.
    inflight: Option<InFlight>,
}

impl Attempt {
    /// Counts a failed connection to `server` (passive checks and the log included) and says
    /// whether to try again: on another server with `redispatch` (the failed ones avoided), else
    /// the same one. Nothing reached the server's application, so this is safe for every method.
    fn failed_to_connect<S: ClientStream>(
        &mut self,
        s: &mut Session<S>,
        server: usize,
        timed_out: bool,
    ) -> bool {
        if let Some(log) = s.log.as_deref_mut() {
            log.connect_failed(timed_out);
        }
        let w = &s.w;
        let (b, be) = (s.backend, w.shared.backend(s.backend));
        let (bc, sc) = (&w.stats.backends[b], &w.stats.servers[b][server]);
        bump(&bc.connect_errors);
        bump(&sc.connect_errors);
        if let Some(state) = w.balancers.state(b) {
            observe(be, state, server, Seen::ConnectionError);
        }
        if self.retries_left == 0 {
            bump(&bc.no_server);
            return false;
        }
        self.retries_left -= 1;
        bump(&bc.retries);
        if let Some(log) = s.log.as_deref_mut() {
            log.retried(be.redispatch);
        }
        if be.redispatch {
            self.failed.push(server);
            self.inflight = None;
            bump(&bc.redispatches);
        }
        true
    }
}

/// The alert with which a server refused the TLS session on a fresh connection before any
/// response byte: in TLS 1.3 the client's side of the handshake is complete before the server
/// judges the client's certificate, so a refusal (no certificate, an unknown CA, ...) arrives
/// in place of the response. The server's application never saw the request.
fn refused_session(outcome: &Outcome) -> Option<rustls::AlertDescription> {
    use rustls::AlertDescription as A;
    let End::Failed {
        fault: Fault::ServerIo(e),
        stage: Stage::Head,
        received: false,
    } = &outcome.end
    else {
        return None;
    };
    let tls = e.get_ref()?.downcast_ref::<rustls::Error>()?;
    match tls {
        rustls::Error::AlertReceived(
            alert @ (A::BadCertificate
            | A::UnsupportedCertificate
            | A::CertificateRevoked
            | A::CertificateExpired
            | A::CertificateUnknown
            | A::UnknownCA
            | A::CertificateRequired
            | A::AccessDenied
            | A::HandshakeFailure),
        ) => Some(*alert),
        _ => None,
    }
}

/// HAProxy's termination state of a request no server could take.
fn refusal_state(refusal: &Refusal) -> [u8; 2] {
    match refusal {
        Refusal::QueueFull => *b"PQ",
        Refusal::QueueTimeout => *b"sQ",
        Refusal::Down | Refusal::Moved => *b"SC",
    }
}

/// Whether persistence chose the server of this request.
fn persisted_to(inflight: &Option<InFlight>) -> bool {
    inflight.as_ref().is_some_and(InFlight::persisted)
}

/// A server for the request: the persistent one if it is up, else the algorithm's choice,
/// avoiding `failed`; when every usable server is full, a slot from the queue.
async fn place<S: ClientStream>(
    s: &Session<S>,
    persist: Option<usize>,
    failed: &[usize],
) -> Result<InFlight, Refusal> {
    let w = &s.w;
    let b = s.backend;
    let placement = Placement {
        persist,
        avoid: failed,
    };
    let mut picked = w
        .balancers
        .pick(b, &s.head, s.buf.data(), s.peer, placement);
    if matches!(picked, Err(NoServer::Full)) && !failed.is_empty() {
        // Every usable server already failed this request: try them again rather than give up
        // (a single-server backend retries its server, as with `redispatch = false`).
        let again = Placement {
            persist,
            avoid: &[],
        };
        picked = w.balancers.pick(b, &s.head, s.buf.data(), s.peer, again);
    }
    match picked {
        Ok(picked) => Ok(picked),
        Err(NoServer::Down) => Err(Refusal::Down),
        Err(NoServer::Full) => {
            let be = w.shared.backend(b);
            let bc = &w.stats.backends[b];
            let want = persist.filter(|p| !failed.contains(p));
            let mut waited = w.balancers.wait(b, want, be.queue.timeout).await;
            if waited.as_ref().err() == Some(&Refusal::Moved) {
                // Its persistent server went down while it waited: balance it normally.
                let placement = Placement {
                    persist: None,
                    avoid: failed,
                };
                waited = match w
                    .balancers
                    .pick(b, &s.head, s.buf.data(), s.peer, placement)
                {
                    Ok(picked) => Ok(picked),
                    Err(NoServer::Down) => Err(Refusal::Down),
                    Err(NoServer::Full) => w.balancers.wait(b, None, be.queue.timeout).await,
                };
            }
            match waited {
                Err(Refusal::QueueFull) => bump(&bc.queue_full),
                Err(Refusal::QueueTimeout) => {
                    bump(&bc.queued);
                    bump(&bc.queue_timeouts);
                }
                _ => bump(&bc.queued),
            }
            waited
        }
    }
}

/// What live traffic showed of a server, for passive checks (`observe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Connected and answered validly (a 5xx included, at layer 4).
    Fine,
    /// The connection failed: refused, timed out, or reset before any response.
    ConnectionError,
    /// An invalid response, no response in time, or a 5xx (other than 501 and 505, which
    /// describe the request, as in HAProxy).
    ResponseError,
}

/// Classifies an exchange for passive checks.
fn seen(outcome: &Outcome) -> Seen {
    match &outcome.end {
        End::Failed {
            fault: Fault::ServerClosed | Fault::ServerIo(_),
            stage: Stage::Head,
            received: false,
        } => Seen::ConnectionError,
        End::Failed {
            fault:
                Fault::ServerClosed | Fault::ServerIo(_) | Fault::ServerTimeout | Fault::BadResponse(_),
            stage: Stage::Head,
            ..
        } => Seen::ResponseError,
        _ => match outcome.status {
            Some(status) if status >= 500 && status != 501 && status != 505 => Seen::ResponseError,
            _ => Seen::Fine,
        },
    }
}

/// Feeds one observation of live traffic to the server's passive check.
fn observe(be: &Backend, state: &BackendState, server: usize, what: Seen) {
    let Some(o) = &be.observe else {
        return;
    };
    let Some(s) = state.server(server) else {
        return;
    };
    let error = match (what, o.on) {
        (Seen::Fine, _) | (Seen::ResponseError, ObserveOn::Layer4) => false,
        (Seen::ConnectionError, _) | (Seen::ResponseError, ObserveOn::Layer7) => true,
    };
    if s.observe(error, o.error_limit) {
        debug!(backend = %be.name, server = %be.servers[server].name, "passive check error limit reached");
    }
}

/// Answers 503; the connection stays open if the whole request (`sent` bytes) was received.
async fn unavailable<S: ClientStream>(
    s: &mut Session<S>,
    sent: usize,
    complete: bool,
    head_only: bool,
) -> Next {
    if complete {
        s.buf.consume(sent);
    }
    s.answer(Page::Unavailable, complete, head_only).await
}

/// The client connection's addresses, for the PROXY header of a server with `proxy_protocol`.
fn origin<S: ClientStream>(io: &S) -> Origin {
    match (io.tcp().peer_addr(), io.tcp().local_addr()) {
        (Ok(source), Ok(destination)) => Origin::Client {
            source,
            destination,
        },
        _ => Origin::Unknown,
    }
}

/// An idle pooled connection to `server` (true: reused), or a new one, with TLS when the
/// server has `tls`. `host` is the request's Host value (for `sni = "host"`); `proxy` the
/// PROXY header of a server with `proxy_protocol` (its connections carry only requests of the
/// client connection the header names).
async fn obtain(
    w: &Worker,
    b: usize,
    server: usize,
    fresh: bool,
    host: Option<&[u8]>,
    proxy: Option<(ProxyProtocol, Origin)>,
) -> Result<(ServerConn, bool), upstream::ConnectError> {
    let be = w.shared.backend(b);
    let srv = &be.servers[server];
    // The runtime API may have moved the server (`set server addr`).
    let address = w
        .balancers
        .state(b)
        .and_then(|st| st.server(server))
        .map_or(srv.address, |st| st.address(srv.address));
    let tls = match (&srv.tls, w.shared.server_tls(b, server)) {
        (Some(settings), Some(config)) => {
            let (name, key) = upstream::server_name(settings, host, address.ip());
            Some(upstream::TlsTarget { config, name, key })
        }
        _ => None,
    };
    if !fresh {
        let key = tls.as_ref().and_then(|t| t.key.as_deref());
        let origin = proxy.map(|(_, origin)| origin);
        if let Some(conn) = w.pools.checkout(b, server, key, origin, address) {
            return Ok((conn, true));
        }
    }
    let connect = upstream::connect(address, be.timeouts.connect, tls, proxy);
    let conn = Profiled::new(Kind::Connect, connect).await?;
    bump(&w.stats.servers[b][server].connects);
    Ok((conn, false))
}

/// Sends the request on `conn` and relays the exchange. `sent` bytes of the client buffer are
/// the head (`hlen`) and the body bytes that go with it.
async fn exchange<S: ClientStream>(
    s: &mut Session<S>,
    conn: &mut ServerConn,
    sent: usize,
    hlen: usize,
    reader: tern_h1::BodyReader,
    resendable: bool,
) -> Outcome {
    let fe = s.w.shared.frontend(s.frontend);
    let be = s.w.shared.backend(s.backend);
    let (client_timeout, server_timeout) = (fe.timeouts.client, be.timeouts.server);
    let w = Rc::clone(&s.w);
    // `httpclose` on the frontend: the response says `Connection: close`, as when draining.
    let close_client = fe.connection_mode == ConnectionMode::Close;
    let stopping = || close_client || w.is_stopping();
    let info = s.head.info();
    let expect = s.head.expect_continue() && !reader.is_done();
    s.out.clear();
    let be_cfg = s.w.shared.backend(s.backend);
    let edits = Edits {
        cookie: persist::request_edit(be_cfg),
        extra: if closes_server(s) { CLOSE_LINE } else { &[] },
        headers: Some(&s.req_edits),
    };
    write_request_edited(&s.head, s.buf.data(), &s.fwd, &edits, &mut s.out);
    s.out.extend_from_slice(&s.buf.data()[hlen..sent]);
    let up = Upload::new(s.out.len(), reader, expect);
    // Kept in the buffer while the request may have to be sent again; otherwise dropped now,
    // and the buffer serves the upload.
    let request_bytes = if resendable { sent } else { 0 };
    if !resendable {
        s.buf.consume(sent);
    }
    let relay = Relay::new(
        ClientSide {
            io: &mut s.io,
            buf: &mut s.buf,
            out: &mut s.out,
            timer: &mut s.client_timer,
            timeout: client_timeout,
            extra: &s.extra,
            rules: ResponseRules {
                backend: &be.http_response,
                frontend: &fe.http_response,
                conn: &s.conn,
                edits: &mut s.resp_edits,
            },
        },
        ServerSide {
            conn,
            timer: &mut s.server_timer,
            timeout: server_timeout,
        },
        &stopping,
        info,
        up,
        request_bytes,
    );
    Profiled::new(Kind::Response, relay.run()).await
}

/// Counts the outcome, returns the server connection to the pool when it is clean, and
/// answers or ends the client connection.
async fn judge<S: ClientStream>(
    s: &mut Session<S>,
    outcome: Outcome,
    conn: ServerConn,
    server: usize,
    head_only: bool,
) -> Next {
    let w = Rc::clone(&s.w);
    let fc = &w.stats.frontends[s.frontend];
    let bc = &w.stats.backends[s.backend];
    if let Some(status) = outcome.status {
        count_status(fc, status);
    }
    let (fault, stage) = match outcome.end {
        End::Complete {
            keep_client,
            reuse_server,
        } => {
            if reuse_server && !closes_server(s) {
                w.pools.checkin(s.backend, server, conn);
            }
            return if keep_client {
                Next::KeepAlive
            } else {
                Next::Close
            };
        }
        End::Failed { fault, stage, .. } => (fault, stage),
    };
    drop(conn);
    debug!(error = %fault, ?stage, "exchange failed");
    let page = blame(fc, bc, &fault, stage);
    match (stage, &fault) {
        // A client that half-closed mid-body may still read the 400; one that reset cannot.
        (Stage::Head, Fault::ClientIo(_)) => Next::Abort,
        (Stage::Head, _) => s.answer(page, false, head_only).await,
        _ => Next::Abort,
    }
}

/// Counts a failed exchange against the side at fault, and picks the page that answers it
/// (sent only when the response had not started).
fn blame(fc: &FrontendCounters, bc: &BackendCounters, fault: &Fault, stage: Stage) -> Page {
    match (fault, stage) {
        (Fault::ClientTimeout, _) => {
            bump(&fc.client_timeouts);
            Page::RequestTimeout
        }
        (Fault::ClientClosed | Fault::ClientIo(_), _) => {
            bump(&fc.client_aborts);
            Page::BadRequest
        }
        (Fault::BadRequestBody(_), _) => {
            bump(&fc.bad_requests);
            Page::BadRequest
        }
        (Fault::ServerTimeout, Stage::Head | Stage::Done) => {
            bump(&bc.server_timeouts);
            Page::GatewayTimeout
        }
        (Fault::ServerClosed | Fault::ServerIo(_) | Fault::BadResponse(_), Stage::Head) => {
            bump(&bc.upstream_errors);
            Page::BadGateway
        }
        // The response was complete; only the rest of the upload failed.
        (Fault::ServerClosed | Fault::ServerIo(_) | Fault::BadResponse(_), Stage::Done) => {
            Page::BadGateway
        }
        (
            Fault::ServerTimeout | Fault::ServerClosed | Fault::ServerIo(_) | Fault::BadResponse(_),
            Stage::Body,
        ) => {
            bump(&bc.aborted_responses);
            Page::BadGateway
        }
    }
}
