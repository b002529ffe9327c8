//! Opening connections to servers.

use std::net::SocketAddr;
use std::time::Duration;

use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tracing::debug;

use crate::pool::Sender;

/// Why a connection to a server could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("connect to {addr} timed out after {timeout:?}")]
    Timeout { addr: SocketAddr, timeout: Duration },
    #[error("connect to {addr}: {cause}")]
    Io {
        addr: SocketAddr,
        cause: std::io::Error,
    },
    #[error("HTTP/1.1 setup with {addr}: {cause}")]
    Http {
        addr: SocketAddr,
        cause: hyper::Error,
    },
}

/// Connects to `addr` within `timeout` and starts an HTTP/1.1 client connection on the current
/// worker. The connection task ends when the returned sender (and any response body) is dropped.
pub(crate) async fn connect(addr: SocketAddr, timeout: Duration) -> Result<Sender, ConnectError> {
    let stream = match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
        Err(_) => return Err(ConnectError::Timeout { addr, timeout }),
        Ok(Err(cause)) => return Err(ConnectError::Io { addr, cause }),
        Ok(Ok(s)) => s,
    };
    // Small requests and responses must not wait for Nagle's algorithm.
    let _ = stream.set_nodelay(true);
    let (sender, conn) = http1::Builder::new()
        .handshake(TokioIo::new(stream))
        .await
        .map_err(|cause| ConnectError::Http { addr, cause })?;
    tokio::task::spawn_local(async move {
        if let Err(e) = conn.await {
            debug!(server = %addr, error = %e, "server connection ended with an error");
        }
    });
    Ok(sender)
}
