//! One HTTP/2 connection to a server, shared by the requests of one worker as streams.
//!
//! The connection is driven by a task of its own (the `h2` crate reads and writes frames for
//! every stream there); the requests hold [`SendRequest`] handles and count themselves on the
//! session while they live, so the pool can tell a connection with room for another stream
//! (below the server's `SETTINGS_MAX_CONCURRENT_STREAMS`) from a full one, and an idle one from
//! a busy one. A GOAWAY or an error from the server ends the session for new streams at once
//! (the handles then fail), streams in flight finish.
//!
//! **The server's SETTINGS.** The `h2` crate lets requests go before the server's first
//! SETTINGS frame arrives, which is right for ordinary requests (no round trip lost), but an
//! upgrade request may only go as an extended CONNECT once the server announced
//! `SETTINGS_ENABLE_CONNECT_PROTOCOL` (RFC 8441 §3), and "not announced yet" must not be taken
//! for "not supported". So the connection task sends one PING when the connection opens: a
//! server sends its SETTINGS before anything else (RFC 9113 §3.4), and the `h2` crate applies
//! a SETTINGS frame before it reads the next frame, so once the PING's answer is in, the
//! settings are known ([`Session::poll_settled`]). One PING per connection, none per request.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use h2::client::{Builder, Connection, SendRequest};
use h2::{Ping, PingPong};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;
use tracing::debug;

use crate::exchange::proxy_header::Origin;
use crate::exchange::upstream::{ServerStream, RESPONSE_LIMITS};
use crate::h2body::OUT_LIMIT;
use crate::panics::{Guarded, Place, Task};
use crate::profiling::{Kind, Profiled};
use crate::stats::WorkerStats;

/// The window a stream's response may fill before the relay reads it: the most a response
/// buffers in tern per stream.
const STREAM_WINDOW: u32 = 256 * 1024;

/// The window all of a connection's responses share.
const CONNECTION_WINDOW: u32 = 1024 * 1024;

/// What the connection task tells the requests: whether the server's first SETTINGS are
/// known, and whether the connection ended.
#[derive(Debug, Default)]
struct Flags {
    ended: Cell<bool>,
    settled: Cell<bool>,
    /// Requests waiting for the settings.
    waiting: RefCell<Vec<Waker>>,
}

impl Flags {
    /// The server's settings are known (or will never be: the connection ended).
    fn settle(&self) {
        self.settled.set(true);
        for waker in self.waiting.take() {
            waker.wake();
        }
    }
}

/// Marks a session ended when its connection task ends, however it ends.
struct Ended(Rc<Flags>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.ended.set(true);
        self.0.settle();
    }
}

/// An HTTP/2 connection to a server.
#[derive(Debug)]
pub(crate) struct Session {
    send: SendRequest<Bytes>,
    /// Streams open on it.
    streams: Cell<usize>,
    /// Set by the connection task: its end, the server's settings known.
    flags: Rc<Flags>,
    /// When the last stream ended (or the session opened).
    idle_since: Cell<Instant>,
    /// As [`crate::exchange::upstream::ServerConn`]'s: the TLS name of a server with
    /// `sni = "host"`, and the PROXY header's origin of a server with `proxy_protocol`.
    pub key: Option<Box<str>>,
    pub origin: Option<Origin>,
    pub addr: SocketAddr,
}

impl Session {
    /// Opens HTTP/2 on `stream` (connected, TLS done, ALPN `h2` or prior knowledge) and starts
    /// the task that drives it.
    pub(super) async fn start(
        stream: ServerStream,
        addr: SocketAddr,
        key: Option<Box<str>>,
        origin: Option<Origin>,
        (stats, backend): (&Arc<WorkerStats>, usize),
    ) -> Result<Rc<Session>, h2::Error> {
        let (send, mut connection) = builder().handshake::<_, Bytes>(stream).await?;
        let flags = Rc::new(Flags::default());
        // Set when the task ends, a panic included (then the session is never reused).
        let flag = Ended(Rc::clone(&flags));
        let settled = Rc::clone(&flags);
        let drive = async move {
            let _flag = flag;
            let learn = learn_settings(connection.ping_pong(), &settled);
            if let Err(e) = drive_learning(connection, learn).await {
                debug!(%addr, error = %e, "HTTP/2 server connection ended");
            }
        };
        let drive = Profiled::new(Kind::Http2, drive);
        let place = Place::backend(backend);
        let what = Task::Http2ServerConnection;
        tokio::task::spawn_local(Guarded::new(stats, place, what, drive));
        Ok(Rc::new(Session {
            send,
            streams: Cell::new(0),
            flags,
            idle_since: Cell::new(Instant::now()),
            key,
            origin,
            addr,
        }))
    }

