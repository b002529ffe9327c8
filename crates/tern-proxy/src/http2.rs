//! HTTP/2 on the client side (design note 0003): the `h2` crate terminates the connection, and
//! each stream is served as an HTTP/1.1 exchange by the same session code as an HTTP/1.1
//! connection ([`crate::http1::conn::serve`]), so rules, balancing, persistence, queues,
//! retries, logs and counters apply to every stream as they do to every HTTP/1.1 request.
//!
//! One task drives the connection ([`serve`]): it accepts streams and spawns a task per stream
//! on the worker, sends GOAWAY when the worker drains or stops (streams in flight finish), and
//! closes a connection idle (no stream open) for `keep_alive` with GOAWAY too, having given back
//! its buffers after its first second idle (`idle.rs`). The `h2` crate does the framing, HPACK,
//! flow control and the limits against abuse (rapid reset, CONTINUATION floods, oversized header
//! lists, empty DATA frames), all set from the frontend's `http2` settings; `flood.rs` bounds
//! the control frames it would answer forever (PING, SETTINGS, WINDOW_UPDATE, ...), and
//! `pace.rs` how much of the client's input one turn of the connection's task takes in, so
//! that no connection holds the worker for long (header blocks, floods, fast uploads).
//!
//! | file | what |
//! |---|---|
//! | `flood.rs` | the budget of control frames per connection, kept as the bytes pass |
//! | `pace.rs` | how much of the client's input one turn of the connection task reads |
//! | `idle.rs` | when an idle connection releases its buffers, and when it is closed |
//! | `request.rs` | an HTTP/2 request's head as the HTTP/1.1 head the session parses |
//! | `connect.rs` | a WebSocket stream (RFC 8441 extended CONNECT) as an HTTP/1.1 upgrade request |
//! | `request_body.rs` | the request bytes the session reads: head, DATA (chunked if no length), trailers |
//! | `response.rs` | the HTTP/1.1 response the session writes, as HEADERS, DATA and trailers |
//! | `stream.rs` | the two joined as one [`ClientStream`](crate::listen::client::ClientStream) |
//! | `fuzz.rs` | one connection served in memory, for the `http2_frames` fuzz target |

mod coalesce;
mod connect;
mod flood;
pub mod fuzz;
mod idle;
mod linger;
mod pace;
mod request;
mod request_body;
mod response;
mod stream;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::rc::Rc;

use bytes::Bytes;
use h2::server::{Builder, SendResponse};
use h2::RecvStream;
use http::Request;
use tern_config::Http2Settings;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{sleep_until, Instant};
use tracing::debug;

use crate::access_log::Tracker;
use crate::exchange::proxy_header::ClientTls;
use crate::http1::conn;
use crate::listen::accept::Acceptor;
use crate::listen::proxy_in::Addrs;
use crate::panics::{Guarded, Place, Task};
use crate::profiling::{Kind, Profiled};
use crate::stats::{add, bump};
use crate::worker::Worker;
pub(crate) use coalesce::Coalesce;
pub(crate) use connect::accept_for as websocket_accept;
use flood::{ControlBudget, FloodGuard};
use idle::{IdleClock, Tick};
pub(crate) use linger::Lingering;
#[cfg(feature = "openssl-engine")]
pub(crate) use linger::Socket;
pub(crate) use request::BodyFraming;
pub(crate) use request_body::RequestSource;
use response::ResponseSink;
pub(crate) use stream::ConnInfo;
use stream::{H2Stream, Live};

/// The HTTP/2 settings tern announces and the limits it keeps, from the frontend's settings.
fn builder(settings: &Http2Settings) -> Builder {
    let mut b = Builder::new();
    b.max_concurrent_streams(settings.max_concurrent_streams)
        .initial_window_size(settings.initial_window_size)
        .initial_connection_window_size(settings.connection_window_size)
        .max_frame_size(settings.max_frame_size)
        .max_header_list_size(settings.max_header_list_size)
        // What a stream may queue beyond the client's window: one response buffer's worth.
        .max_send_buffer_size(crate::h2body::OUT_LIMIT)
        .max_concurrent_reset_streams(settings.max_concurrent_reset_streams)
        .max_pending_accept_reset_streams(settings.max_pending_accept_reset_streams)
        .max_local_error_reset_streams(Some(settings.max_local_error_reset_streams));
    if settings.websocket {
        // SETTINGS_ENABLE_CONNECT_PROTOCOL: WebSockets over streams (RFC 8441, connect.rs).
        b.enable_connect_protocol();
    }
    b
}

