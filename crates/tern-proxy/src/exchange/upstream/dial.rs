//! The TCP connect to a server, with one system call less than `TcpStream::connect`.
//!
//! tokio's connect waits for the socket to become writable, then asks the kernel for
//! `SO_ERROR` to learn whether the connection was established. The readiness event already
//! says so: epoll reports a failed connect with `EPOLLERR` (and `EPOLLHUP`) beside `EPOLLOUT`,
//! an established one with `EPOLLOUT` alone. So the error is read only when the event says
//! there is one, and `TCP_NODELAY` is set before the connect (HAProxy's order), since small
//! requests and responses must not wait for Nagle's algorithm. On a TCP relay that makes a new
//! server connection per client connection, the getsockopt was one of about 21 system calls
//! per session (`bench/tcp.sh`, plain-conn).

use std::io;
use std::net::SocketAddr;

use rustix::io::Errno;
use socket2::{Domain, Protocol, Socket, Type};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// A connected TCP stream to `addr`, with `TCP_NODELAY` set.
pub(crate) async fn dial(addr: SocketAddr) -> io::Result<TcpStream> {
    let socket = Socket::new(
        Domain::for_address(addr),
        Type::STREAM.nonblocking(),
        Some(Protocol::TCP),
    )?;
    socket.set_tcp_nodelay(true)?;
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if Errno::from_io_error(&e) == Some(Errno::INPROGRESS) => {}
        Err(e) => return Err(e),
    }
    let tcp = TcpStream::from_std(socket.into())?;
    let ready = tcp.ready(Interest::WRITABLE | Interest::ERROR).await?;
    if ready.is_error() || ready.is_write_closed() {
        return Err(tcp
            .take_error()?
            .unwrap_or_else(|| io::ErrorKind::ConnectionRefused.into()));
    }
    Ok(tcp)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn connects_and_sets_nodelay() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tcp, accepted) = tokio::join!(dial(addr), listener.accept());
        let tcp = tcp.unwrap();
        assert!(accepted.is_ok());
        assert!(tcp.nodelay().unwrap());
        assert_eq!(tcp.peer_addr().unwrap(), addr);
    }

    #[tokio::test]
    async fn a_refused_connect_is_an_error() {
        // A port nobody listens on: bound, then closed.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let err = dial(addr).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused, "{err}");
    }
}
