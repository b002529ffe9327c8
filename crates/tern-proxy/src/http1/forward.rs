//! Forwarding one HTTP/1.1 request once it has a backend: a server and a connection from the
//! exchange layer ([`crate::exchange`]), then the head sent, the relay, and the outcome judged.
//!
//! - **Sending.** The rewritten head and the body bytes that came with it leave in one write.
//!   `Expect: 100-continue` is answered with `100 Continue` once the head is out (the header
//!   itself is not forwarded), then [`Relay`] carries the rest.
//! - **Sending again.** A pooled connection can turn out closed by the server only once the
//!   request is on it. If nothing at all came back (end of stream or reset before any response
//!   byte), the request is idempotent and all of it is still in the client buffer (no body byte
//!   was read past what came with the head), it is sent again on a fresh connection to the same
//!   server, at most [`MAX_RESENDS`] times. Otherwise tern never replays a request. A TLS
//!   server refusing the session with an alert in place of the first response on a new
//!   connection (a TLS 1.3 client-certificate refusal) counts as a failed connect; the request
//!   is retried only if it is still whole in the buffer (else 502).
//! - **Judging.** A complete exchange returns the server connection to the pool when both
//!   messages ended cleanly and the server keeps it alive, unless the frontend or the backend
//!   is in server-close or close mode (`connection_mode`, HAProxy's `http-server-close` and
//!   `httpclose`): the request then said `Connection: close` and the connection is dropped.
//!   A fault before the response started is answered with a page (408, 400, 502, 504) blaming
//!   the right side and the connection is closed, since part of the request body may be unread;
//!   a fault after it cuts the response, and the client connection is dropped so that it cannot
//!   take the response as complete. Passive checks get each exchange's outcome. A `101` that
//!   accepted an upgrade request turns both connections into a tunnel (`switch.rs`); the
//!   server connection is never pooled after it.

use std::rc::Rc;

use tern_config::{ConnectionMode, WsProto};
use tern_h1::local::Page;
use tern_h1::{write_request_edited, Edits, H1Error, Method};
use tracing::{debug, warn};

use crate::compress;
use crate::exchange::attempt::Attempt;
use crate::exchange::connect::{obtain, proxied};
use crate::exchange::h2::is_unsupported;
use crate::exchange::observe::{observe, Seen};
use crate::exchange::persist::{self, Persisted};
use crate::exchange::pick::{pick_server, refusal_state};
use crate::exchange::servers::BackendState;
use crate::exchange::upstream::{self, ServerConn};
use crate::exchange::websocket::is_websocket;
use crate::http1::conn::{count_status, H1Conn, Next};
use crate::http1::relay::{
    ClientSide, End, Fault, Outcome, Relay, ResponseRules, ServerSide, Stage, Upload,
};
use crate::listen::client::ClientStream;
use crate::profiling::{Kind, Profiled};
use crate::stats::{add, bump, BackendCounters, FrontendCounters};

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

/// Whether the exchange failed because its HTTP/2 server takes no WebSocket (no extended
/// CONNECT): nothing was sent, and neither a retry nor another connection would change that.
fn upgrade_unsupported(outcome: &Outcome) -> bool {
    matches!(&outcome.end, End::Failed { fault: Fault::ServerIo(e), .. } if is_unsupported(e))
}

