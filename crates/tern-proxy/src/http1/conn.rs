//! The proxy loop of one client connection, after the TLS handshake: read a head, answer it or
//! forward it, and go round again while the connection stays open.
//!
//! One task drives everything of a connection, the server side included ([`crate::exchange`],
//! [`crate::http1::relay`]): no second task, no channel, no per-request allocation once the buffers
//! are warm. Heads are parsed in place in the connection's read buffer by `tern-h1`. A
//! connection waiting with nothing received gives its buffers back to the worker
//! (`http1/spares.rs`) and takes them again when bytes arrive, so an idle keep-alive
//! connection costs its socket and TLS state, not a 16 KiB buffer (HAProxy does the same).
//!
//! Between requests the wait for a head is timed as operators know it from HAProxy:
//! - first request, or bytes of a new head already received: `http_request`, from the accept
//!   (or the first byte of a later head); expiry answers 408 and closes;
//! - keep-alive connection with nothing received yet: `keep_alive` from the end of the previous
//!   exchange; expiry closes silently.
//!
//! A graceful stop closes connections waiting between requests at once; a request in flight
//! (or a head already arriving) is served to its end with `Connection: close`. A frontend with
//! `connection_mode = "close"` (HAProxy's `httpclose`) ends every response that way.
//!
//! Connections end in one of four ways ([`Next`]); after an answer tern gives as an error the
//! close "lingers": the sending side is shut down and whatever the client still sends is read
//! and dropped for a moment, so the client's unread bytes do not make the kernel reset the
//! connection before it has read the answer.

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tern_config::{Backend, ConnectionMode, Frontend, FrontendTimeouts};
use tern_h1::local::Page;

use crate::http1::error_page;
use crate::rules::vars::Vars;
use crate::track::Tracking;
use tern_h1::{
    parse_request, Forwarding, H1Error, HeaderEdits, Limits, Method, RequestHead, Status,
};
use tokio::io::ReadBuf;
use tokio::time::Instant;
use tracing::debug;

use crate::access_log::Tracker;
use crate::buffer::Buffer;
use crate::http1::spares::Spare;
use crate::listen::client::ClientStream;
use crate::listen::proxy_in::Addrs;
use crate::rules::facts::ConnFacts;
use crate::stats::{bump, BackendCounters, FrontendCounters};
use crate::timer::{Idle, Timer};
use crate::worker::Worker;

/// Working size of a client connection's read buffer (it grows up to `max_head_size` for a
/// head that needs it).
const BUFFER_SIZE: usize = 16 * 1024;

/// What an idle connection's first read after a wait takes, on the stack: a whole request
/// head usually, before the connection takes a buffer again (or builds its session at all:
/// `listen/first_bytes.rs`).
pub(crate) const IDLE_READ: usize = 2048;

/// The most a connection keeps of an unfinished request head in a small allocation of its own
/// while it waits for the rest, giving its read buffer back: a slow client (slowloris) then holds
/// what it sent, not a 16 KiB buffer.
const PARK_MAX: usize = 2048;

/// How long, and for how many bytes, a lingering close reads what the client still sends.
const LINGER_TIME: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 256 * 1024;

/// What happens to the client connection after a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Wait for the next request.
    KeepAlive,
    /// Close in order (TLS: close_notify).
    Close,
    /// Close after an error answer, draining what the client still sends (see module docs).
    Linger,
    /// Drop the connection without a word: a response was cut short, or the client is gone.
    Abort,
}

/// What the wait for a request head ended with.
enum HeadWait {
    /// A complete head of this many bytes at the front of the buffer.
    Head(usize),
    /// The client closed or reset the connection.
    Closed(Option<io::Error>),
    /// The head cannot be accepted.
    Invalid(H1Error),
    /// `http_request` expired.
    RequestTimeout,
    /// `keep_alive` expired.
    Idle,
    /// The worker is stopping and no request is under way.
    Stop,
}

