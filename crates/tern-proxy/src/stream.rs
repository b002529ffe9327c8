//! One request/response exchange (a stream): answer locally or forward to a server.

use std::convert::Infallible;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use http::header::HOST;
use http::{Request, Response, StatusCode, Version};
use hyper::body::Incoming;
use hyper::client::conn::TrySendError;
use tokio::time::Instant;
use tracing::debug;

use crate::body::{
    body_error, BodyError, Content, ProxyBody, RequestBody, ResponseBody, Upload, UploadState,
};
use crate::headers;
use crate::local::page;
use crate::phase::StreamGuard;
use crate::pool::{Lease, Sender};
use crate::session::SessionCtx;
use crate::stats::{bump, FrontendCounters};
use crate::upstream;

/// How many servers a request may try when connections fail before anything was sent.
const MAX_ATTEMPTS: usize = 3;

/// How many times a request that never left (its pooled connection turned out closed) is sent
/// again on a fresh connection to the same server.
const MAX_RESENDS: usize = 2;

/// hyper's service entry point: never fails, every outcome is a response.
pub(crate) async fn handle(
    s: Rc<SessionCtx>,
    req: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    let guard = s.phase.start_stream();
    let counters = &s.worker.stats.frontends[s.frontend];
    bump(&counters.requests);
    let fe = &s.worker.shared.snapshot.config.frontends[s.frontend];
    let resp = if req.headers().get_all(HOST).iter().nth(1).is_some() {
        // RFC 9112 §3.2: a request with more than one Host is invalid; which one a server would
        // believe is exactly the ambiguity request smuggling feeds on.
        bump(&counters.bad_requests);
        page(StatusCode::BAD_REQUEST, true)
    } else if headers::has_foreign_transfer_coding(req.headers()) {
        bump(&counters.bad_requests);
        page(StatusCode::NOT_IMPLEMENTED, true)
    } else if fe.monitor_uri.as_deref() == Some(req.uri().path()) {
        bump(&counters.monitor);
        page(StatusCode::OK, false)
    } else {
        forward(&s, req, guard.hold()).await
    };
    count_status(counters, resp.status());
    Ok(resp.map(|content| ProxyBody::new(content, guard)))
}

fn count_status(c: &FrontendCounters, status: StatusCode) {
    let counter = match status.as_u16() {
        100..=199 => &c.resp_1xx,
        200..=299 => &c.resp_2xx,
        300..=399 => &c.resp_3xx,
        400..=499 => &c.resp_4xx,
        _ => &c.resp_5xx,
    };
    bump(counter);
}

/// Why no response head came back from a server.
enum HeadError {
    /// The request never left: the connection was not usable. The request is intact.
    NotSent(Box<Request<RequestBody>>),
    Timeout,
    Failed(hyper::Error),
}

async fn forward(s: &SessionCtx, req: Request<Incoming>, guard: StreamGuard) -> Response<Content> {
    let w = &s.worker;
    let b = s.backend;
    let be = &w.shared.snapshot.config.backends[b];
    let fe = &w.shared.snapshot.config.frontends[s.frontend];
    let bc = &w.stats.backends[b];
    bump(&bc.requests);

    let (mut parts, body) = req.into_parts();
    headers::prepare_request(&mut parts, &s.forwarding);
    let (body, upload) = RequestBody::new(body, fe.timeouts.client, guard);
    let mut req = Request::from_parts(parts, body);

    let attempts = be.servers.len().clamp(1, MAX_ATTEMPTS);
    let mut failures = 0;
    let mut resends = 0;
    // Set when the request must go again to this server, on a fresh connection.
    let mut resend_to: Option<usize> = None;
    loop {
        let fresh = resend_to.is_some();
        let Some(server) = resend_to.take().or_else(|| w.pick(b)) else {
            bump(&bc.no_server);
            return page(StatusCode::SERVICE_UNAVAILABLE, false);
        };
        let sc = &w.stats.servers[b][server];
        let (sender, reused) = match obtain(s, b, server, fresh).await {
            Ok(got) => got,
            Err(e) => {
                debug!(backend = %be.name, server = %be.servers[server].name, error = %e, "connect failed");
                bump(&bc.connect_errors);
                bump(&sc.connect_errors);
                failures += 1;
                if failures >= attempts {
                    bump(&bc.no_server);
                    return page(StatusCode::SERVICE_UNAVAILABLE, false);
                }
                bump(&bc.redispatches);
                continue;
            }
        };
        let mut lease = Lease::new(Rc::clone(&w.pools), b, server, sender);
        let sent = lease.sender().try_send_request(req);
        let result = await_head(sent, &upload, be.timeouts.server).await;
        if !matches!(result, Err(HeadError::NotSent(_))) {
            bump(&sc.requests);
            if reused {
                bump(&sc.reused);
            }
        }
        match result {
            Ok(resp) if headers::has_foreign_transfer_coding(resp.headers()) => {
                debug!(backend = %be.name, "response with a transfer coding other than chunked");
                bump(&bc.upstream_errors);
                return page(StatusCode::BAD_GATEWAY, true);
            }
            Ok(resp) => return relay(s, b, resp, lease, upload),
            Err(HeadError::NotSent(back)) if resends < MAX_RESENDS => {
                resends += 1;
                req = *back;
                resend_to = Some(server);
            }
            Err(HeadError::NotSent(_)) => {
                bump(&bc.upstream_errors);
                return page(StatusCode::BAD_GATEWAY, false);
            }
            Err(HeadError::Timeout) => {
                bump(&bc.server_timeouts);
                return page(StatusCode::GATEWAY_TIMEOUT, true);
            }
            Err(HeadError::Failed(e)) => return failed(s, b, &e),
        }
    }
}

