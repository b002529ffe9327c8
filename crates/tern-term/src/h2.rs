//! HTTP/2: the same responses as HTTP/1.1, one per stream, on connections that negotiated ALPN
//! `h2` over TLS or opened with the client preface in plain text (h2c, see `preface.rs`).
//!
//! Why hyper's HTTP/2 server (itself on the `h2` crate): the HTTP/1.1 side already answers with
//! hyper, so every stream goes through the very same `respond::handle` and `TermBody` —
//! sizes, delays, statuses, echo, head dumps and cookies mean the same on both protocols with
//! no second copy of the logic. What differs is written down here and in the crate docs:
//!
//! - `k=0` has no HTTP/2 meaning (`Connection` is a connection-specific field, RFC 9113
//!   §8.2.2): hyper leaves the field out and the connection stays open.
//! - `x=N` ends the *stream* with RST_STREAM once its N bytes were handed to the connection,
//!   not the connection: other streams carry on. A reset may discard data still queued, so the
//!   client sees a reset stream with at most N bytes.
//!
//! Settings: up to [`MAX_STREAMS`] concurrent streams per connection (nginx allows 128, HAProxy
//! 100; load generators like `h2load -m 32` stay under either), hyper's defaults otherwise.

use std::sync::Arc;

use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use crate::body::AbortFlag;
use crate::proxy_header::Proxied;
use crate::respond;
use crate::worker::WorkerCtx;
use crate::Counters;

/// Concurrent streams a client may open on one connection.
pub(crate) const MAX_STREAMS: u32 = 256;

/// The HTTP/2 server settings of every connection of a worker.
pub(crate) fn builder() -> http2::Builder<TokioExecutor> {
    let mut b = http2::Builder::new(TokioExecutor::new());
    b.timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS);
    b
}

/// Serves HTTP/2 on an established connection until it ends or the worker stops.
pub(crate) async fn serve<S>(
    io: S,
    ctx: Arc<WorkerCtx>,
    proxied: Option<Proxied>,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    Counters::add(&ctx.counters.http2, 1);
    // Streams are cut one by one (`x=N`): the flag only says so, it is never raised.
    let abort = Arc::new(AbortFlag::per_stream());
    let svc_ctx = ctx.clone();
    let svc = service_fn(move |req| {
        respond::handle(req, svc_ctx.clone(), abort.clone(), proxied.clone())
    });
    let conn = ctx.h2.serve_connection(TokioIo::new(io), svc);
    let mut conn = std::pin::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        _ = stop.changed() => {
            // GOAWAY: streams in flight finish (bounded by the worker's grace period).
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!("term: HTTP/2 connection ended: {e}");
    }
}