/// One HTTP/1.1 client connection being served, with the state of its current request.
///
/// Its fields are the HTTP/1.1 connection's own: the files of `http1/` (the loop here, routing,
/// forwarding) use them directly, the relay borrows several at once, and nothing outside the
/// module sees them. Settings and counters are reached through the accessors below.
pub(super) struct H1Conn<S> {
    pub(super) w: Rc<Worker>,
    /// The client's address (for `balance = "source"`).
    pub(super) peer: IpAddr,
    /// The client's addresses in full (for the PROXY header sent to servers).
    pub(super) addrs: Addrs,
    pub(super) frontend: usize,
    /// The backend of the current request (chosen per request, see `route.rs`).
    pub(super) backend: usize,
    /// What rules may read of the connection.
    pub(super) conn: ConnFacts,
    /// Header rules' edits of the current request and of its response.
    pub(super) req_edits: HeaderEdits,
    pub(super) resp_edits: HeaderEdits,
    /// The variables of `set-var` rules (`rules::vars`), of this session.
    pub(super) vars: RefCell<Vars>,
    /// The current request's user per userlist (`http_auth`); empty unless a rule reads it.
    pub(super) auth_users: Vec<Option<usize>>,
    pub(super) io: S,
    pub(super) buf: Buffer,
    /// The start of a request head while the connection waits for the rest without its read
    /// buffer (at most [`PARK_MAX`] bytes; see `wait_head`).
    pub(super) parked: Vec<u8>,
    /// Output staging: the head for the server, then the head for the client.
    pub(super) out: Vec<u8>,
    /// What cookie persistence adds to or changes in the current response.
    pub(super) extra: crate::exchange::persist::Reply,
    pub(super) head: RequestHead,
    pub(super) fwd: Forwarding,
    pub(super) limits: Limits,
    pub(super) client_timer: Timer,
    pub(super) server_timer: Timer,
    /// The access log's record of the connection; `None` when the frontend does not log.
    pub(super) log: Option<Box<Tracker>>,
}

/// How a client connection comes to the HTTP/1.1 loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start<'a> {
    /// Whether the connection is TLS (for `X-Forwarded-Proto` and the rules).
    pub(crate) tls: bool,
    /// When the wait for the first request began: the accept, or the end of the handshake.
    /// `http_request` counts from here.
    pub(crate) since: Instant,
    /// The first bytes, read before the session was built (`listen/first_bytes.rs`).
    pub(crate) received: &'a [u8],
}

impl Start<'static> {
    /// A connection whose wait for its first request starts now, nothing read yet.
    pub(crate) fn now(tls: bool) -> Self {
        Self {
            tls,
            since: Instant::now(),
            received: &[],
        }
    }
}

/// Serves HTTP/1.1 on an established (plain or TLS) client connection until it ends.
///
/// The session is built here and moved into [`run`]'s future as its only capture: an `async
/// fn` taking `io` and moving it into the session would keep two slots for it in the future
/// (a capture is never laid over a local), and the future is what every idle connection holds.
pub(crate) fn serve<S: ClientStream>(
    w: Rc<Worker>,
    frontend: usize,
    io: S,
    addrs: Addrs,
    start: Start<'_>,
    log: Option<Box<Tracker>>,
    track: Tracking,
) -> impl Future<Output = ()> {
    let Start {
        tls,
        since: accepted,
        received,
    } = start;
    let peer = addrs.peer;
    let fe = w.shared.frontend(frontend);
    let mut fwd = Forwarding::none();
    if fe.x_forwarded_for {
        fwd = fwd.with_for(peer.ip());
    }
    if fe.x_forwarded_proto {
        fwd = fwd.with_proto(tls);
    }
    if fe.client_cert_headers {
        // Verified by rustls during the handshake (`client_auth`); parsed once per connection.
        let cert = io
            .peer_certificate()
            .map(tern_tls::ClientCertInfo::from_der);
        fwd = fwd.with_client_cert(cert.as_ref().map(|c| (&*c.subject, &*c.sha256)));
    }
    let limits = Limits {
        max_head_size: fe.limits.max_head_size,
        max_headers: fe.limits.max_headers,
        ..Limits::default()
    };
    // A `getsockname` only when some rule reads the local port (and no PROXY header gave it).
    let local_port = match addrs.local() {
        Some(local) => local.port(),
        None if w.shared.reads_dst_port => io.local_addr().map_or(0, |a| a.port()),
        None => 0,
    };
    let spare = w.spares.take(BUFFER_SIZE, limits.max_head_size);
    let mut s = H1Conn {
        w: Rc::clone(&w),
        peer: peer.ip(),
        addrs,
        frontend,
        backend: 0,
        conn: ConnFacts {
            peer: peer.ip(),
            local_port,
            tls,
        },
        req_edits: HeaderEdits::new(),
        resp_edits: HeaderEdits::new(),
        vars: RefCell::new(Vars::tracking(track)),
        auth_users: Vec::new(),
        io,
        buf: spare.buf,
        parked: Vec::new(),
        out: spare.out,
        extra: crate::exchange::persist::Reply::default(),
        head: spare.head,
        fwd,
        limits,
        client_timer: Timer::default(),
        server_timer: Timer::default(),
        log,
    };
    if !s.buf.append(received) {
        // More than a head may hold: kept as an unfinished head, so that the first read
        // refuses it as the session would have (`poll_read_head`).
        s.release_buffers();
        s.parked = received.to_vec();
    }
    run(s, accepted)
}

