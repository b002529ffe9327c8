//! Writes of an HTTP/2 connection gathered into as few socket writes as possible.
//!
//! The `h2` crate queues at most one large DATA frame at a time (its payload is chained, not
//! copied) and flushes the socket before it takes the next one, so a connection that sends N
//! responses in one turn makes N `writev` calls and N TLS records (strace under h2load -c 16
//! -m 32: one `writev` per 1 KiB response, where HAProxy sends about eight per write).
//!
//! Over TLS, writes only feed rustls' buffer; the socket write is the flush. This wrapper
//! makes `h2`'s flush a promise: the flush is owed, the task is woken, and the flush happens at
//! the start of the connection task's next turn (its first read), after the streams woken
//! meanwhile have added their frames. Every byte still leaves: the task was woken, and the
//! close flushes. A flush with nothing written since passes straight through.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// An I/O stream whose flushes wait for the connection task's next turn.
#[derive(Debug)]
pub(crate) struct Coalesce<T> {
    io: T,
    /// Bytes were written since the last flush was asked for.
    dirty: bool,
    /// A flush was asked for and not yet done.
    owed: bool,
}

impl<T> Coalesce<T> {
    pub(crate) fn new(io: T) -> Self {
        Coalesce {
            io,
            dirty: false,
            owed: false,
        }
    }
}

impl<T: AsyncWrite + Unpin> Coalesce<T> {
    /// Does the owed flush; an error ends the connection, a pending flush stays owed (the
    /// socket's write readiness wakes the task).
    fn pay(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if self.owed {
            match Pin::new(&mut self.io).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.owed = false,
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => {}
            }
        }
        Ok(())
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for Coalesce<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.pay(cx)?;
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Coalesce<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = std::task::ready!(Pin::new(&mut this.io).poll_write(cx, buf))?;
        this.dirty |= n > 0;
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = std::task::ready!(Pin::new(&mut this.io).poll_write_vectored(cx, bufs))?;
        this.dirty |= n > 0;
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if std::mem::take(&mut this.dirty) {
            if !this.owed {
                this.owed = true;
                cx.waker().wake_by_ref();
            }
            return Poll::Ready(Ok(()));
        }
        if this.owed {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.dirty = false;
        this.owed = false;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}
