//! One client connection: connect, TLS handshake, and request/response exchanges, with every
//! step timed and counted in the thread's [`Stats`].
//!
//! Shared by the closed loop (`closed.rs`) and the open loop (`arrivals.rs`): they differ only in
//! when a request starts and from which instant its latency is measured. Every step is bounded
//! by the request's time limit; a failure is counted once, by kind, and the connection dropped.
//! The TLS handshake of either engine is in `handshake.rs`.

mod handshake;
mod poll_io;
mod tls_io;

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout_at;

use handshake::{handshake, ossl_handshake};
use tls_io::TlsConn;

use crate::http1::{Progress, Response, ResponseParser, MAX_HEAD};
use crate::ossl::OsslStream;
use crate::plan::Plan;
use crate::stats::{ErrorKind, Stats};
use crate::tls::{ClientTls, ThreadTls};

/// What one client thread's connections share.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub plan: Arc<Plan>,
    pub stats: RefCell<Stats>,
    pub tls: Option<ThreadTls>,
    /// Read buffers of closed connections, reused by new ones (no allocation and zeroing of
    /// 16 KiB per connection).
    pub buffers: RefCell<Vec<Box<[u8]>>>,
}

impl Ctx {
    /// Records a failure of `kind` at `at`.
    pub fn fail(&self, kind: ErrorKind, at: Instant) {
        self.stats.borrow_mut().failed(kind, at);
    }
}

/// A plain or TLS connection (`AsyncRead`/`AsyncWrite` in `poll_io.rs`, for HTTP/2).
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsConn>),
    /// Made by the OpenSSL engine (`--tls-engine openssl`).
    Ossl(Box<OsslStream>),
}

impl Stream {
    /// The protocol the server chose by ALPN (TLS only).
    pub fn alpn(&self) -> Option<&[u8]> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(tls) => tls.rustls().alpn_protocol(),
            Stream::Ossl(tls) => tls.alpn(),
        }
    }

    /// Writes all of `data` (encrypted for TLS).
    async fn send(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.write_all(data).await,
            Stream::Tls(tls) => tls.send(data).await,
            Stream::Ossl(tls) => tls.send(data).await,
        }
    }

    /// Reads what has arrived into `buf` (plaintext for TLS); `Ok(0)` at the end.
    async fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buf).await,
            Stream::Tls(tls) => tls.recv(buf).await,
            Stream::Ossl(tls) => tls.recv(buf).await,
        }
    }
}

/// An established connection, counted as active while it lives.
#[derive(Debug)]
pub(crate) struct Conn {
    stream: Stream,
    buf: Buffer,
    sent: u64,
    active: Active,
}

/// Keeps the active-connections gauge: +1 on creation, −1 on drop.
#[derive(Debug)]
pub(crate) struct Active(Rc<Ctx>);

impl Active {
    fn new(ctx: &Rc<Ctx>) -> Self {
        ctx.stats.borrow_mut().active_changed(true);
        Self(ctx.clone())
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Ok(mut buffers) = self.active.0.buffers.try_borrow_mut() {
            buffers.push(std::mem::take(&mut self.buf.bytes));
        }
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        // Never borrowed while a connection is dropped, except in a bug; then skip the gauge.
        if let Ok(mut stats) = self.0.stats.try_borrow_mut() {
            stats.active_changed(false);
        }
    }
}

/// How a request on a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A response came and the connection can carry another request.
    KeepAlive,
    /// A response came and the connection must close.
    Close,
    /// The request failed (counted).
    Failed,
}

/// Connects (and handshakes) for an HTTP/1.1 exchange; `None` after a counted failure or when
/// the run must abort.
pub(crate) async fn open(ctx: &Rc<Ctx>, limit: Instant) -> Option<Conn> {
    let Link { stream, active } = establish(ctx, limit).await?;
    Some(Conn {
        stream,
        buf: Buffer::new(ctx.buffers.borrow_mut().pop()),
        sent: 0,
        active,
    })
}

/// An established connection of either protocol, counted as active while it lives.
#[derive(Debug)]
pub(crate) struct Link {
    pub stream: Stream,
    /// Keeps the connection counted as active; drop it with the connection.
    pub active: Active,
}

/// Connects (and handshakes), timing and counting each step; `None` after a counted failure
/// or when the run must abort.
pub(crate) async fn establish(ctx: &Rc<Ctx>, limit: Instant) -> Option<Link> {
    let plan = &ctx.plan;
    let started = Instant::now();
    let tcp = match timeout_at(limit.into(), TcpStream::connect(plan.addr)).await {
        Ok(Ok(tcp)) => tcp,
        Ok(Err(_)) => return failed(ctx, ErrorKind::Connect),
        Err(_) => return failed(ctx, ErrorKind::Timeout),
    };
    // Without NODELAY the request could wait behind the unacknowledged Finished message.
    if tcp.set_nodelay(true).is_err() {
        return failed(ctx, ErrorKind::Connect);
    }
    let connected = Instant::now();
    ctx.stats.borrow_mut().connected(started, connected);
    let active = Active::new(ctx);
    let stream = match (&plan.tls, &ctx.tls) {
        (Some(ClientTls::Rustls(setup)), Some(tls)) => {
            let name = setup.server_name.clone();
            Stream::Tls(Box::new(
                handshake(ctx, tls, name, tcp, connected, limit).await?,
            ))
        }
        (Some(ClientTls::Openssl(setup)), _) => Stream::Ossl(Box::new(
            ossl_handshake(ctx, setup, tcp, connected, limit).await?,
        )),
        _ => Stream::Plain(tcp),
    };
    Some(Link { stream, active })
}

