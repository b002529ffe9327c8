//! The load generator's HTTP/2 client (`--h2`): each connection keeps `-m` streams in flight,
//! as `h2load -m` does, on ALPN `h2` over TLS or with prior knowledge (h2c) on `http://`.
//!
//! Why the `h2` crate and not a hand-written codec like `http1.rs`: HTTP/2 needs HPACK, flow
//! control, SETTINGS and stream state; the `h2` crate (hyper's, tonic's) does those, and its
//! cost per request was measured against `h2load` on the same origin (BENCHMARKS.md, "tern
//! bench --h2 against h2load"). What is kept cheap here: the request is a prebuilt URI and
//! header cloned per stream (reference counts, no parsing), both flow-control windows are
//! opened to 2^30 − 1 bytes at the start (h2load's `-w 30 -W 30`) so window updates are rare,
//! response bodies are counted and dropped, and the connection is the same rustls connection as
//! HTTP/1.1's (`conn/poll_io.rs`), so the handshake is timed and checked in one place.
//!
//! Load model (closed loop only): a connection task connects, then runs `-m` stream loops, each
//! sending its next request when its last response ended; the first request of each stream
//! counts the connect and handshake it waited for. `--requests-per-conn N` ends a connection
//! after N requests over all its streams. When every stream loop ended (the budget is spent, the
//! server said GOAWAY, or the connection broke) the task connects again.
//!
//! What counts as what, per request: a response is recorded by status as for HTTP/1.1 (time to
//! first byte = the response HEADERS, last byte = END_STREAM); a stream the server reset is a
//! `protocol` error and the connection carries on; a broken connection is an `io` error (or
//! `protocol` for a GOAWAY with an error code) for each of its stream loops; a request over
//! `--timeout` is a `timeout` and its stream is cancelled (RST_STREAM), not the connection.
//! Requests the server refused with a graceful GOAWAY (NO_ERROR) were never processed and are
//! not errors: their stream loops end and the connection is replaced, as an HTTP/1.1 client
//! reconnects after `Connection: close`.
//!
//! **The deadline.** No request is sent once the run's end has passed, and one whose response
//! had not ended by then is *abandoned* (`Stats::abandoned`): neither a request nor an error,
//! reported on its own. So every request sent is counted, failed, or abandoned, and a server
//! sees at most `-c` × `-m` requests more than the report counts. (Before, a thread whose tasks
//! ran on past the end, before its timer stopped them, recorded nothing for responses that
//! ended then, and sent the next request on each of those streams: the server saw up to one
//! more window of requests that no count accounted for.)

use std::cell::Cell;
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use h2::client::SendRequest;
use http::header::USER_AGENT;
use http::{HeaderValue, Request, Uri};
use tokio::task::JoinSet;
use tokio::time::timeout_at;

use crate::args::Target;
use crate::conn::{establish, Ctx, Link};
use crate::stats::ErrorKind;

/// Both flow-control windows (stream and connection): the largest HTTP/2 allows, as h2load's
/// default `-w 30 -W 30`, so the client never holds a response back.
const WINDOW: u32 = (1 << 30) - 1;

/// What every HTTP/2 stream of a run sends.
#[derive(Debug)]
pub(crate) struct H2Plan {
    /// Streams each connection keeps in flight (`-m`).
    pub streams: u32,
    /// The absolute URI (`:scheme`, `:authority` and `:path` come from it).
    uri: Uri,
    user_agent: HeaderValue,
}

impl H2Plan {
    /// GET `target` on `streams` streams per connection; `None` if the URL is no valid URI.
    pub fn new(target: &Target, streams: u32) -> Option<Self> {
        Some(Self {
            streams,
            uri: target.to_string().parse().ok()?,
            user_agent: HeaderValue::from_static("tern-bench"),
        })
    }

    fn request(&self) -> Request<()> {
        let mut request = Request::new(());
        *request.uri_mut() = self.uri.clone();
        request
            .headers_mut()
            .insert(USER_AGENT, self.user_agent.clone());
        request
    }
}

/// One closed-loop HTTP/2 connection after another, each with `-m` streams in flight, until
/// the thread is stopped.
pub(crate) async fn client(ctx: Rc<Ctx>, begin: Instant, h2: Arc<H2Plan>) {
    tokio::time::sleep_until(begin.into()).await;
    loop {
        let started = Instant::now();
        let Some(send) = connect(&ctx, started + ctx.plan.timeout).await else {
            if ctx.plan.control.stopped() {
                return;
            }
            // A refused connection returns at once: give the other tasks a turn.
            tokio::task::yield_now().await;
            continue;
        };
        run_streams(&ctx, &h2, send.0, started).await;
        // Dropping the driver's handle does not stop it: the connection ends here.
        send.1.abort();
    }
}

/// Connects, handshakes TLS (checking ALPN) and starts HTTP/2; returns the request handle and
/// the task driving the connection.
async fn connect(
    ctx: &Rc<Ctx>,
    limit: Instant,
) -> Option<(SendRequest<Bytes>, tokio::task::JoinHandle<()>)> {
    let Link { stream, active } = establish(ctx, limit).await?;
    if stream.alpn().is_some_and(|p| p != b"h2") {
        // The server chose another protocol than the only one that would work.
        ctx.fail(ErrorKind::Protocol, Instant::now());
        return None;
    }
    let handshake = h2::client::Builder::new()
        .initial_window_size(WINDOW)
        .initial_connection_window_size(WINDOW)
        .enable_push(false)
        .handshake::<_, Bytes>(stream);
    let (send, connection) = match timeout_at(limit.into(), handshake).await {
        Ok(Ok(parts)) => parts,
        Ok(Err(_)) => {
            ctx.fail(ErrorKind::Io, Instant::now());
            return None;
        }
        Err(_) => {
            ctx.fail(ErrorKind::Timeout, Instant::now());
            return None;
        }
    };
    let driver = tokio::task::spawn_local(async move {
        // The connection counts as active while it is driven.
        let _active = active;
        let _ = connection.await;
    });
    Some((send, driver))
}

