//! Listening sockets: one per bind per worker, sharing the port with SO_REUSEPORT.
//!
//! With SO_REUSEPORT the kernel spreads new connections over the workers' sockets, so no worker
//! wakes another and there is no accept lock. A bind on port 0 (tests) is resolved by the first
//! socket, and the other workers bind that concrete port. A port held by another process (that
//! did not set SO_REUSEPORT) makes the first bind fail with the address in the error; so does a
//! port held by another SO_REUSEPORT listener, such as a second tern started by mistake, because an
//! explicit port is first probed with a plain bind (SO_REUSEPORT would otherwise let the two
//! silently share the traffic).

use std::io;
use std::net::{SocketAddr, TcpListener};

use socket2::{Domain, Protocol, Socket, Type};

/// The most response bytes a client socket queues in the kernel beyond what the client's
/// window lets through (TCP_NOTSENT_LOWAT). Without it, Linux grows a socket's send buffer up
/// to `net.ipv4.tcp_wmem`'s maximum (4 MiB by default) even for a client that reads nothing: a
/// slow reader then costs megabytes of kernel memory until the `client` timeout, and tern's
/// worker spends its time copying them (docs/security.md, "Slow and abusive clients"). Bytes in
/// flight are not limited by it, so the congestion window and send-buffer autotuning still set
/// the pace for clients that do read; 128 KiB keeps the socket fed between two writes of
/// tern's buffers.
pub(crate) const CLIENT_NOTSENT_LOWAT: u32 = 128 * 1024;

fn new_socket(addr: SocketAddr) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_reuse_address(true)?;
    Ok(socket)
}

/// Fails with "address in use" if any socket listens on `addr`, even an SO_REUSEPORT one.
fn probe(addr: SocketAddr) -> io::Result<()> {
    // Dropping a bound socket that never listened frees the port at once.
    new_socket(addr)?.bind(&addr.into())
}

/// Binds one listening socket.
pub(crate) fn bind(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    let socket = new_socket(addr)?;
    socket.set_reuse_port(true)?;
    // Accepted sockets inherit TCP_NODELAY from the listener on Linux (checked by a test), which
    // saves a setsockopt per connection: small responses must not wait for Nagle's algorithm.
    socket.set_tcp_nodelay(true)?;
    // Inherited the same way (checked by the same test).
    socket.set_tcp_notsent_lowat(CLIENT_NOTSENT_LOWAT)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
    Ok(socket.into())
}

/// Binds `count` sockets on the same address, returning the address actually bound.
pub(crate) fn bind_group(
    addr: SocketAddr,
    count: usize,
    backlog: u32,
) -> io::Result<(SocketAddr, Vec<TcpListener>)> {
    if addr.port() != 0 {
        probe(addr)?;
    }
    let first = bind(addr, backlog)?;
    let actual = first.local_addr()?;
    let mut all = Vec::with_capacity(count);
    all.push(first);
    for _ in 1..count {
        all.push(bind(actual, backlog)?);
    }
    Ok((actual, all))
}

/// Takes over the sockets of a previous generation bound to `addr`, adding sockets to the
/// SO_REUSEPORT group when there are fewer than `count` (never closing one: its accept queue
/// would be lost).
pub(crate) fn adopt_group(
    addr: SocketAddr,
    mut sockets: Vec<TcpListener>,
    count: usize,
    backlog: u32,
) -> io::Result<(SocketAddr, Vec<TcpListener>)> {
    for socket in &sockets {
        // A socket from another process (an upgrade) must be a listener in non-blocking mode.
        socket.set_nonblocking(true)?;
    }
    while sockets.len() < count {
        sockets.push(bind(addr, backlog)?);
    }
    Ok((addr, sockets))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn accepted_sockets_inherit_nodelay_and_notsent_lowat() {
        let (addr, mut listeners) = bind_group("127.0.0.1:0".parse().unwrap(), 1, 16).unwrap();
        let listener = listeners.remove(0);
        listener.set_nonblocking(false).unwrap();
        let _client = std::net::TcpStream::connect(addr).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert!(accepted.nodelay().unwrap());
        let accepted = socket2::SockRef::from(&accepted);
        assert_eq!(accepted.tcp_notsent_lowat().unwrap(), CLIENT_NOTSENT_LOWAT);
    }

    #[test]
    fn explicit_port_in_use_is_refused_even_with_reuseport() {
        let (addr, _held) = bind_group("127.0.0.1:0".parse().unwrap(), 1, 16).unwrap();
        let err = bind_group(addr, 1, 16).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    }
}
