//! Client threads and the closed-loop connection tasks they run.
//!
//! Each thread is pinned (optionally) and runs a tokio current-thread runtime with its share of
//! the connections as local tasks; there is no work stealing and nothing shared but the
//! read-only [`Plan`] and two flags, so threads scale like the server's shared-nothing workers.
//! A task opens a connection, sends requests one at a time until its request budget, a
//! non-keep-alive response, an error or the deadline, then opens the next connection.
//!
//! Every await is bounded by the request's timeout and by the run's deadline, so every loop
//! ends at the deadline; requests still in flight then are abandoned and not counted.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout_at;
use tokio_rustls::TlsConnector;

use crate::http1::{Progress, Response, ResponseParser, MAX_HEAD};
use crate::stats::{ErrorKind, Stats, TlsParams};
use crate::BenchError;

/// What every client thread needs to know; built once, shared read-only.
pub(crate) struct Plan {
    pub addr: SocketAddr,
    pub tls: Option<(TlsConnector, ServerName<'static>)>,
    pub keep_alive_request: Vec<u8>,
    pub close_request: Vec<u8>,
    pub requests_per_conn: u64,
    pub timeout: Duration,
    pub window_start: Instant,
    pub end: Instant,
    /// Set to end the run early (a thread failed, or a handshake was resumed).
    pub stop: AtomicBool,
    /// Set when any handshake (warm-up included) was resumed.
    pub resumed: AtomicBool,
    /// The thread that waits for the run, woken when `stop` is set.
    pub main: Thread,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("addr", &self.addr)
            .field("tls", &self.tls.as_ref().map(|(_, name)| name))
            .field("requests_per_conn", &self.requests_per_conn)
            .finish_non_exhaustive()
    }
}

impl Plan {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.main.unpark();
    }

    /// When a request started at `started` must be done: its timeout or the deadline.
    fn limit(&self, started: Instant) -> tokio::time::Instant {
        tokio::time::Instant::from_std((started + self.timeout).min(self.end))
    }
}

/// Runs one client thread: pins it, then drives `connections` tasks until the deadline.
pub(crate) fn thread_main(
    plan: Arc<Plan>,
    connections: u32,
    cpu: Option<usize>,
) -> Result<Stats, BenchError> {
    let result = drive(&plan, connections, cpu);
    if result.is_err() {
        plan.request_stop();
    }
    result
}

fn drive(plan: &Arc<Plan>, connections: u32, cpu: Option<usize>) -> Result<Stats, BenchError> {
    if let Some(id) = cpu {
        if !core_affinity::set_for_current(core_affinity::CoreId { id }) {
            return Err(BenchError::Pin(id));
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(BenchError::Thread)?;
    let stats = Rc::new(RefCell::new(Stats::new(plan.window_start, plan.end)));
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let tasks: Vec<_> = (0..connections)
            .map(|_| tokio::task::spawn_local(connection_loop(plan.clone(), stats.clone())))
            .collect();
        for task in tasks {
            // A task only ends by returning; a panic in one is reported as a join error.
            if task.await.is_err() {
                return Err(BenchError::Panicked);
            }
        }
        Ok(())
    })?;
    let merged = stats.borrow().clone();
    Ok(merged)
}

/// One closed-loop client: a connection after another until the deadline.
async fn connection_loop(plan: Arc<Plan>, stats: Rc<RefCell<Stats>>) {
    let mut buf = Buffer::new();
    while !plan.stopped() && Instant::now() < plan.end {
        session(&plan, &stats, &mut buf).await;
    }
}

/// Records a failure unless it is only the deadline cutting an exchange short.
fn fail(stats: &RefCell<Stats>, kind: ErrorKind) {
    stats.borrow_mut().failed(kind, Instant::now());
}

