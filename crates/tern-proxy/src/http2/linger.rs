//! A plain HTTP/2 connection's socket, closed in order (see [`Lingering`]).

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A plain client socket that, when the connection ends, sends its FIN first and reads what
/// the client still sent (without waiting) before the close: closing with unread bytes makes
/// the kernel send a reset, which can destroy tern's GOAWAY before the client reads it.
#[derive(Debug)]
pub(crate) struct Lingering(pub(crate) TcpStream);

/// At most this many reads drain a closing connection (the rest, if any, is reset).
const LINGER_READS: usize = 16;

impl Drop for Lingering {
    fn drop(&mut self) {
        let _ = socket2::SockRef::from(&self.0).shutdown(Shutdown::Write);
        let mut buf = [0u8; 4096];
        for _ in 0..LINGER_READS {
            match self.0.try_read(&mut buf) {
                Ok(n) if n > 0 => continue,
                _ => break,
            }
        }
    }
}

impl AsyncRead for Lingering {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Lingering {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
