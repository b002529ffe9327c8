//! One accepted connection: optional PROXY protocol header, optional TLS handshake, then
//! hyper's HTTP/1.1 server, or HTTP/2 (`h2.rs`) when TLS negotiated ALPN `h2` or a plain
//! connection opens with the client preface (`preface.rs`).
//!
//! Why an I/O wrapper: `x=N` must cut the connection only after its N bytes reached the
//! socket (see `body.rs`). [`AbortIo`] is the one place that knows a flush completed, so it
//! turns the first completed flush after the body raised the flag into an error, which makes
//! hyper close the connection; the client then sees a body shorter than its content-length.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::body::AbortFlag;
use crate::proxy_header::{self, Proxied};
use crate::worker::WorkerCtx;
use crate::{h2, preface, respond, Counters};

/// A TLS handshake (or a PROXY header) slower than this is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// A plain connection that sends no first bytes for this long is dropped (hyper's HTTP/1.1
/// header timeout, which the preface check comes before).
const FIRST_BYTES_TIMEOUT: Duration = crate::worker::HEAD_TIMEOUT;

/// Serves one accepted connection until it ends or the worker stops.
pub(crate) async fn serve(
    mut stream: TcpStream,
    ctx: Arc<WorkerCtx>,
    mut stop: watch::Receiver<bool>,
) {
    Counters::add(&ctx.counters.connections, 1);
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("term: TCP_NODELAY: {e}");
    }
    let proxied = if ctx.accept_proxy {
        let header = tokio::time::timeout(HANDSHAKE_TIMEOUT, proxy_header::read(&mut stream));
        let read = tokio::select! {
            r = header => r,
            _ = stop.changed() => return,
        };
        match read {
            Ok(Ok(proxied)) => Some(proxied),
            Ok(Err(e)) => {
                tracing::debug!("term: no valid PROXY header: {e}");
                return;
            }
            Err(_) => {
                tracing::debug!("term: PROXY header timed out");
                return;
            }
        }
    } else {
        None
    };
    let Some(acceptor) = ctx.tls.clone() else {
        return serve_plain(stream, ctx, proxied, stop).await;
    };
    let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
    let tls = tokio::select! {
        r = handshake => r,
        _ = stop.changed() => return,
    };
    match tls {
        Ok(Ok(tls)) => {
            let kind = tls.get_ref().1.handshake_kind();
            let counter = match kind {
                Some(rustls::HandshakeKind::Resumed) => &ctx.counters.tls_resumed,
                _ => &ctx.counters.tls_full,
            };
            Counters::add(counter, 1);
            if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
                h2::serve(tls, ctx, proxied, stop).await
            } else {
                serve_http(tls, ctx, proxied, stop).await
            }
        }
        Ok(Err(e)) => {
            Counters::add(&ctx.counters.tls_failures, 1);
            tracing::debug!("term: TLS handshake failed: {e}");
        }
        Err(_) => {
            Counters::add(&ctx.counters.tls_failures, 1);
            tracing::debug!("term: TLS handshake timed out");
        }
    }
}

/// A plain connection: HTTP/2 if it opens with the client preface, else HTTP/1.1.
async fn serve_plain(
    mut stream: TcpStream,
    ctx: Arc<WorkerCtx>,
    proxied: Option<Proxied>,
    mut stop: watch::Receiver<bool>,
) {
    let first = tokio::time::timeout(FIRST_BYTES_TIMEOUT, preface::read(&mut stream));
    let read = tokio::select! {
        r = first => r,
        _ = stop.changed() => return,
    };
    let (is_h2, bytes) = match read {
        Ok(Ok(read)) => read,
        Ok(Err(e)) => {
            tracing::debug!("term: reading the first bytes: {e}");
            return;
        }
        Err(_) => return,
    };
    let stream = preface::Rewind::new(bytes, stream);
    if is_h2 {
        h2::serve(stream, ctx, proxied, stop).await
    } else {
        serve_http(stream, ctx, proxied, stop).await
    }
}

async fn serve_http<S>(
    stream: S,
    ctx: Arc<WorkerCtx>,
    proxied: Option<Proxied>,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let abort = Arc::new(AbortFlag::default());
    let io = TokioIo::new(AbortIo {
        inner: stream,
        abort: abort.clone(),
    });
    let svc_ctx = ctx.clone();
    let svc = service_fn(move |req| {
        respond::handle(req, svc_ctx.clone(), abort.clone(), proxied.clone())
    });
    let conn = ctx.http.serve_connection(io, svc);
    let mut conn = std::pin::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        _ = stop.changed() => {
            // Finish the response in flight (bounded by the worker's grace period), then close.
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!("term: connection ended: {e}");
    }
}

/// Passes I/O through, but fails a completed flush once the [`AbortFlag`] is raised.
#[derive(Debug)]
struct AbortIo<S> {
    inner: S,
    abort: Arc<AbortFlag>,
}

impl<S: AsyncRead + Unpin> AsyncRead for AbortIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for AbortIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(Pin::new(&mut this.inner).poll_flush(cx))?;
        if this.abort.is_raised() {
            return Poll::Ready(Err(io::Error::other("x=N: body cut on purpose")));
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
