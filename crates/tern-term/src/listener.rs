//! Binding one SO_REUSEPORT listening socket per (address, thread).
//!
//! Why SO_REUSEPORT: each worker thread accepts on its own socket and the kernel spreads new
//! connections across them, so no accept lock or cross-thread hand-off exists.
//!
//! Why the probe: SO_REUSEPORT lets any socket of the same user join an existing group, so a
//! second `tern term` on a busy port would silently share it instead of failing. Before binding
//! an explicit port we therefore bind it once *without* SO_REUSEPORT; that fails if anyone
//! listens there. With port 0 the kernel picks a port nobody uses (it does not hand out ports
//! of SO_REUSEPORT groups on autobind), and the other threads then bind that concrete port.

use std::io;
use std::net::{SocketAddr, TcpListener};

use socket2::{Domain, Protocol, Socket, Type};

use crate::TermError;

/// Listen backlog; the kernel caps it at `net.core.somaxconn`.
const BACKLOG: i32 = 4096;

/// The result of [`bind_all`].
#[derive(Debug)]
pub(crate) struct Bound {
    /// Resolved address per requested address, in order.
    pub(crate) addrs: Vec<SocketAddr>,
    /// `per_thread[t][a]`: thread `t`'s socket for address `a`.
    pub(crate) per_thread: Vec<Vec<TcpListener>>,
}

/// Binds `threads` listening sockets for every address; all or nothing.
pub(crate) fn bind_all(listen: &[SocketAddr], threads: usize) -> Result<Bound, TermError> {
    let mut per_thread: Vec<Vec<TcpListener>> = (0..threads).map(|_| Vec::new()).collect();
    let mut addrs = Vec::with_capacity(listen.len());
    for &wanted in listen {
        let bind_err = |addr: SocketAddr| move |source| TermError::Bind { addr, source };
        if wanted.port() != 0 {
            probe(wanted).map_err(bind_err(wanted))?;
        }
        let first = bind_one(wanted).map_err(bind_err(wanted))?;
        let actual = first.local_addr().map_err(bind_err(wanted))?;
        addrs.push(actual);
        per_thread[0].push(first);
        for sockets in per_thread.iter_mut().skip(1) {
            sockets.push(bind_one(actual).map_err(bind_err(actual))?);
        }
    }
    Ok(Bound { addrs, per_thread })
}

fn new_socket(addr: SocketAddr) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Lets a restarted server bind while old connections linger in TIME_WAIT.
    socket.set_reuse_address(true)?;
    if addr.is_ipv6() {
        // Predictable: `[::]:P` does not also take `0.0.0.0:P`, so both may be listed.
        socket.set_only_v6(true)?;
    }
    Ok(socket)
}

/// Fails with "address in use" if any socket listens on `addr`, even an SO_REUSEPORT one.
fn probe(addr: SocketAddr) -> io::Result<()> {
    let socket = new_socket(addr)?;
    socket.bind(&addr.into())
    // Dropping a bound, never-listening socket frees the port at once.
}

fn bind_one(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = new_socket(addr)?;
    // Without SO_REUSEPORT (non-Unix) only one thread can bind: more threads fail to start.
    #[cfg(unix)]
    socket.set_reuse_port(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn port_zero_resolves_once_for_all_threads() {
        let b = bind_all(&["127.0.0.1:0".parse().unwrap()], 3).unwrap();
        assert_eq!(b.addrs.len(), 1);
        assert_ne!(b.addrs[0].port(), 0);
        for sockets in &b.per_thread {
            assert_eq!(sockets[0].local_addr().unwrap(), b.addrs[0]);
        }
    }

    #[test]
    fn busy_port_is_refused_even_for_reuseport_holders() {
        let b = bind_all(&["127.0.0.1:0".parse().unwrap()], 1).unwrap();
        let err = bind_all(&b.addrs, 1).unwrap_err();
        assert!(err.to_string().contains(&b.addrs[0].to_string()), "{err}");
    }
}