/// An idle pooled connection that is ready for a request, or a new one.
async fn obtain(
    s: &SessionCtx,
    b: usize,
    server: usize,
    fresh: bool,
) -> Result<(Sender, bool), upstream::ConnectError> {
    let w = &s.worker;
    let be = &w.shared.snapshot.config.backends[b];
    while let Some(mut sender) = (!fresh).then(|| w.pools.checkout(b, server)).flatten() {
        // A connection just handed back may need one turn of its task to become ready.
        match tokio::time::timeout(be.timeouts.connect, sender.ready()).await {
            Ok(Ok(())) => return Ok((sender, true)),
            _ => continue,
        }
    }
    let sender = upstream::connect(be.servers[server].address, be.timeouts.connect).await?;
    bump(&w.stats.servers[b][server].connects);
    Ok((sender, false))
}

/// Waits for the response head. The `server` timeout runs from the end of the request upload,
/// so a long upload is not mistaken for a silent server; during the upload it runs while the
/// server is not taking the body (a server that stopped reading), and not while tern waits for
/// the client's next piece (that is the `client` timeout's business).
async fn await_head(
    sent: impl std::future::Future<
        Output = Result<Response<Incoming>, TrySendError<Request<RequestBody>>>,
    >,
    upload: &Upload,
    timeout: Duration,
) -> Result<Response<Incoming>, HeadError> {
    tokio::pin!(sent);
    let mut deadline = head_deadline(upload, timeout, None);
    loop {
        tokio::select! {
            r = &mut sent => {
                return r.map_err(|mut e| match e.take_message() {
                    Some(req) => HeadError::NotSent(Box::new(req)),
                    None => HeadError::Failed(e.into_error()),
                });
            }
            () = tokio::time::sleep_until(deadline) => {
                let now = Instant::now();
                deadline = head_deadline(upload, timeout, Some(now));
                if deadline <= now {
                    return Err(HeadError::Timeout);
                }
            }
        }
    }
}

/// When the server has been silent for `timeout`, given where the upload stands. While tern waits
/// for the client the server is not to blame: the deadline moves to `now + timeout` (`now` is
/// read only when needed; the upload's start stands in for it on the first call).
fn head_deadline(upload: &Upload, timeout: Duration, now: Option<Instant>) -> Instant {
    let since = match upload.state() {
        UploadState::Done(at) | UploadState::WaitingOnServer(at) => at,
        UploadState::WaitingOnClient => now.unwrap_or_else(|| upload.started()),
    };
    since + timeout
}

/// Passes the server's response on to the client.
fn relay(
    s: &SessionCtx,
    b: usize,
    resp: Response<Incoming>,
    lease: Lease,
    upload: Rc<Upload>,
) -> Response<Content> {
    let w = &s.worker;
    let timeout = w.shared.snapshot.config.backends[b].timeouts.server;
    let (mut parts, body) = resp.into_parts();
    headers::prepare_response(&mut parts.headers);
    parts.version = Version::HTTP_11;
    let body = ResponseBody::new(body, timeout, lease, upload, Arc::clone(&w.stats), b);
    Response::from_parts(parts, Content::Upstream(body))
}

/// Answers a failed exchange, blaming the right side.
fn failed(s: &SessionCtx, b: usize, e: &hyper::Error) -> Response<Content> {
    let w = &s.worker;
    let fc = &w.stats.frontends[s.frontend];
    match body_error(e) {
        Some(BodyError::ClientTimeout(_)) => {
            bump(&fc.client_timeouts);
            page(StatusCode::REQUEST_TIMEOUT, true)
        }
        Some(_) => {
            bump(&fc.client_aborts);
            page(StatusCode::BAD_REQUEST, true)
        }
        None => {
            debug!(error = %e, "server failed before its response head");
            bump(&w.stats.backends[b].upstream_errors);
            page(StatusCode::BAD_GATEWAY, true)
        }
    }
}