/// The `h2` handshake of a connection, boxed: freed once done.
type Handshake<T> = Pin<Box<h2::server::Handshake<FloodGuard<T>, Bytes>>>;

/// Serves HTTP/2 on an established client connection until it ends.
///
/// Not an `async fn`: that would keep its arguments in its future for the connection's life,
/// `io` (the TLS stream, 1.2 KiB) beside the `h2` connection it is moved into. The handshake is
/// made here and boxed, so the future holds pointers to what it starts with.
pub(crate) fn serve<T>(
    w: Rc<Worker>,
    frontend: usize,
    io: T,
    info: ConnInfo,
    log: Option<Box<Tracker>>,
    track: crate::track::Tracking,
) -> impl Future<Output = ()>
where
    T: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let settings = w.shared.frontend(frontend).http2;
    let budget = ControlBudget::new(settings.max_control_frames as u64);
    let io = FloodGuard::new(io, Rc::clone(&budget));
    let handshake = Box::pin(builder(&settings).handshake::<_, Bytes>(io));
    let conn = Conn {
        budget,
        info: Rc::new(info),
        log,
        track,
    };
    drive(w, frontend, handshake, conn)
}

/// What a connection's task keeps beside the `h2` connection.
struct Conn {
    /// The control frames the client may still send (`flood.rs`).
    budget: Rc<ControlBudget>,
    info: Rc<ConnInfo>,
    log: Option<Box<Tracker>>,
    track: crate::track::Tracking,
}

/// Runs the handshake, then serves the connection's streams until it ends.
async fn drive<T>(w: Rc<Worker>, frontend: usize, handshake: Handshake<T>, c: Conn)
where
    T: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let Conn {
        budget,
        info,
        log,
        track,
    } = c;
    let fc = &w.stats.frontends[frontend];
    bump(&fc.h2_sessions);
    let timeouts = w.shared.frontend(frontend).timeouts;
    let settings = w.shared.frontend(frontend).http2;
    // The client preface and SETTINGS are the first request bytes: `http_request` applies.
    let mut conn = match tokio::time::timeout(timeouts.http_request, handshake).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => {
            debug!(error = %e, "HTTP/2 preface refused");
            bump(&fc.h2_errors);
            return;
        }
        Err(_) => {
            bump(&fc.request_timeouts);
            return;
        }
    };
    let (max_resets, max_live) = (
        settings.max_client_resets,
        settings.max_concurrent_streams as usize,
    );
    let mut calmed = false;
    let life = w.life();
    let mut stopping = pin!(life.stopping());
    let mut shutting = false;
    let (mut clock, first) = IdleClock::start(timeouts.keep_alive, Instant::now());
    let mut idle = pin!(sleep_until(first));
    let mut busy = false;
    loop {
        let next = std::future::poll_fn(|cx| {
            match budget.take_yields() {
                0 => {}
                n => add(&fc.h2_yields, n),
            }
            // Rapid reset (the client cancels streams tern already works on), or a flood of
            // control frames.
            if !calmed && (info.client_resets.get() > max_resets || budget.poll_exceeded(cx)) {
                conn.abrupt_shutdown(h2::Reason::ENHANCE_YOUR_CALM);
                bump(&fc.h2_errors);
                calmed = true;
            }
            if !shutting && stopping.as_mut().poll(cx).is_ready() {
                conn.graceful_shutdown();
                shutting = true;
            }
            busy |= conn.has_streams();
            if !shutting && idle.as_mut().poll(cx).is_ready() {
                // A stream open since the timer was armed restarts the idle time (`idle.rs`).
                match clock.tick(Instant::now(), std::mem::take(&mut busy)) {
                    Tick::Rearm(at) => idle.as_mut().reset(at),
                    Tick::Release(at) => {
                        conn.release_idle_memory();
                        idle.as_mut().reset(at);
                    }
                    Tick::Close => {
                        bump(&fc.keepalive_timeouts);
                        conn.graceful_shutdown();
                        shutting = true;
                    }
                }
                if !shutting {
                    let _ = idle.as_mut().poll(cx);
                }
            }
            if info.live.get() >= max_live {
                // As many streams as the client may open are being served: take no more until
                // one ends. New ones wait in the h2 crate's queue, where a client that opens and
                // resets streams faster than they end hits `max_pending_accept_reset_streams`.
                *info.waiting.borrow_mut() = Some(cx.waker().clone());
                return conn.poll_closed(cx).map(|closed| closed.err().map(Err));
            }
            conn.poll_accept(cx)
        })
        .await;
        match next {
            Some(Ok((request, respond))) => {
                bump(&fc.h2_streams);
                busy = true;
                let stream_log = log.as_deref().map(|l| l.stream(respond.stream_id().into()));
                let live = Live::start(Rc::clone(&info));
                let task = serve_stream(
                    live,
                    Rc::clone(&w),
                    frontend,
                    request,
                    respond,
                    Rc::clone(&info),
                    Session {
                        log: stream_log,
                        track: track.inherit(),
                    },
                );
                let task = Profiled::new(Kind::Request, task);
                let place = Place::frontend(frontend);
                tokio::task::spawn_local(Guarded::new(&w.stats, place, Task::Http2Stream, task));
            }
            Some(Err(e)) => {
                debug!(error = %e, "HTTP/2 connection ended");
                if !calmed && !e.is_io() && e.reason() != Some(h2::Reason::NO_ERROR) {
                    bump(&fc.h2_errors);
                }
                break;
            }
            None => break,
        }
    }
}

