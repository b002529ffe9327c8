//! Connections to servers: a TCP socket, its read buffer and the response head parsed from it.
//!
//! A server connection is driven by the session task that uses it (no task of its own, no
//! channel) and outlives that session in the worker's pool ([`crate::pool`]). Its buffer and
//! parsed-head storage travel with it, so a reused connection parses its next response without
//! allocating.
//!
//! Whether an idle connection is still usable is judged by its read readiness, polled with a
//! no-op waker: tokio clears read readiness after a read shorter than the buffer (the end of a
//! response), so a connection the kernel reported no event for since cannot have been closed
//! by the server, and no system call is made. Only when an event arrived does a `try_read` tell
//! a close (end of stream, reset) or unexpected bytes (both: discard) from a spurious wake-up.

use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tern_h1::{Limits, ResponseHead};
use tokio::net::TcpStream;

use crate::buffer::Buffer;

/// Working size of a server connection's read buffer: the unit in which response bodies are
/// relayed (fewer, larger reads and writes for big bodies; small enough to keep many pooled).
const BUFFER_SIZE: usize = 32 * 1024;

/// Limits on response heads. Servers are trusted more than clients, but a head still has to
/// fit the buffer: a larger one is answered 502.
pub(crate) const RESPONSE_LIMITS: Limits = Limits {
    max_head_size: 64 * 1024,
    max_headers: 128,
    max_chunk_ext: 16 * 1024,
    max_trailer_size: 64 * 1024,
};

/// Why a connection to a server could not be opened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("connect to {addr} timed out after {timeout:?}")]
    Timeout { addr: SocketAddr, timeout: Duration },
    #[error("connect to {addr}: {cause}")]
    Io { addr: SocketAddr, cause: io::Error },
}

/// An open connection to a server.
#[derive(Debug)]
pub(crate) struct ServerConn {
    pub tcp: TcpStream,
    pub buf: Buffer,
    pub head: ResponseHead,
}

/// Connects to `addr` within `timeout`.
pub(crate) async fn connect(
    addr: SocketAddr,
    timeout: Duration,
) -> Result<ServerConn, ConnectError> {
    let tcp = match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
        Err(_) => return Err(ConnectError::Timeout { addr, timeout }),
        Ok(Err(cause)) => return Err(ConnectError::Io { addr, cause }),
        Ok(Ok(tcp)) => tcp,
    };
    // Small requests and responses must not wait for Nagle's algorithm.
    let _ = tcp.set_nodelay(true);
    Ok(ServerConn {
        tcp,
        buf: Buffer::new(BUFFER_SIZE, RESPONSE_LIMITS.max_head_size),
        head: ResponseHead::new(),
    })
}

impl ServerConn {
    /// Whether an idle connection can carry a request: no close, reset or stray byte from the
    /// server since its last response (see the module docs).
    pub(crate) fn is_usable(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        match self.tcp.poll_read_ready(&mut cx) {
            Poll::Pending => true,
            Poll::Ready(Err(_)) => false,
            Poll::Ready(Ok(())) => {
                self.buf.clear();
                matches!(self.tcp.try_read(self.buf.spare()), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            }
        }
    }
}