fn failed<T>(ctx: &Ctx, kind: ErrorKind) -> Option<T> {
    ctx.fail(kind, Instant::now());
    None
}

impl Conn {
    /// Whether an idle connection can carry another request: the server has not closed it
    /// (nor sent anything unasked). Checked without blocking, as a pooling client does.
    pub fn reusable(&mut self) -> bool {
        match &mut self.stream {
            Stream::Plain(tcp) => {
                let mut byte = [0u8; 1];
                matches!(tcp.try_read(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            }
            Stream::Tls(tls) => tls.reusable(),
            Stream::Ossl(tls) => tls.reusable(),
        }
    }
}

/// Sends one request on `conn` and reads its response, recording it (latency from `started`)
/// or its failure. The exchange is abandoned (and the connection with it) if it has not ended
/// by `limit`; a response that ends by `limit` but after `late` (the request's own time limit,
/// which an open loop counts from the intended start) is recorded as a timeout, not a latency
/// sample, and the connection stays usable.
pub(crate) async fn request(
    ctx: &Ctx,
    conn: &mut Conn,
    started: Instant,
    limit: Instant,
    late: Instant,
) -> Outcome {
    let plan = &ctx.plan;
    conn.sent += 1;
    let last = plan.requests_per_conn != 0 && conn.sent >= plan.requests_per_conn;
    let bytes = if last {
        &plan.close_request
    } else {
        &plan.keep_alive_request
    };
    let exchanged = timeout_at(limit.into(), exchange(conn, bytes, &ctx.stats)).await;
    let (response, first_byte) = match exchanged {
        Ok(Ok(done)) => done,
        Ok(Err(kind)) => {
            ctx.fail(kind, Instant::now());
            return Outcome::Failed;
        }
        Err(_) => {
            ctx.fail(ErrorKind::Timeout, Instant::now());
            return Outcome::Failed;
        }
    };
    let now = Instant::now();
    if now > late {
        ctx.fail(ErrorKind::Timeout, late);
    } else {
        ctx.stats
            .borrow_mut()
            .response(response.status, started, first_byte, now);
    }
    if last || !response.keep_alive {
        Outcome::Close
    } else {
        Outcome::KeepAlive
    }
}

/// Writes one request and reads its response, skipping the body; returns it with the time its
/// first byte arrived.
async fn exchange(
    conn: &mut Conn,
    request: &[u8],
    stats: &RefCell<Stats>,
) -> Result<(Response, Instant), ErrorKind> {
    let (stream, buf) = (&mut conn.stream, &mut conn.buf);
    buf.clear();
    stream.send(request).await.map_err(|_| ErrorKind::Io)?;
    let mut parser = ResponseParser::new();
    let mut first_byte = None;
    loop {
        if !buf.is_empty() {
            let (used, progress) = parser.feed(buf.data()).map_err(|_| ErrorKind::Protocol)?;
            buf.consume(used);
            if let Progress::Done(response) = progress {
                // Bytes nobody asked for (we never pipeline) mean the framing went wrong.
                return match (buf.is_empty(), first_byte) {
                    (true, Some(at)) => Ok((response, at)),
                    _ => Err(ErrorKind::Protocol),
                };
            }
        }
        let space = buf.space();
        if space.is_empty() {
            return Err(ErrorKind::Protocol);
        }
        let read = match stream.recv(space).await {
            Ok(n) => n,
            // A TLS peer closing without close_notify: treat as the end of the stream.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => 0,
            Err(_) => return Err(ErrorKind::Io),
        };
        if read == 0 {
            let response = parser.eof().map_err(|_| ErrorKind::Protocol)?;
            return first_byte
                .map(|at| (response, at))
                .ok_or(ErrorKind::Protocol);
        }
        let now = Instant::now();
        first_byte.get_or_insert(now);
        stats.borrow_mut().received(read, now);
        buf.filled(read);
    }
}

/// A per-connection read buffer: bytes `start..end` are unconsumed.
#[derive(Debug)]
struct Buffer {
    bytes: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Buffer {
    /// A buffer reusing `spare` if it is one of ours.
    fn new(spare: Option<Box<[u8]>>) -> Self {
        let bytes = spare
            .filter(|b| b.len() == MAX_HEAD)
            .unwrap_or_else(|| vec![0; MAX_HEAD].into_boxed_slice());
        Self {
            bytes,
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