    /// A handle to open a stream with.
    pub(super) fn sender(&self) -> SendRequest<Bytes> {
        self.send.clone()
    }

    pub(super) fn opened(&self) {
        self.streams.set(self.streams.get() + 1);
    }

    pub(super) fn closed(&self) {
        let left = self.streams.get().saturating_sub(1);
        self.streams.set(left);
        if left == 0 {
            self.idle_since.set(Instant::now());
        }
    }

    /// Whether new streams can still be opened: the connection runs and the server sent no
    /// GOAWAY.
    pub(super) fn is_usable(&self) -> bool {
        if self.flags.ended.get() {
            return false;
        }
        let mut cx = Context::from_waker(Waker::noop());
        !matches!(self.send.clone().poll_ready(&mut cx), Poll::Ready(Err(_)))
    }

    /// Ready once the server's first SETTINGS are known (or the connection ended); registers
    /// for the wake-up else.
    pub(super) fn poll_settled(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.flags.settled.get() {
            return Poll::Ready(());
        }
        let mut waiting = self.flags.waiting.borrow_mut();
        if !waiting.iter().any(|w| w.will_wake(cx.waker())) {
            waiting.push(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Whether the server announced `SETTINGS_ENABLE_CONNECT_PROTOCOL` (RFC 8441): upgrade
    /// requests may go to it as extended CONNECT.
    pub(super) fn extended_connect(&self) -> bool {
        self.send.is_extended_connect_protocol_enabled()
    }

    /// Whether another stream fits under the server's limit.
    pub(super) fn has_room(&self) -> bool {
        self.streams.get() < self.send.current_max_send_streams()
    }

    /// Whether no stream is open.
    pub(super) fn is_idle(&self) -> bool {
        self.streams.get() == 0
    }

    /// How long it has been idle (zero while a stream is open).
    pub(super) fn idle_for(&self) -> std::time::Duration {
        if self.is_idle() {
            self.idle_since.get().elapsed()
        } else {
            std::time::Duration::ZERO
        }
    }
}

/// Waits for the answer to one PING (see the module docs), then marks the server's settings
/// known; without the PING handle (taken once only), marks them known at once.
async fn learn_settings(ping: Option<PingPong>, flags: &Flags) {
    if let Some(mut ping) = ping {
        // An error means the connection ended: the settings will never come.
        let _ = ping.ping(Ping::opaque()).await;
    }
    flags.settle();
}

/// Drives `connection` to its end, and `learn` alongside until it is done: the connection's
/// end must not wait for the PING's answer.
async fn drive_learning<T, F>(connection: Connection<T, Bytes>, learn: F) -> Result<(), h2::Error>
where
    T: AsyncRead + AsyncWrite + Unpin,
    F: Future<Output = ()>,
{
    let mut connection = pin!(connection);
    let mut learn = pin!(learn);
    let mut learned = false;
    std::future::poll_fn(|cx| {
        if !learned {
            learned = learn.as_mut().poll(cx).is_ready();
        }
        connection.as_mut().poll(cx)
    })
    .await
}

/// The settings tern announces to servers: no push, windows sized for relaying, response heads
/// within the HTTP/1.1 limits the relay parses them under.
pub(super) fn builder() -> Builder {
    let mut b = Builder::new();
    b.enable_push(false)
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .max_header_list_size(RESPONSE_LIMITS.max_head_size as u32)
        .max_send_buffer_size(OUT_LIMIT);
    b
}
