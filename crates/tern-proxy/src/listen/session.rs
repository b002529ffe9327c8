//! One client connection (a session): the PROXY header on an `accept_proxy` bind
//! (`listen/proxy_in.rs`), TLS handshake on the bind's engine (`tls/engines.rs`), then the
//! protocol's loop until it ends: the TCP relay (`tcp.rs`) on a frontend with `mode = "tcp"`,
//! HTTP/2 (`http2.rs`) when ALPN chose `h2` or a plain bind speaks h2c with prior knowledge,
//! else HTTP/1.1 (`http1/conn.rs`). With handshake offload, the handshake happens on the
//! offload thread and the worker takes the session up from [`resume`].

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use tern_config::ProxyMode;
use tokio::io::BufWriter;
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::access_log::Tracker;
use crate::http1::conn;
use crate::http2;
use crate::listen::accept::{Accepted, Acceptor};
use crate::listen::conn_rules::{self, Decision};
use crate::listen::first_bytes;
use crate::listen::proxy_in::{self, Addrs};
use crate::profiling::{Kind, Profiled};
use crate::tcp;
use crate::tls::engines::{self, Established};
use crate::tls::offload::Handshaken;
use crate::tls::ossl;
use crate::tls::stream::TlsStream;
use crate::track::Tracking;
use crate::worker::{Permits, Worker};

/// What an h2c connection's writes gather before they go to the socket (as TLS gathers them
/// in rustls' buffer).
const H2C_WRITE_BUFFER: usize = 16 * 1024;

/// A protocol's loop, on the heap: see [`serve`].
type Boxed = Pin<Box<dyn Future<Output = ()>>>;

/// Whether the frontend relays its connections whole (`mode = "tcp"`) rather than reading
/// HTTP on them.
fn is_tcp(w: &Worker, frontend: usize) -> bool {
    w.shared.frontend(frontend).mode == ProxyMode::Tcp
}

pin_project! {
    /// A connection's task: [`plain`] or [`general`], whichever [`serve`] chose.
    #[project = SessionProj]
    pub(crate) enum Session<P, G> {
        Plain { #[pin] f: P },
        General { #[pin] f: G },
    }
}

impl<P: Future<Output = ()>, G: Future<Output = ()>> Future for Session<P, G> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project() {
            SessionProj::Plain { f } => f.poll(cx),
            SessionProj::General { f } => f.poll(cx),
        }
    }
}

/// Serves one accepted connection to its end.
///
/// This future is the connection's task, so its size is what every connection holds from
/// accept to close, and what the spawn copies: each step that is large or not taken by every
/// connection (the PROXY header, the TLS handshake, the protocol's loop) is boxed, and only the
/// one running holds memory. The most common idle connection, a plain HTTP/1.1 one waiting for
/// its first request, has a future of its own ([`plain`]) holding only what that wait needs:
/// the task's size is the larger of the two, and tokio rounds it up to 128 bytes, so a few
/// bytes there are 128 on every connection (`bench/idle-memory.sh`).
pub(crate) fn serve(
    w: Rc<Worker>,
    accepted: Accepted,
) -> Session<impl Future<Output = ()>, impl Future<Output = ()>> {
    // A session rate cap may make the connection wait before its rules: the general path,
    // whose waits are boxed.
    let plain_http1 = accepted.tls.is_none()
        && !accepted.accept_proxy
        && w.shared.sess_rate.is_none()
        && waits_for_bytes(&w, accepted.frontend);
    if plain_http1 {
        let Accepted {
            frontend,
            stream,
            peer,
            permits,
            ..
        } = accepted;
        return Session::Plain {
            f: plain(w, frontend, stream, peer, permits),
        };
    }
    Session::General {
        f: general(w, accepted),
    }
}

/// A plain HTTP/1.1 connection without a PROXY header or a session rate cap: the connection
/// rules, then the wait for its first bytes, then its session.
///
/// Not an `async fn`: its parameters would be kept twice (the argument, and the fields taken
/// out of it). The addresses are built when used, not kept: the peer alone is half the size.
#[allow(clippy::manual_async_fn)]
fn plain(
    w: Rc<Worker>,
    frontend: usize,
    mut stream: TcpStream,
    peer: SocketAddr,
    permits: Permits,
) -> impl Future<Output = ()> {
    async move {
        // Held to the session's end; a reference, as a move would take a second slot.
        let _permits = &permits;
        let _counted = w.session_started();
        let Some(track) = admit(&w, frontend, &Addrs::stream(peer), false, &stream) else {
            return;
        };
        let log = Tracker::start(&w.shared, frontend, peer);
        let first = first_bytes::wait(w.life(), &mut stream, w.shared.frontend(frontend)).await;
        // Built in a function, so nothing of the wait outlives it in this future.
        let session = http1_session(w, frontend, stream, peer, first, log, track);
        session.await;
    }
}