/// Classifies an exchange for passive checks. A server that takes no WebSocket over HTTP/2 is
/// a configuration matter, not a failing server: the exchange counts as fine.
fn seen(outcome: &Outcome) -> Seen {
    if upgrade_unsupported(outcome) {
        return Seen::Fine;
    }
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

/// The request being forwarded: what of it is in the client buffer, and its way to a server.
struct Outgoing {
    /// Length of the head at the front of the buffer.
    hlen: usize,
    /// Bytes of the buffer that leave with the head: the head and the body bytes that came
    /// with it.
    sent: usize,
    /// The whole request, body included, is in the buffer.
    complete: bool,
    /// The request may be sent again: it is idempotent and complete.
    resendable: bool,
    /// A HEAD request: answers carry no body.
    head_only: bool,
    /// The server persistence names, if any.
    persisted: Persisted,
    attempt: Attempt,
    /// Times the request was sent again after a pooled connection closed under it.
    resends: usize,
    /// The next try opens a new connection rather than take a pooled one.
    fresh: bool,
}

/// What one try of the request on a server led to.
enum Try {
    /// Try again: another server, or a new connection to the same one.
    Again,
    /// Done: what the client connection does next.
    Done(Next),
}

impl<S: ClientStream> H1Conn<S> {
    /// Forwards the request whose head (`hlen` bytes) is at the front of the session's buffer
    /// to a server of the backend routing chose, and relays the response.
    pub(super) async fn forward(&mut self, hlen: usize) -> Next {
        let w = Rc::clone(&self.w);
        let b = self.backend;
        bump(&self.backend_counters().requests);
        let head_only = self.head.method() == Method::Head;
        // The body bytes that arrived with the head leave with it.
        let mut reader = self.head.body_reader(&self.limits);
        let first = match reader.advance(&self.buf.data()[hlen..]) {
            Ok(p) => p,
            Err(e) => return self.refuse_body(e, head_only).await,
        };
        let sent = hlen + first.used;
        let resendable = first.done && idempotent(self.head.method());
        if let Some(log) = self.log.as_deref_mut() {
            log.backend(b);
            log.received(first.used);
        }
        let Some(state) = w.balancers.state(b) else {
            if let Some(log) = self.log.as_deref_mut() {
                log.no_server(*b"SC");
            }
            return self.unavailable(sent, first.done, head_only).await;
        };
        let be = w.shared.backend(b);
        let mut out = Outgoing {
            hlen,
            sent,
            complete: first.done,
            resendable,
            head_only,
            persisted: persist::lookup(be, state, &self.head, self.buf.data(), self.peer),
            attempt: Attempt::new(&w, b),
            resends: 0,
            fresh: false,
        };
        loop {
            if let Try::Done(next) = self.try_server(&mut out, state).await {
                return next;
            }
        }
    }

    /// Answers 400 to a request whose body framing is invalid from its first bytes.
    async fn refuse_body(&mut self, e: H1Error, head_only: bool) -> Next {
        debug!(error = %e, "invalid request body");
        bump(&self.counters().bad_requests);
        if let Some(log) = self.log.as_deref_mut() {
            log.refused(*b"PD");
        }
        self.answer(Page::BadRequest, false, head_only).await
    }

    /// One try of the request: its server (picked, or the one whose slot it holds), a
    /// connection, the exchange, and what the outcome says to do.
    async fn try_server(&mut self, out: &mut Outgoing, state: &BackendState) -> Try {
        let server = match self.server_for(out).await {
            Ok(server) => server,
            Err(next) => return Try::Done(next),
        };
        let (mut conn, reused) = match self.connect(out, server).await {
            Ok(got) => got,
            Err(timed_out) => return self.connect_failed(out, server, timed_out).await,
        };
        let w = Rc::clone(&self.w);
        let be = w.shared.backend(self.backend);
        if let Some(log) = self.log.as_deref_mut() {
            log.connected();
        }
        // Remembered whether or not the server connection came from the pool: a pooled
        // connection may have served another client, and this one's entry is still new.
        if !out.attempt.persisted() {
            persist::remember(state, self.peer, server);
        }
        persist::response_fields(
            be,
            server,
            &out.persisted,
            self.head.method(),
            &mut self.extra,
        );
        let outcome = self.send_and_relay(&mut conn, out).await;
        if let (Some(picked), Some(at)) = (out.attempt.inflight(), outcome.responded_at) {
            picked.responded(at);
        }
        if let Some(again) = self.try_again(out, server, reused, &outcome).await {
            return again;
        }
        observe(be, state, server, seen(&outcome));
        if let Some(log) = self.log.as_deref_mut() {
            log.relayed(&outcome);
        }
        self.count_relayed(out, server, reused, &outcome);
        Try::Done(self.judge(outcome, conn, server, out.head_only).await)
    }

    /// The server of this try: the one whose slot the request holds, else one picked for it
    /// (`Err`: none could take it, answered 503).
    async fn server_for(&mut self, out: &mut Outgoing) -> Result<usize, Next> {
        if let Some(server) = out.attempt.server() {
            return Ok(server);
        }
        let w = Rc::clone(&self.w);
        let b = self.backend;
        let placement = out.attempt.placement(out.persisted.server);
        let request = Some((&self.head, self.buf.data()));
        let picked = pick_server(&w, b, request, self.peer, placement).await;
        match picked {
            Ok(picked) => {
                if let Some(log) = self.log.as_deref_mut() {
                    log.picked(picked.server());
                }
                Ok(out.attempt.hold(picked))
            }
            Err(refusal) => {
                debug!(backend = %w.shared.backend(b).name, %refusal, "no server");
                bump(&self.backend_counters().no_server);
                if let Some(log) = self.log.as_deref_mut() {
                    log.no_server(refusal_state(&refusal));
                }
                Err(self
                    .unavailable(out.sent, out.complete, out.head_only)
                    .await)
            }
        }
    }

    /// A connection to `server` (true: reused from the pool); `Err` when it could not be opened
    /// (true: timed out), logged.
    async fn connect(
        &mut self,
        out: &mut Outgoing,
        server: usize,
    ) -> Result<(ServerConn, bool), bool> {
        let w = Rc::clone(&self.w);
        let b = self.backend;
        let srv = &w.shared.backend(b).servers[server];
        let host = self.head.host().map(|h| h.get(self.buf.data()));
        let fresh = std::mem::take(&mut out.fresh);
        let proxy = proxied(&self.io, &self.addrs, srv);
        let websocket = srv.ws != WsProto::Auto && is_websocket(&self.head, self.buf.data());
        match obtain(&w, b, server, (fresh, websocket), host, proxy).await {
            Ok(got) => Ok(got),
            Err(e) => {
                let backend = &w.shared.backend(b).name;
                if e.is_tls() {
                    warn!(%backend, server = %srv.name, error = %e, "connect failed");
                } else {
                    debug!(%backend, server = %srv.name, error = %e, "connect failed");
                }
                Err(matches!(e, upstream::ConnectError::Timeout { .. }))
            }
        }
    }

    /// After a failed connect to `server`: try again if retries allow, else answer 503.
    async fn connect_failed(&mut self, out: &mut Outgoing, server: usize, timed_out: bool) -> Try {
        let w = Rc::clone(&self.w);
        if out
            .attempt
            .failed_to_connect(&w, server, timed_out, self.log.as_deref_mut())
        {
            return Try::Again;
        }
        Try::Done(
            self.unavailable(out.sent, out.complete, out.head_only)
                .await,
        )
    }

    /// Whether the try is to be repeated although the exchange ran: the server refused the TLS
    /// session of a new connection (handled as a failed connect), or a reused connection closed
    /// before any response byte (sent again on a new one). `None`: the outcome stands.
    async fn try_again(
        &mut self,
        out: &mut Outgoing,
        server: usize,
        reused: bool,
        outcome: &Outcome,
    ) -> Option<Try> {
        let w = Rc::clone(&self.w);
        let be = w.shared.backend(self.backend);
        if let (false, Some(alert)) = (reused, refused_session(outcome)) {
            warn!(backend = %be.name, server = %be.servers[server].name, ?alert,
                "server refused the TLS session after the handshake (its client certificate check?)");
            // Nothing reached the server's application. A request still whole in the buffer
            // is handled as after a failed connect (retried, else 503); any other is answered
            // as a fault (502).
            if out.resendable {
                return Some(self.connect_failed(out, server, false).await);
            }
        }
        if let End::Failed {
            fault: Fault::ServerClosed | Fault::ServerIo(_),
            stage: Stage::Head,
            received: false,
        } = outcome.end
        {
            if upgrade_unsupported(outcome) {
                return None;
            }
            if reused && out.resendable && out.resends < MAX_RESENDS {
                debug!(backend = %be.name, server = %be.servers[server].name, "pooled connection closed, sending again");
                out.resends += 1;
                out.fresh = true;
                if let Some(log) = self.log.as_deref_mut() {
                    log.retried(false);
                }
                return Some(Try::Again);
            }
        }
        None
    }

    /// Counts a relayed exchange on `server`: requests, reuse, and bytes both ways for the
    /// server, its backend and the frontend.
    fn count_relayed(&self, out: &Outgoing, server: usize, reused: bool, outcome: &Outcome) {
        let stats = &self.w.stats;
        let b = self.backend;
        let (sc, bc, fc) = (
            &stats.servers[b][server],
            &stats.backends[b],
            &stats.frontends[self.frontend],
        );
        bump(&sc.requests);
        if reused {
            bump(&sc.reused);
        }
        let (up, down) = (out.sent as u64 + outcome.uploaded, outcome.sent);
        for (bytes_in, bytes_out) in [
            (&sc.bytes_in, &sc.bytes_out),
            (&bc.bytes_in, &bc.bytes_out),
            (&fc.bytes_in, &fc.bytes_out),
        ] {
            add(bytes_in, up);
            add(bytes_out, down);
        }
    }

    /// Answers 503; the connection stays open if the whole request (`sent` bytes) was received.
    async fn unavailable(&mut self, sent: usize, complete: bool, head_only: bool) -> Next {
        if complete {
            self.buf.consume(sent);
        }
        self.answer(Page::Unavailable, complete, head_only).await
    }

    /// Whether the server connection of the current request closes after the response
    /// (`connection_mode` of the frontend or of the backend, see `tern_config::ConnectionMode`).
    fn closes_server(&self) -> bool {
        ConnectionMode::closes_server(
            self.frontend_config().connection_mode,
            self.backend_config().connection_mode,
        )
    }

    /// Writes the rewritten head and the body bytes that came with it (a chunked body
    /// re-framed, see [`tern_h1::BodyReader::forward`]) into the output buffer, which the relay
    /// sends first; the upload that follows.
    fn write_head(&mut self, out: &Outgoing) -> Result<Upload, H1Error> {
        self.out.clear();
        let close = self.closes_server();
        // Borrows the worker's field only, not the whole session: `out` is written below.
        let be = self.w.shared.backend(self.backend);
        let edits = Edits {
            cookie: persist::request_edit(be),
            extra: if close { CLOSE_LINE } else { &[] },
            headers: Some(&self.req_edits),
        };
        let (head, buf) = (&self.head, self.buf.data());
        write_request_edited(head, buf, &self.fwd, &edits, &mut self.out);
        // `forward` read the same bytes with the same kind of reader without error.
        let mut reader = head.body_reader(&self.limits);
        reader.forward_into(&buf[out.hlen..out.sent], &mut self.out)?;
        let expect = head.expect_continue() && !reader.is_done();
        Ok(Upload::new(self.out.len(), reader, expect))
    }

    /// Sends the request on `conn` and relays the exchange.
    async fn send_and_relay(&mut self, conn: &mut ServerConn, out: &Outgoing) -> Outcome {
        let w = Rc::clone(&self.w);
        let (fe, be) = (
            w.shared.frontend(self.frontend),
            w.shared.backend(self.backend),
        );
        // `httpclose` on the frontend: the response says `Connection: close`, as when draining.
        let close_client = fe.connection_mode == ConnectionMode::Close;
        let stopping = || close_client || w.is_stopping();
        let info = self.head.info();
        // Before the head is written: with `offload`, the coding chosen removes the request's
        // Accept-Encoding. Two `None` checks when neither side compresses.
        let compress = compress::negotiate(
            fe.compression.as_ref(),
            be.compression.as_ref(),
            &self.head,
            self.buf.data(),
            &mut self.req_edits,
        );
        let up = match self.write_head(out) {
            Ok(up) => up,
            Err(e) => return Outcome::refused(e),
        };
        // Kept in the buffer while the request may have to be sent again; otherwise dropped now,
        // and the buffer serves the upload.
        let request_bytes = if out.resendable { out.sent } else { 0 };
        if !out.resendable {
            self.buf.consume(out.sent);
        }
        let relay = Relay::new(
            ClientSide {
                io: &mut self.io,
                buf: &mut self.buf,
                out: &mut self.out,
                timer: &mut self.client_timer,
                timeout: fe.timeouts.client,
                extra: &self.extra,
                rules: ResponseRules {
                    backend: &be.http_response,
                    frontend: &fe.http_response,
                    conn: &self.conn,
                    pp_tlvs: self.addrs.pp_tlvs(),
                    edits: &mut self.resp_edits,
                    vars: &self.vars,
                    captures: self
                        .log
                        .as_deref_mut()
                        .filter(|_| !fe.request_log.capture_response.is_empty())
                        .map(|log| (&fe.request_log.capture_response[..], log)),
                },
                compress,
            },
            ServerSide {
                conn,
                timer: &mut self.server_timer,
                timeout: be.timeouts.server,
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
    async fn judge(
        &mut self,
        outcome: Outcome,
        conn: ServerConn,
        server: usize,
        head_only: bool,
    ) -> Next {
        let w = Rc::clone(&self.w);
        let fc = &w.stats.frontends[self.frontend];
        let bc = &w.stats.backends[self.backend];
        if let Some(status) = outcome.status {
            count_status(fc, status);
        }
        let track = &mut self.vars.get_mut().track;
        if !track.is_idle() {
            if let Some(status) = outcome.status {
                track.answered(status);
            }
            track.transferred(outcome.uploaded, outcome.sent);
        }
        let (fault, stage) = match outcome.end {
            End::Complete {
                keep_client,
                reuse_server,
            } => {
                if reuse_server && !self.closes_server() {
                    w.pools.checkin(self.backend, server, conn);
                }
                return if keep_client {
                    Next::KeepAlive
                } else {
                    Next::Close
                };
            }
            // Boxed: a tunnel's future is large and rare; inline, every request's future
            // would carry (and copy) its size.
            End::Switched => return Box::pin(self.tunnel(conn, server)).await,
            End::Failed { fault, stage, .. } => (fault, stage),
        };
        drop(conn);
        if let Fault::ResponseReturned { backend, index } = fault {
            bump(&fc.intercepted);
            return self.response_return(backend, index, head_only).await;
        }
        debug!(error = %fault, ?stage, "exchange failed");
        let page = blame(fc, bc, &fault, stage);
        match (stage, &fault) {
            // A client that half-closed mid-body may still read the 400; one that reset cannot.
            (Stage::Head, Fault::ClientIo(_)) => Next::Abort,
            (Stage::Head, _) => self.answer(page, false, head_only).await,
            _ => Next::Abort,
        }
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
        // Refused before anything of it was sent (the rules run on the head).
        (Fault::ResponseDenied(status), _) => {
            bump(&fc.denied);
            Page::Denied(*status)
        }
        // Answered in `judge`.
        (Fault::ResponseReturned { .. }, _) => Page::BadGateway,
        // tern's own failure; counted nowhere else, logged by the caller.
        (Fault::Encoder(_), _) => Page::BadGateway,
    }
}
