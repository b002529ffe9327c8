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