/// The HTTP/1.1 session of a plain connection after [`first_bytes::wait`], on the heap.
fn http1_session(
    w: Rc<Worker>,
    frontend: usize,
    stream: TcpStream,
    peer: SocketAddr,
    first: first_bytes::First,
    log: Option<Box<Tracker>>,
    track: Tracking,
) -> Boxed {
    let start = conn::Start {
        tls: false,
        since: first.since,
        received: &first.bytes,
    };
    let addrs = Addrs::stream(peer);
    // The bytes are copied into the session's buffer: not kept for the connection's life.
    let session = conn::serve(w, frontend, stream, addrs, start, log, track);
    Box::pin(Profiled::new(Kind::Request, session))
}

/// Every other connection: the PROXY header on an `accept_proxy` bind, the connection rules,
/// the TLS handshake, then the protocol; see [`serve`].
#[allow(clippy::manual_async_fn)]
fn general(w: Rc<Worker>, accepted: Accepted) -> impl Future<Output = ()> {
    let Accepted {
        frontend,
        mut stream,
        peer,
        tls,
        accept_proxy,
        permits,
    } = accepted;
    // The socket's addresses until a PROXY header replaces them: changed in place, as a moved
    // copy (or the peer kept beside them) would take a second slot in the task.
    let mut addrs = Addrs::stream(peer);
    async move {
        let _permits = &permits;
        let _counted = w.session_started();
        // The PROXY header comes before anything else on the wire, TLS included.
        if accept_proxy {
            let read = proxy_in::addresses_of(&*w, frontend, true, &mut stream, addrs.peer);
            match Box::pin(read).await {
                Some(carried) => addrs = carried,
                None => return,
            }
        }
        // Connection rules run before the TLS handshake, as HAProxy's `tcp-request connection`.
        let Some(track) = admit(&w, frontend, &addrs, tls.is_some(), &stream) else {
            return;
        };
        session_rate(&w).await;
        // Follows the connection for the access log, when it is on for this frontend.
        let mut log = Tracker::start(&w.shared, frontend, addrs.peer);
        // TCP_NODELAY is inherited from the listening socket (see listener.rs).
        let Some(tls) = tls else {
            let first = if waits_for_bytes(&w, frontend) {
                // After a PROXY header, or a wait under `max_sess_rate`: boxed, as this
                // future's size counts on every TLS connection too.
                let fe = w.shared.frontend(frontend);
                Box::pin(first_bytes::wait(w.life(), &mut stream, fe)).await
            } else {
                first_bytes::First {
                    bytes: Box::default(),
                    since: Instant::now(),
                }
            };
            let start = conn::Start {
                tls: false,
                since: first.since,
                received: &first.bytes,
            };
            let session = serve_plain(w, frontend, stream, addrs, log, track, start);
            // Copied into the session's buffer: not kept for the connection's life.
            drop(first);
            return session.await;
        };
        let handshake = engines::handshake(
            w.handshakes(),
            w.life(),
            frontend,
            (stream, addrs.peer),
            tls,
            &mut log,
        );
        let Some(tls) = Box::pin(handshake).await else {
            return;
        };
        serve_tls(w, frontend, tls, addrs, log, track).await;
    }
}

/// Whether a plain connection of `frontend` waits for its first bytes before its session is
/// built (`listen/first_bytes.rs`): HTTP/1.1 only. A TCP relay connects to its server at once
/// (some protocols have the server speak first), and an h2c connection sends its SETTINGS.
fn waits_for_bytes(w: &Worker, frontend: usize) -> bool {
    let fe = w.shared.frontend(frontend);
    fe.mode != ProxyMode::Tcp && !fe.http2.cleartext
}

/// Serves a plain connection: relayed whole in TCP mode, else h2c with prior knowledge on a
/// bind that speaks it, else HTTP/1.1 (`start`: when its wait for a first request began, and
/// what `first_bytes` read).
fn serve_plain(
    w: Rc<Worker>,
    frontend: usize,
    stream: TcpStream,
    addrs: Addrs,
    log: Option<Box<Tracker>>,
    track: Tracking,
    start: conn::Start,
) -> Boxed {
    if is_tcp(&w, frontend) {
        return Box::pin(async move {
            // The tracks last as long as the session.
            let _track = track;
            tcp::serve(w, frontend, stream, addrs, false, log).await;
        });
    }
    if w.shared.frontend(frontend).http2.cleartext {
        // h2c with prior knowledge (HAProxy's `proto h2` on a bind).
        let local = addrs.local().or_else(|| stream.local_addr().ok());
        let info = http2::conn_info(&addrs, local, None);
        // A plain socket writes at each write: a buffer makes the flush the socket write,
        // so the connection's frames of one turn share it (see `http2/coalesce.rs`).
        let buffered = BufWriter::with_capacity(H2C_WRITE_BUFFER, http2::Lingering(stream));
        let io = http2::Coalesce::new(buffered);
        let h2 = http2::serve(w, frontend, io, info, log, track);
        return Box::pin(Profiled::new(Kind::Http2, h2));
    }
    let proxy = conn::serve(w, frontend, stream, addrs, start, log, track);
    Box::pin(Profiled::new(Kind::Request, proxy))
}