/// What a stream's session takes from its connection.
struct Session {
    /// The stream's access log record, when the frontend logs.
    log: Option<Box<Tracker>>,
    /// The connection's tracked counters (`Tracking::inherit`).
    track: crate::track::Tracking,
}

/// Serves one stream: its request as an HTTP/1.1 exchange.
async fn serve_stream(
    _live: Live,
    w: Rc<Worker>,
    frontend: usize,
    request: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
    info: Rc<ConnInfo>,
    session: Session,
) {
    let Session { log, track } = session;
    let (parts, body) = request.into_parts();
    let mut head = Vec::new();
    let framing = match request::write_head(&parts, body.is_end_stream(), &mut head) {
        Ok(framing) => framing,
        Err(refused) => {
            debug!(%refused, "HTTP/2 request refused");
            bump(&w.stats.frontends[frontend].bad_requests);
            let status = http::StatusCode::from_u16(refused.status())
                .unwrap_or(http::StatusCode::BAD_REQUEST);
            let mut answer = http::Response::new(());
            *answer.status_mut() = status;
            let _ = respond.send_response(answer, true);
            return;
        }
    };
    // The response's framing depends on the method only for HEAD (no body follows).
    let method = if parts.method == http::Method::HEAD {
        tern_h1::Method::Head
    } else {
        tern_h1::Method::Get
    };
    let websocket = match framing {
        BodyFraming::Tunnel(handshake) => Some(handshake),
        _ => None,
    };
    let io = H2Stream::new(
        RequestSource::new(head, framing, body),
        ResponseSink::new(respond, method, websocket.is_some()),
        info,
        websocket,
    );
    // The stream's addresses are its connection's (a PROXY header's, if one came).
    let (addrs, tls) = (io.addrs(), io.tls());
    // Boxed: the session is a large future (kilobytes), which the stream's task would
    // otherwise hold inline and copy at each move (spawn, completion).
    let start = conn::Start::now(tls);
    Box::pin(conn::serve(w, frontend, io, addrs, start, log, track)).await;
}

/// The address and TLS facts of a connection, for its streams.
pub(crate) fn conn_info(
    addrs: &Addrs,
    local: Option<SocketAddr>,
    tls: Option<&rustls::ServerConnection>,
) -> ConnInfo {
    let Some(t) = tls else {
        return tls_conn_info(addrs, local, None);
    };
    let cert = t
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|c| c.as_ref().to_vec());
    let session = ClientTls {
        sni: None,
        alpn: None,
        ..ClientTls::of(t)
    };
    let sni = t.server_name().map(str::to_owned);
    tls_conn_info(addrs, local, Some((sni, cert, Some(session))))
}

/// What the streams of a TLS connection know of its session, whatever the engine: the SNI, the
/// client's verified certificate (DER) and the facts a PROXY v2 header sends.
pub(crate) type TlsFacts = (Option<String>, Option<Vec<u8>>, Option<ClientTls<'static>>);

/// [`conn_info`] from the facts of the session (`None`: a plain connection).
pub(crate) fn tls_conn_info(
    addrs: &Addrs,
    local: Option<SocketAddr>,
    tls: Option<TlsFacts>,
) -> ConnInfo {
    let is_tls = tls.is_some();
    let (sni, cert, session) = tls.unwrap_or_default();
    ConnInfo {
        addrs: addrs.clone(),
        local,
        sni,
        cert,
        tls: is_tls,
        session,
        client_resets: Cell::new(0),
        live: Cell::new(0),
        waiting: RefCell::new(None),
    }
}

/// Whether a TLS connection negotiated HTTP/2 (ALPN `h2`).
pub(crate) fn negotiated(tls: &rustls::ServerConnection) -> bool {
    tls.alpn_protocol() == Some(b"h2")
}