/// [`serve`]'s loop: a request at a time until the connection ends.
// Not an `async fn` on purpose (see the comment inside): clippy's rewrite would double the size.
#[allow(clippy::manual_async_fn)]
fn run<S: ClientStream>(mut s: H1Conn<S>, accepted: Instant) -> impl Future<Output = ()> {
    // An `async` block, not an `async fn`: the parameters of an `async fn` are moved into
    // locals of its future, beside their captured copies; the block uses its captures in place.
    async move {
        let w = Rc::clone(&s.w);
        let peer = s.addrs.peer;
        // Idle connections close at a stop; during a drain they stay until their next request
        // (answered with `Connection: close`) or their keep-alive timeout, so that no client sends
        // a request on a connection being closed.
        let stop = w.closing_idle();
        tokio::pin!(stop);
        let mut first = true;
        let end = loop {
            let hlen = match s.wait_head(first, accepted, stop.as_mut()).await {
                HeadWait::Head(n) => n,
                wait => {
                    let next = s.no_request(wait, peer).await;
                    if let Some(log) = s.log.as_deref_mut().filter(|log| log.seen()) {
                        log.emit(&s.w);
                    }
                    break next;
                }
            };
            first = false;
            // Boxed: the request's future is the largest part of the loop's, and an idle
            // keep-alive connection then holds none of it.
            let next = Box::pin(s.handle(hlen)).await;
            // The request's own tracks (`track-sc` rules) end with it.
            s.vars.get_mut().track.request_ended();
            if let Some(log) = s.log.as_deref_mut() {
                log.emit_at(&s.w, s.vars.get_mut().take_log_level());
            }
            match next {
                Next::KeepAlive if !w.is_stopping() => {}
                Next::KeepAlive => break Next::Close,
                other => break other,
            }
        };
        // Boxed: the close moves the session into its future, which would double the loop's size.
        Box::pin(s.close(end)).await;
    }
}

impl<S> Drop for H1Conn<S> {
    /// Gives the session's buffers back to the worker, whichever way the session ended.
    fn drop(&mut self) {
        self.release_buffers();
    }
}

impl<S> H1Conn<S> {
    /// Gives the session's buffers back to the worker: the connection waits with nothing
    /// received (an idle keep-alive connection holds no buffer, as in HAProxy), or it ended.
    fn release_buffers(&mut self) {
        if self.buf.capacity() == 0 {
            return;
        }
        let spare = Spare {
            buf: std::mem::replace(&mut self.buf, Buffer::empty()),
            out: std::mem::take(&mut self.out),
            head: std::mem::take(&mut self.head),
        };
        self.w.spares.give(spare, BUFFER_SIZE);
    }

    /// Whether part of a request head arrived (in the read buffer, or parked).
    fn has_head_start(&self) -> bool {
        !self.buf.is_empty() || !self.parked.is_empty()
    }

    /// Keeps the unfinished head received so far in an allocation of its size and gives the
    /// read buffer back, while the connection waits for the rest.
    fn park_head(&mut self) {
        self.parked = self.buf.data().to_vec();
        self.buf.clear();
        self.release_buffers();
    }

    /// Takes buffers from the worker if the session gave its own back.
    fn take_buffers(&mut self) {
        if self.buf.capacity() == 0 {
            let spare = self.w.spares.take(BUFFER_SIZE, self.limits.max_head_size);
            self.buf = spare.buf;
            self.out = spare.out;
            self.head = spare.head;
        }
    }
}