/// One connection: connect, maybe handshake, then its requests.
async fn session(plan: &Plan, stats: &RefCell<Stats>, buf: &mut Buffer) {
    let started = Instant::now();
    let limit = plan.limit(started);
    let tcp = match timeout_at(limit, TcpStream::connect(plan.addr)).await {
        Ok(Ok(tcp)) => tcp,
        Ok(Err(_)) => return fail(stats, ErrorKind::Connect),
        Err(_) => return fail(stats, ErrorKind::Timeout),
    };
    // Without NODELAY the request could wait behind the unacknowledged Finished message.
    if tcp.set_nodelay(true).is_err() {
        return fail(stats, ErrorKind::Connect);
    }
    let connected = Instant::now();
    stats.borrow_mut().connected(started, connected);
    let Some((connector, name)) = &plan.tls else {
        return requests(plan, stats, buf, tcp, started).await;
    };
    let tls = match timeout_at(limit, connector.connect(name.clone(), tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(_)) => return fail(stats, ErrorKind::Tls),
        Err(_) => return fail(stats, ErrorKind::Timeout),
    };
    let now = Instant::now();
    {
        let conn = tls.get_ref().1;
        let mut stats = stats.borrow_mut();
        if stats.tls.is_none() && stats.in_window(now) {
            stats.tls = Some(tls_params(conn));
        }
        if !stats.handshaked(conn.handshake_kind(), now - connected, now) {
            plan.resumed.store(true, Ordering::Relaxed);
            plan.request_stop();
            return;
        }
    }
    requests(plan, stats, buf, tls, started).await;
}

fn tls_params(conn: &rustls::ClientConnection) -> TlsParams {
    let name = |s: Option<String>| s.unwrap_or_else(|| "unknown".to_owned());
    TlsParams {
        version: name(conn.protocol_version().map(|v| format!("{v:?}"))),
        suite: name(
            conn.negotiated_cipher_suite()
                .map(|s| format!("{:?}", s.suite())),
        ),
        group: name(
            conn.negotiated_key_exchange_group()
                .map(|g| format!("{:?}", g.name())),
        ),
    }
}

/// Sends requests on an established connection until it must close.
async fn requests<S: AsyncRead + AsyncWrite + Unpin>(
    plan: &Plan,
    stats: &RefCell<Stats>,
    buf: &mut Buffer,
    mut stream: S,
    first_started: Instant,
) {
    buf.clear();
    let mut started = first_started;
    let mut sent = 0u64;
    loop {
        sent += 1;
        let last = plan.requests_per_conn != 0 && sent >= plan.requests_per_conn;
        let request = if last {
            &plan.close_request
        } else {
            &plan.keep_alive_request
        };
        let response =
            match timeout_at(plan.limit(started), exchange(&mut stream, request, buf)).await {
                Ok(Ok(response)) => response,
                Ok(Err(kind)) => return fail(stats, kind),
                Err(_) => return fail(stats, ErrorKind::Timeout),
            };
        let now = Instant::now();
        stats.borrow_mut().responded(response.status, started, now);
        if last || !response.keep_alive || now >= plan.end || plan.stopped() {
            return;
        }
        started = now;
    }
}

/// Writes one request and reads its response, skipping the body.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    request: &[u8],
    buf: &mut Buffer,
) -> Result<Response, ErrorKind> {
    stream.write_all(request).await.map_err(|_| ErrorKind::Io)?;
    stream.flush().await.map_err(|_| ErrorKind::Io)?;
    let mut parser = ResponseParser::new();
    loop {
        if !buf.is_empty() {
            let (used, progress) = parser.feed(buf.data()).map_err(|_| ErrorKind::Protocol)?;
            buf.consume(used);
            if let Progress::Done(response) = progress {
                // Bytes nobody asked for (we never pipeline) mean the framing went wrong.
                return if buf.is_empty() {
                    Ok(response)
                } else {
                    Err(ErrorKind::Protocol)
                };
            }
        }
        let space = buf.space();
        if space.is_empty() {
            return Err(ErrorKind::Protocol);
        }
        let read = match stream.read(space).await {
            Ok(n) => n,
            // A TLS peer closing without close_notify: treat as the end of the stream.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => 0,
            Err(_) => return Err(ErrorKind::Io),
        };
        if read == 0 {
            return parser.eof().map_err(|_| ErrorKind::Protocol);
        }
        buf.filled(read);
    }
}

/// A per-connection-task read buffer: bytes `start..end` are unconsumed.
#[derive(Debug)]
struct Buffer {
    bytes: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Buffer {
    fn new() -> Self {
        Self {
            bytes: vec![0; MAX_HEAD].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    fn is_empty(&self) -> bool {
        self.start == self.end
    }

    fn data(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            self.clear();
        }
    }

    /// Free space after the unconsumed bytes, moving them to the front if that makes room.
    fn space(&mut self) -> &mut [u8] {
        if self.end == self.bytes.len() && self.start > 0 {
            self.bytes.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        &mut self.bytes[self.end..]
    }

    fn filled(&mut self, n: usize) {
        self.end = (self.end + n).min(self.bytes.len());
    }
}