/// Runs the stream loops of one connection until every one of them ended.
async fn run_streams(ctx: &Rc<Ctx>, h2: &Arc<H2Plan>, send: SendRequest<Bytes>, started: Instant) {
    let per_conn = ctx.plan.requests_per_conn;
    let budget = Rc::new(Budget(Cell::new((per_conn != 0).then_some(per_conn))));
    let mut loops = JoinSet::new();
    for _ in 0..h2.streams {
        let stream = StreamLoop {
            ctx: ctx.clone(),
            h2: h2.clone(),
            send: send.clone(),
            budget: budget.clone(),
            in_flight: false,
        };
        loops.spawn_local(stream.run(started));
    }
    drop(send);
    while loops.join_next().await.is_some() {}
}

/// Requests a connection may still start (`None`: no limit).
#[derive(Debug)]
struct Budget(Cell<Option<u64>>);

impl Budget {
    /// Takes one request from the budget; false once it is spent.
    fn take(&self) -> bool {
        match self.0.get() {
            None => true,
            Some(0) => false,
            Some(n) => {
                self.0.set(Some(n - 1));
                true
            }
        }
    }
}

/// One stream slot of a connection: a request, its response, the next request.
struct StreamLoop {
    ctx: Rc<Ctx>,
    h2: Arc<H2Plan>,
    send: SendRequest<Bytes>,
    budget: Rc<Budget>,
    /// A request was sent and its outcome has not been recorded.
    in_flight: bool,
}

impl Drop for StreamLoop {
    /// A request still in flight when the loop ends (at the deadline, or dropped with its
    /// thread) is abandoned.
    fn drop(&mut self) {
        if self.in_flight {
            self.ctx.stats.borrow_mut().abandoned += 1;
        }
    }
}

/// How a request ended, for the stream loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// The stream slot can carry another request.
    Again,
    /// The connection cannot carry more requests.
    Closed,
}

impl StreamLoop {
    async fn run(mut self, mut started: Instant) {
        while Instant::now() < self.ctx.plan.timeline.end && self.budget.take() {
            if self.exchange(started).await == Next::Closed {
                return;
            }
            started = Instant::now();
        }
    }

    /// One request and its response, recorded (latency from `started`) or counted as failed;
    /// or abandoned, if it ended after the deadline (the loop ends then).
    async fn exchange(&mut self, started: Instant) -> Next {
        let limit = started + self.ctx.plan.timeout;
        let outcome = timeout_at(limit.into(), self.request()).await;
        if self.in_flight && Instant::now() >= self.ctx.plan.timeline.end {
            // Counted as abandoned when the loop is dropped.
            return Next::Closed;
        }
        self.in_flight = false;
        match outcome {
            Ok(Ok((status, first_byte, body_bytes))) => {
                let now = Instant::now();
                let mut stats = self.ctx.stats.borrow_mut();
                // Counted with the response: a stream cut at the deadline counts in neither.
                stats.received(body_bytes, now);
                stats.response(status, started, first_byte, now);
                Next::Again
            }
            Ok(Err(failure)) => match failure.counted {
                Some(kind) => {
                    self.ctx.fail(kind, Instant::now());
                    failure.next
                }
                None => failure.next,
            },
            Err(_) => {
                // Dropping the request cancelled its stream; the connection carries on.
                self.ctx.fail(ErrorKind::Timeout, Instant::now());
                Next::Again
            }
        }
    }

    /// Sends the request and reads the response to its end; returns the status, the time the
    /// response head arrived and the body's size.
    async fn request(&mut self) -> Result<(u16, Instant, usize), Failure> {
        poll_fn(|cx| self.send.poll_ready(cx))
            .await
            .map_err(|e| Failure::of(&e, true))?;
        let (response, _) = self
            .send
            .send_request(self.h2.request(), true)
            .map_err(|e| Failure::of(&e, true))?;
        self.in_flight = true;
        let response = response.await.map_err(|e| Failure::of(&e, false))?;
        let first_byte = Instant::now();
        let status = response.status().as_u16();
        let mut body = response.into_body();
        let mut size = 0;
        while let Some(data) = body.data().await {
            let data = data.map_err(|e| Failure::of(&e, false))?;
            // Given back at once: the window stays open, the bytes are dropped.
            let _ = body.flow_control().release_capacity(data.len());
            size += data.len();
        }
        Ok((status, first_byte, size))
    }
}

/// Why a request failed: the error to count (if any) and what the stream loop does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failure {
    counted: Option<ErrorKind>,
    next: Next,
}

impl Failure {
    /// Classifies an `h2` error; `before_sending`: the request never left (the connection could
    /// not take it, so it is over).
    fn of(e: &h2::Error, before_sending: bool) -> Self {
        if e.is_go_away() && e.reason() == Some(h2::Reason::NO_ERROR) {
            // A graceful GOAWAY: this request was never processed; not an error.
            return Self {
                counted: None,
                next: Next::Closed,
            };
        }
        // A stream reset leaves the connection usable; anything else ended it.
        let stream_only = e.is_reset() && !e.is_go_away() && !before_sending;
        Self {
            counted: Some(if e.is_io() {
                ErrorKind::Io
            } else {
                ErrorKind::Protocol
            }),
            next: if stream_only {
                Next::Again
            } else {
                Next::Closed
            },
        }
    }
}

#[cfg(test)]
mod tests;