/// Serves a connection the offload thread accepted and handshook, to its end.
pub(crate) async fn resume(w: Rc<Worker>, done: Handshaken) {
    let Handshaken {
        frontend,
        addrs,
        tls,
        permits: _permits,
        log,
    } = done;
    let _counted = w.session_started();
    let tls = match tls.attach() {
        Ok(tls) => tls,
        Err(e) => {
            // The worker's event loop could not take the socket (out of memory or epoll
            // watches), as an `accept` can fail: the client sees the connection close before
            // any response.
            tracing::warn!(peer = %addrs.peer, error = %e, "cannot take over a handshaken connection");
            return;
        }
    };
    // With the handshake offloaded, the connection rules run once the worker has it.
    let Some(track) = admit(&w, frontend, &addrs, true, tls.tcp()) else {
        return;
    };
    session_rate(&w).await;
    serve_tls(w, frontend, tls, addrs, log, track).await;
}

/// Serves an established TLS connection on its engine; boxed, as [`serve_plain`].
fn serve_tls(
    w: Rc<Worker>,
    frontend: usize,
    tls: Established,
    addrs: Addrs,
    log: Option<Box<Tracker>>,
    track: Tracking,
) -> Boxed {
    match tls {
        Established::Rustls(tls) => serve_rustls(w, frontend, tls, addrs, log, track),
        Established::OpenSsl(tls) => Box::pin(ossl::serve(w, frontend, tls, addrs, log, track)),
    }
}

/// Serves an established rustls connection: relayed whole in TCP mode, else with the protocol
/// ALPN chose.
fn serve_rustls(
    w: Rc<Worker>,
    frontend: usize,
    tls: TlsStream,
    addrs: Addrs,
    log: Option<Box<Tracker>>,
    track: Tracking,
) -> Boxed {
    if is_tcp(&w, frontend) {
        return Box::pin(async move {
            let _track = track;
            tcp::serve(w, frontend, tls, addrs, true, log).await;
        });
    }
    if http2::negotiated(tls.connection()) {
        let local = addrs.local().or_else(|| tls.tcp().local_addr().ok());
        let info = http2::conn_info(&addrs, local, Some(tls.connection()));
        // The connection's task only drives the connection; its streams are tasks of their own.
        // Over TLS a flush is a socket write: the connection's frames of one turn share it.
        let io = http2::Coalesce::new(http2::Lingering(tls));
        let h2 = http2::serve(w, frontend, io, info, log, track);
        return Box::pin(Profiled::new(Kind::Http2, h2));
    }
    let proxy = conn::serve(w, frontend, tls, addrs, conn::Start::now(true), log, track);
    Box::pin(Profiled::new(Kind::Request, proxy))
}
/// Waits under `global.max_sess_rate`, if set (boxed: most configurations have none, and
/// the wait would otherwise size every connection's task).
async fn session_rate(w: &Worker) {
    if let Some(cap) = &w.shared.sess_rate {
        Box::pin(cap.take()).await;
    }
}

/// Runs the frontend's connection rules (`listen/conn_rules.rs`): the connection's tracks, or
/// `None` when it is refused (closed, or reset by `silent-drop`).
fn admit(
    w: &Worker,
    frontend: usize,
    addrs: &Addrs,
    tls: bool,
    socket: &tokio::net::TcpStream,
) -> Option<Tracking> {
    let local_port = || match addrs.local() {
        Some(local) => local.port(),
        None if conn_rules::reads_local_port(w, frontend) => {
            socket.local_addr().map_or(0, |a| a.port())
        }
        None => 0,
    };
    match conn_rules::run(w, frontend, addrs.peer.ip(), tls, local_port) {
        Decision::Accept(track) => Some(track),
        Decision::Reject => None,
        Decision::SilentDrop => {
            crate::tunnel::reset(socket);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::panics::Guarded;

    /// The size of the future `f` returns, and of that future guarded, without calling `f`.
    fn sizes<A, B, R: Future<Output = ()>>(_: fn(A, B) -> R) -> (usize, usize) {
        (std::mem::size_of::<R>(), std::mem::size_of::<Guarded<R>>())
    }

    /// A connection's task is tokio's task cell around [`Guarded`] around [`serve`]'s future:
    /// a 32-byte header, 16 bytes of scheduler and id, the stage (the future, plus 8 bytes
    /// when it has no spare bit pattern for "finished") and a 48-byte trailer, rounded up to
    /// 128 bytes. At most 280 bytes of guarded future keep it at 384 bytes (was 512), which
    /// every idle connection pays (`bench/idle-memory.sh`): a field added to the plain wait
    /// that crosses this line costs 128 bytes per connection, not its own size.
    #[test]
    fn a_connection_task_stays_within_three_cache_line_pairs() {
        let (future, guarded) = sizes(serve);
        println!("session future {future} bytes, guarded {guarded}");
        assert!(guarded <= 280, "guarded session future: {guarded} bytes");
    }
}
