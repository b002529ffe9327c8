//! One client connection (a session): TLS handshake, then HTTP/1.1 streams until it ends.

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use http::HeaderValue;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rustls::{HandshakeKind, ServerConfig};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tracing::debug;

use crate::body::{body_error, BodyError};
use crate::client_io::{ClientIo, ClientTimeouts, Progress};
use crate::headers::Forwarding;
use crate::phase::Phase;
use crate::stats::bump;
use crate::stream;
use crate::tls_io::TlsStream;
use crate::worker::{Permits, Worker};

/// What a stream needs to know about its session.
#[derive(Debug)]
pub(crate) struct SessionCtx {
    pub worker: Rc<Worker>,
    pub frontend: usize,
    pub backend: usize,
    pub phase: Rc<Phase>,
    pub forwarding: Forwarding,
}

/// Serves one accepted connection to its end.
pub(crate) async fn serve(
    w: Rc<Worker>,
    frontend: usize,
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<Arc<ServerConfig>>,
    _permits: Permits,
) {
    let _counted = w.session_started();
    // TCP_NODELAY is inherited from the listening socket (see listener.rs).
    let Some(config) = tls else {
        return serve_http(w, frontend, stream, peer, false).await;
    };
    let fe = &w.shared.snapshot.config.frontends[frontend];
    let counters = &w.stats.frontends[frontend];
    let handshake = TlsStream::accept(stream, config);
    match tokio::time::timeout(fe.timeouts.handshake, handshake).await {
        Err(_) => {
            bump(&counters.tls_timeouts);
            debug!(%peer, "TLS handshake timed out");
        }
        Ok(Err(e)) => {
            bump(&counters.tls_failures);
            debug!(%peer, error = %e, "TLS handshake failed");
        }
        Ok(Ok(tls)) => {
            match tls.connection().handshake_kind() {
                Some(HandshakeKind::Resumed) => bump(&counters.tls_resumed),
                _ => bump(&counters.tls_full),
            }
            serve_http(Rc::clone(&w), frontend, tls, peer, true).await;
        }
    }
}

/// Serves HTTP/1.1 on an established (plain or TLS) connection.
async fn serve_http<S>(w: Rc<Worker>, frontend: usize, io: S, peer: SocketAddr, tls: bool)
where
    S: AsyncRead + AsyncWrite + Progress + Unpin + 'static,
{
    let fe = &w.shared.snapshot.config.frontends[frontend];
    let timeouts = ClientTimeouts {
        client: fe.timeouts.client,
        http_request: fe.timeouts.http_request,
        keep_alive: fe.timeouts.keep_alive,
    };
    let phase = Phase::new(Instant::now());
    let io = ClientIo::new(
        io,
        Rc::clone(&phase),
        timeouts,
        Arc::clone(&w.stats),
        frontend,
    );
    let forwarding = Forwarding {
        forwarded_for: fe
            .x_forwarded_for
            .then(|| HeaderValue::from_str(&peer.ip().to_string()).ok())
            .flatten(),
        forwarded_proto: fe
            .x_forwarded_proto
            .then(|| HeaderValue::from_static(if tls { "https" } else { "http" })),
    };
    let ctx = Rc::new(SessionCtx {
        worker: Rc::clone(&w),
        frontend,
        backend: w.shared.frontend_backend[frontend],
        phase,
        forwarding,
    });
    let service = service_fn(move |req| stream::handle(Rc::clone(&ctx), req));
    let mut builder = http1::Builder::new();
    builder
        .keep_alive(true)
        .header_read_timeout(None)
        .max_header_size(fe.limits.max_head_size);
    if fe.limits.max_headers != DEFAULT_MAX_HEADERS {
        // A non-default count makes hyper allocate the header array per request.
        builder.max_headers(fe.limits.max_headers);
    }
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        () = w.stopping() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        account_error(&w, frontend, peer, &e);
    }
}

/// hyper's default header count; keeping it lets hyper parse into a stack array.
const DEFAULT_MAX_HEADERS: usize = 100;

/// Counts how a connection ended in error. hyper has already answered 400 or 431 for malformed
/// or oversized heads.
fn account_error(w: &Worker, frontend: usize, peer: SocketAddr, e: &hyper::Error) {
    let c = &w.stats.frontends[frontend];
    if e.is_parse_too_large() {
        bump(&c.head_too_large);
        bump(&c.resp_4xx);
    } else if e.is_parse() {
        bump(&c.bad_requests);
        bump(&c.resp_4xx);
    } else if e.is_incomplete_message() || e.is_timeout() {
        // Client went away mid-head, or our own 408 ended it (already counted).
    } else if let Some(BodyError::Server(_) | BodyError::ServerTimeout(_)) = body_error(e) {
        // The server cut its response short: counted on the backend, not the client's fault.
    } else if io_error_kind(e) == Some(std::io::ErrorKind::TimedOut) {
        // Our own `client` write timeout (client_io.rs), already counted as client_timeouts.
    } else {
        bump(&c.client_aborts);
    }
    debug!(%peer, error = %e, "client connection ended with an error");
}

/// The kind of the I/O error behind a hyper error, if any.
fn io_error_kind(e: &hyper::Error) -> Option<std::io::ErrorKind> {
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        cause = c.source();
    }
    None
}
