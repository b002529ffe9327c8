//! An HTTP/2 connection's socket, closed in order (see [`Lingering`]).

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::tls::stream::TlsStream;

/// A client connection that, when it ends, sends its FIN first and reads what the client still
/// sent (without waiting) before the close: closing with unread bytes makes the kernel send a
/// reset, which can destroy tern's GOAWAY before the client reads it. A client that floods
/// frames is the usual one to have bytes in flight when tern ends its connection. On TLS the
/// bytes drained are records never decrypted: nothing more is read from the connection.
#[derive(Debug)]
pub(crate) struct Lingering<T: Socket>(pub(crate) T);

/// The TCP socket under a client connection, plain or TLS.
pub(crate) trait Socket: AsyncRead + AsyncWrite + Unpin {
    fn tcp(&self) -> &TcpStream;
}

impl Socket for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl Socket for TlsStream {
    fn tcp(&self) -> &TcpStream {
        TlsStream::tcp(self)
    }
}

/// At most this many reads drain a closing connection (the rest, if any, is reset).
const LINGER_READS: usize = 16;

impl<T: Socket> Drop for Lingering<T> {
    fn drop(&mut self) {
        let tcp = self.0.tcp();
        let _ = socket2::SockRef::from(tcp).shutdown(Shutdown::Write);
        let mut buf = [0u8; 4096];
        for _ in 0..LINGER_READS {
            match tcp.try_read(&mut buf) {
                Ok(n) if n > 0 => continue,
                _ => break,
            }
        }
    }
}

impl<T: Socket> AsyncRead for Lingering<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<T: Socket> AsyncWrite for Lingering<T> {
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
        self.0.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
