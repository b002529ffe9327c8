//! The client connection's I/O, with tern's client-side timeouts applied.
//!
//! Wraps the accepted socket (plain or TLS) below hyper. While no stream is active, a pending read
//! arms one timer whose deadline depends on the phase ([`crate::phase`]):
//! - first request, or bytes of a new head already received: `http_request` from the start of the
//!   wait; expiry writes a 408 response itself (hyper has nothing to say at that point) and ends
//!   the connection;
//! - idle keep-alive connection with no new bytes: `keep_alive` from the end of the last stream;
//!   expiry ends the connection silently, as HAProxy does.
//!
//! A pending write arms the `client` timer (a client that stops reading its response; bytes the
//! TLS stream manages to write during a pending flush count as reading, see [`Progress`]); reads
//! during a stream are timed by the request body wrapper instead, because hyper also polls the
//! socket while it waits for the server, and that wait is the server timeout's business.

use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use crate::phase::Phase;
use crate::stats::{bump, WorkerStats};
use crate::timer::{Deadline, Inactivity};

const RESPONSE_408: &[u8] = b"HTTP/1.1 408 Request Time-out\r\n\
content-length: 110\r\ncache-control: no-cache\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n\
<html><body><h1>408 Request Time-out</h1>\nYour browser didn't send a complete request in time.\n</body></html>\n";

/// Bytes a stream has written to the socket, for streams whose flush can make progress while
/// still pending (TLS: `poll_flush` returns only once rustls' whole buffer, up to 64 KiB, is
/// written). Without it, a slow but steady reader could be timed out mid-flush.
pub(crate) trait Progress {
    /// `None` when every write that makes progress returns ready (plain TCP).
    fn bytes_sent(&self) -> Option<u64> {
        None
    }
}

impl Progress for tokio::net::TcpStream {}

/// Marks the 408 response as written, flushed and shut down.
const SENT_408: usize = usize::MAX;

/// Client-side timeouts, copied from the frontend's configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientTimeouts {
    pub client: Duration,
    pub http_request: Duration,
    pub keep_alive: Duration,
}

/// A client stream with phase-aware timeouts. Not `Send`: it lives on its worker.
#[derive(Debug)]
pub(crate) struct ClientIo<S> {
    inner: S,
    phase: Rc<Phase>,
    timeouts: ClientTimeouts,
    stats: Arc<WorkerStats>,
    frontend: usize,
    head_timer: Deadline,
    write_idle: Inactivity,
    /// `Progress::bytes_sent` when the write timer last looked.
    last_sent: u64,
    /// Bytes of the 408 response written so far, once the head timer expired.
    sending_408: Option<usize>,
}

impl<S> ClientIo<S> {
    pub(crate) fn new(
        inner: S,
        phase: Rc<Phase>,
        timeouts: ClientTimeouts,
        stats: Arc<WorkerStats>,
        frontend: usize,
    ) -> Self {
        Self {
            inner,
            phase,
            timeouts,
            stats,
            frontend,
            head_timer: Deadline::default(),
            write_idle: Inactivity::default(),
            last_sent: 0,
            sending_408: None,
        }
    }

    /// Deadline for the wait for a request head, and whether expiry answers 408.
    fn head_deadline(&self) -> (Instant, bool) {
        let p = &self.phase;
        match p.head_started() {
            Some(start) => (start + self.timeouts.http_request, true),
            None if p.is_first_request() => (p.idle_since() + self.timeouts.http_request, true),
            None => (p.idle_since() + self.timeouts.keep_alive, false),
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Progress + Unpin> ClientIo<S> {
    /// Writes `buf` with the `client` inactivity timer armed while the write is pending.
    fn poll_write_timed(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Ready(r) => {
                self.write_idle.progress();
                Poll::Ready(r)
            }
            Poll::Pending => self.poll_write_timer(cx),
        }
    }

    fn poll_write_timer<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if let Some(sent) = self.inner.bytes_sent() {
            if sent != self.last_sent {
                self.last_sent = sent;
                self.write_idle.progress();
            }
        }
        if self.write_idle.expired(self.timeouts.client, cx) {
            bump(&self.stats.frontends[self.frontend].client_timeouts);
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "client timeout while sending",
            )));
        }
        Poll::Pending
    }

    /// Sends the 408 response, then reports end of stream so hyper closes the connection.
    fn poll_send_408(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.sending_408 == Some(SENT_408) {
            return Poll::Ready(Ok(()));
        }
        while let Some(done) = self.sending_408.filter(|&d| d < RESPONSE_408.len()) {
            let n = ready!(self.poll_write_timed(cx, &RESPONSE_408[done..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sending_408 = Some(done + n);
        }
        ready!(Pin::new(&mut self.inner).poll_flush(cx))?;
        ready!(Pin::new(&mut self.inner).poll_shutdown(cx))?;
        self.sending_408 = Some(SENT_408);
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + AsyncWrite + Progress + Unpin> AsyncRead for ClientIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.sending_408.is_some() {
            return this.poll_send_408(cx);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.phase.saw_bytes(Instant::now());
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending if this.phase.is_active() => {
                this.phase.park_reader(cx.waker());
                Poll::Pending
            }
            Poll::Pending => {
                let (deadline, answer_408) = this.head_deadline();
                if !this.head_timer.expired(deadline, cx) {
                    return Poll::Pending;
                }
                let counters = &this.stats.frontends[this.frontend];
                if answer_408 {
                    bump(&counters.request_timeouts);
                    bump(&counters.resp_4xx);
                    this.sending_408 = Some(0);
                    this.poll_send_408(cx)
                } else {
                    bump(&counters.keepalive_timeouts);
                    Poll::Ready(Ok(()))
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Progress + Unpin> AsyncWrite for ClientIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_timed(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(r) => {
                this.write_idle.progress();
                Poll::Ready(r)
            }
            Poll::Pending => this.poll_write_timer(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Ready(r) => {
                this.write_idle.progress();
                Poll::Ready(r)
            }
            Poll::Pending => this.poll_write_timer(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Closing a TLS stream writes close_notify, which a client that stopped reading can
        // block like any other write.
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_shutdown(cx) {
            Poll::Ready(r) => Poll::Ready(r),
            Poll::Pending => this.poll_write_timer(cx),
        }
    }
}

#[cfg(test)]
mod tests;
