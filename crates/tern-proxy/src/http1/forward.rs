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
//!   take the response as complete. Passive checks get each exchange's outcome.

use std::rc::Rc;

use tern_config::ConnectionMode;
use tern_h1::local::Page;
use tern_h1::{write_request_edited, Edits, Method};
use tracing::{debug, warn};

use crate::exchange::attempt::Attempt;
use crate::exchange::connect::{obtain, origin};
use crate::exchange::observe::{observe, Seen};
use crate::exchange::persist;
use crate::exchange::pick::{pick_server, refusal_state};
use crate::exchange::upstream::{self, ServerConn};
use crate::http1::conn::{count_status, Next, Session};
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
    let mut attempt = Attempt::new(&w, b);
    let mut resends = 0;
    let mut fresh = false;
    loop {
        let server = match attempt.server() {
            Some(server) => server,
            None => match pick_server(
                &w,
                b,
                &s.head,
                s.buf.data(),
                s.peer,
                attempt.placement(persisted.server),
            )
            .await
            {
                Ok(picked) => {
                    if let Some(log) = s.log.as_deref_mut() {
                        log.placed(picked.server());
                    }
                    attempt.hold(picked)
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
                if attempt.failed_to_connect(&w, server, timed_out, s.log.as_deref_mut()) {
                    continue;
                }
                return unavailable(s, sent, first.done, head_only).await;
            }
        };
        if let Some(log) = s.log.as_deref_mut() {
            log.connected();
        }
        if !reused && !attempt.persisted() {
            persist::remember(state, s.peer, server);
        }
        persist::response_fields(be, server, &persisted, s.head.method(), &mut s.extra);
        let outcome = exchange(s, &mut conn, sent, hlen, reader.clone(), resendable).await;
        if let (Some(picked), Some(at)) = (attempt.inflight(), outcome.responded_at) {
            picked.responded(at);
        }
        if let (false, Some(alert)) = (reused, refused_session(&outcome)) {
            warn!(backend = %be.name, server = %be.servers[server].name, ?alert,
                "server refused the TLS session after the handshake (its client certificate check?)");
            // Nothing reached the server's application. A request still whole in the buffer
            // is handled as after a failed connect (retried, else 503); any other is answered
            // as a fault below (502).
            if resendable {
                if attempt.failed_to_connect(&w, server, false, s.log.as_deref_mut()) {
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