impl<S: ClientStream> H1Conn<S> {
    /// The frontend this connection came in on.
    pub(super) fn frontend_config(&self) -> &Frontend {
        self.w.shared.frontend(self.frontend)
    }

    /// The backend routing chose for the current request.
    pub(super) fn backend_config(&self) -> &Backend {
        self.w.shared.backend(self.backend)
    }

    /// The frontend's counters, this worker's block.
    pub(super) fn counters(&self) -> &FrontendCounters {
        &self.w.stats.frontends[self.frontend]
    }

    /// The current request's backend's counters, this worker's block.
    pub(super) fn backend_counters(&self) -> &BackendCounters {
        &self.w.stats.backends[self.backend]
    }

    /// Whether the frontend closes every client connection after a response (`httpclose`).
    fn closes_client(&self) -> bool {
        self.frontend_config().connection_mode == ConnectionMode::Close
    }

    fn timeouts(&self) -> FrontendTimeouts {
        self.frontend_config().timeouts
    }

    /// Waits for a complete request head (see the module docs for the timeouts).
    async fn wait_head(
        &mut self,
        first: bool,
        accepted: Instant,
        mut stop: Pin<&mut impl Future<Output = ()>>,
    ) -> HeadWait {
        let t = self.timeouts();
        let mut idle = Idle::default();
        let mut head_since = Idle::default();
        let started = self.has_head_start();
        if let Some(log) = self.log.as_deref_mut() {
            // The first wait began before the session: at the accept on a plain connection,
            // whose first bytes may have come since (`listen/first_bytes.rs`).
            let since = if first { accepted } else { Instant::now() };
            log.waiting(since, started);
        }
        std::future::poll_fn(|cx| {
            loop {
                if !self.buf.is_empty() {
                    match parse_request(self.buf.data(), &self.limits, &mut self.head) {
                        Ok(Status::Complete(n)) => return Poll::Ready(HeadWait::Head(n)),
                        Ok(Status::Partial) => {}
                        Err(e) => return Poll::Ready(HeadWait::Invalid(e)),
                    }
                }
                match self.poll_read_head(cx) {
                    Poll::Ready(Ok(0)) => return Poll::Ready(HeadWait::Closed(None)),
                    Poll::Ready(Ok(_)) => {
                        if let Some(log) = self.log.as_deref_mut() {
                            log.arrived();
                        }
                    }
                    Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::OutOfMemory => {
                        return Poll::Ready(HeadWait::Invalid(H1Error::HeadTooLarge));
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(HeadWait::Closed(Some(e))),
                    Poll::Pending => break,
                }
            }
            let started = self.has_head_start();
            if !started {
                self.release_buffers();
            } else if self.buf.data().len() <= PARK_MAX && self.buf.capacity() > 0 {
                self.park_head();
            }
            // The stop future completes only after `closes_idle` turned true, so it is never
            // polled again once it has completed.
            if !started && (self.w.closes_idle() || stop.as_mut().poll(cx).is_ready()) {
                return Poll::Ready(HeadWait::Stop);
            }
            let (deadline, expired) = if started {
                (
                    head_since.deadline(t.http_request),
                    HeadWait::RequestTimeout,
                )
            } else if first {
                (accepted + t.http_request, HeadWait::RequestTimeout)
            } else {
                (idle.deadline(t.keep_alive), HeadWait::Idle)
            };
            match self.client_timer.poll_at(deadline, cx) {
                Poll::Ready(()) => Poll::Ready(expired),
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }

    /// Reads once towards a request head. A session that gave its buffers back while idle
    /// reads into the stack first, and takes buffers only once bytes arrived.
    fn poll_read_head(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.buf.capacity() > 0 {
            return self.buf.poll_read_from(&mut self.io, cx);
        }
        let mut first = [0u8; IDLE_READ];
        let mut rb = ReadBuf::new(&mut first);
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut rb))?;
        let got = rb.filled();
        if !got.is_empty() {
            self.take_buffers();
            let parked = std::mem::take(&mut self.parked);
            if !self.buf.append(&parked) || !self.buf.append(got) {
                // Cannot happen: a fresh buffer holds more than PARK_MAX + IDLE_READ.
                return Poll::Ready(Err(io::ErrorKind::OutOfMemory.into()));
            }
        }
        Poll::Ready(Ok(got.len()))
    }

    /// The connection ended without a request to serve: count why, answer if due.
    async fn no_request(&mut self, wait: HeadWait, peer: SocketAddr) -> Next {
        if let Some(log) = self.log.as_deref_mut() {
            let (termination, why) = missing(&wait);
            log.no_request(termination, why);
        }
        let c = self.counters();
        match wait {
            HeadWait::Head(_) | HeadWait::Stop => Next::Close,
            HeadWait::Closed(None) => Next::Abort,
            HeadWait::Closed(Some(e)) => {
                if self.has_head_start() {
                    bump(&c.client_aborts);
                }
                debug!(%peer, error = %e, "client connection failed");
                Next::Abort
            }
            HeadWait::Invalid(e) => {
                bump(if e.is_too_large() {
                    &c.head_too_large
                } else {
                    &c.bad_requests
                });
                debug!(%peer, error = %e, "request refused");
                self.answer(Page::for_status(e.request_status()), false, false)
                    .await
            }
            HeadWait::RequestTimeout => {
                bump(&c.request_timeouts);
                self.answer(Page::RequestTimeout, false, false).await
            }
            HeadWait::Idle => {
                bump(&c.keepalive_timeouts);
                Next::Close
            }
        }
    }

    /// Serves the request whose head (`hlen` bytes) is at the front of the buffer.
    async fn handle(&mut self, hlen: usize) -> Next {
        bump(&self.counters().requests);
        if let Some(log) = self.log.as_deref_mut() {
            log.request(&self.head, self.buf.data(), hlen);
        }
        let is_monitor = self
            .frontend_config()
            .monitor_uri
            .as_deref()
            .is_some_and(|uri| {
                let path = self.head.path().get(self.buf.data());
                let path = path.split(|&b| b == b'?').next().unwrap_or_default();
                path == uri.as_bytes() || (path.is_empty() && uri == "/")
            });
        if !is_monitor {
            return self.route(hlen).await;
        }
        bump(&self.counters().monitor);
        let consumed = self.consume_request(hlen);
        let keep = consumed && self.head.keep_alive();
        let head_only = self.head.method() == Method::Head;
        self.answer(Page::Monitor, keep, head_only).await
    }

    /// Drops the current request (head of `hlen` bytes) from the buffer if its body is all
    /// there: a request answered by tern can be consumed only then. Whether it was.
    pub(super) fn consume_request(&mut self, hlen: usize) -> bool {
        let mut body = self.head.body_reader(&self.limits);
        match body.advance(&self.buf.data()[hlen..]) {
            Ok(p) if p.done => {
                self.buf.consume(hlen + p.used);
                true
            }
            _ => false,
        }
    }

    /// Writes a page of tern's own as the answer to the current request (or to a request
    /// that could not be read); `keep_alive` when the request was consumed and the client may
    /// send another, `head_only` for a HEAD request.
    pub(super) async fn answer(&mut self, page: Page, keep_alive: bool, head_only: bool) -> Next {
        // Monitor requests are answered only once consumed; the others may have been refused
        // with bytes left unread.
        let consumed = page == Page::Monitor;
        let w = Rc::clone(&self.w);
        let custom = error_page::configured(w.shared.config(), self.frontend, self.backend, page);
        self.respond(page.status(), keep_alive, consumed, |out, close| {
            error_page::write_either(custom, page, close, head_only, out);
        })
        .await
    }

    /// Writes an answer of tern's own with `status`, formatted by `write` (given whether the
    /// connection closes after it); `keep_alive` as for [`H1Conn::answer`], `consumed` when
    /// the whole request was read (a close then needs no lingering).
    pub(super) async fn respond(
        &mut self,
        status: u16,
        keep_alive: bool,
        consumed: bool,
        write: impl FnOnce(&mut Vec<u8>, bool),
    ) -> Next {
        count_status(self.counters(), status);
        self.vars.get_mut().track.answered(status);
        let keep_alive = keep_alive && !self.w.is_stopping() && !self.closes_client();
        self.out.clear();
        write(&mut self.out, !keep_alive);
        let written = self.write_out(!keep_alive).await;
        if let Some(log) = self.log.as_deref_mut() {
            log.answered(status, written.as_ref().map_or(0, |()| self.out.len()));
        }
        match written {
            Err(_) => Next::Abort,
            Ok(()) if keep_alive => Next::KeepAlive,
            Ok(()) if consumed => Next::Close,
            // A request tern refused may be followed by bytes it did not read.
            Ok(()) => Next::Linger,
        }
    }

    /// Writes `out` to the client and flushes, under the `client` inactivity timeout; `last`
    /// when the connection closes after it.
    pub(super) async fn write_out(&mut self, last: bool) -> io::Result<()> {
        let timeout = self.timeouts().client;
        let mut pos = 0;
        let mut idle = Idle::default();
        let mut sent = self.io.bytes_sent();
        let result = std::future::poll_fn(|cx| {
            while pos < self.out.len() {
                match Pin::new(&mut self.io).poll_write(cx, &self.out[pos..]) {
                    Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                    Poll::Ready(Ok(n)) => {
                        pos += n;
                        idle.progress();
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return self.client_wait(cx, &mut idle, timeout),
                }
            }
            if last {
                self.io.queue_close();
            }
            match Pin::new(&mut self.io).poll_flush(cx) {
                Poll::Ready(r) => Poll::Ready(r),
                Poll::Pending => {
                    if std::mem::replace(&mut sent, self.io.bytes_sent()) != sent {
                        idle.progress();
                    }
                    self.client_wait(cx, &mut idle, timeout)
                }
            }
        })
        .await;
        if let Err(e) = &result {
            let c = self.counters();
            bump(if e.kind() == io::ErrorKind::TimedOut {
                &c.client_timeouts
            } else {
                &c.client_aborts
            });
        }
        result
    }

    /// A client write is pending: polls the `client` timer.
    fn client_wait(
        &mut self,
        cx: &mut Context<'_>,
        idle: &mut Idle,
        timeout: Duration,
    ) -> Poll<io::Result<()>> {
        ready!(self.client_timer.poll_at(idle.deadline(timeout), cx));
        Poll::Ready(Err(io::ErrorKind::TimedOut.into()))
    }

    /// Ends the connection as `how` says.
    async fn close(mut self, how: Next) {
        if matches!(how, Next::Abort | Next::KeepAlive) {
            return;
        }
        let timeout = self.timeouts().client;
        let closing = std::future::poll_fn(|cx| self.io.poll_close(cx));
        if !matches!(tokio::time::timeout(timeout, closing).await, Ok(Ok(()))) {
            return;
        }
        if how == Next::Linger && self.io.shutdown_send().is_ok() {
            let _ = tokio::time::timeout(LINGER_TIME, self.drain()).await;
        }
    }

    /// Reads and drops what the client sends, until it closes or `LINGER_BYTES` were read.
    async fn drain(&mut self) {
        let mut left = LINGER_BYTES;
        self.take_buffers();
        self.buf.clear();
        std::future::poll_fn(|cx| loop {
            match self.io.poll_drain(cx, self.buf.spare()) {
                Poll::Ready(Ok(n)) if n > 0 && n < left => left -= n,
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        })
        .await;
    }
}

/// The access log's termination state and reason for a connection that ended without a
/// request (logged only if bytes of one had arrived, or tern answered).
fn missing(wait: &HeadWait) -> ([u8; 2], &'static str) {
    match wait {
        HeadWait::Invalid(e) if e.is_too_large() => (*b"PR", "head_too_large"),
        HeadWait::Invalid(e) if e.request_status() == 501 => (*b"PR", "not_implemented"),
        HeadWait::Invalid(_) => (*b"PR", "bad_request"),
        HeadWait::RequestTimeout => (*b"cR", "request_timeout"),
        HeadWait::Head(_) | HeadWait::Closed(_) | HeadWait::Idle | HeadWait::Stop => {
            (*b"CR", "client_closed")
        }
    }
}

/// Counts a response by status class.
pub(super) fn count_status(c: &FrontendCounters, status: u16) {
    let counter = match status {
        100..=199 => &c.resp_1xx,
        200..=299 => &c.resp_2xx,
        300..=399 => &c.resp_3xx,
        400..=499 => &c.resp_4xx,
        _ => &c.resp_5xx,
    };
    bump(counter);
}
