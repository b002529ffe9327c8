//! Idle keep-alive connections to servers, one pool per worker.
//!
//! Each worker keeps its own idle connections per server, so checking one out or in touches only
//! that worker's memory (no lock, no atomic). Connections are reused most-recent-first (the one
//! least likely to have been closed by the server), capped per server (`max_idle_per_server`),
//! and closed once idle longer than the backend's `idle_timeout`, or once the server closed them
//! (see [`ServerConn::is_usable`]) — checked at checkout and by a periodic sweep, so idle
//! connections never pile up when traffic stops. Connections to a server whose TLS name comes
//! from each request (`sni = "host"`) are reused only for requests with the same name, and
//! connections to a server with `proxy_protocol` only for requests with the same client and
//! local addresses, i.e. of the same client connection (its PROXY header named them).
//!
//! **Buffers are lent, not kept.** An idle connection holds no read buffer: checkin takes its
//! buffer back into the worker's spare list and checkout lends one (as HAProxy's idle
//! connections hold no buffer), so keeping many idle connections costs sockets, not 32 KiB
//! each, and a stream of an HTTP/2 server connection borrows one for its exchange too.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;

use tern_config::PoolSettings;
use tokio::time::Instant;

use crate::buffer::{Buffer, Kept};
use crate::exchange::h2::Sessions;
use crate::exchange::proxy_header::Origin;
use crate::exchange::upstream::{ServerConn, ServerStream, BUFFER_SIZE, RESPONSE_LIMITS};

/// Spare read buffers kept per worker, at most (32 KiB each; the list decays when they are not
/// needed, see [`Kept`]).
const MAX_SPARE_BUFFERS: usize = 2048;

#[derive(Debug)]
struct IdleConn {
    conn: ServerConn,
    since: Instant,
}

/// All idle server connections of one worker, indexed by backend then server.
#[derive(Debug)]
pub(crate) struct Pools {
    idle: RefCell<Vec<Vec<Vec<IdleConn>>>>,
    /// The HTTP/2 connections, whose streams are requests: kept by the same settings.
    pub(crate) h2: Sessions,
    settings: Vec<PoolSettings>,
    /// Read buffers of connections gone idle (or closed), lent at checkout.
    spare: Kept<Buffer>,
}

impl Pools {
    /// Empty pools for backends with these server counts and settings.
    pub(crate) fn new(backends: &[(usize, PoolSettings)]) -> Rc<Self> {
        Rc::new(Self {
            idle: RefCell::new(
                backends
                    .iter()
                    .map(|&(n, _)| (0..n).map(|_| Vec::new()).collect())
                    .collect(),
            ),
            h2: Sessions::new(backends),
            settings: backends.iter().map(|&(_, s)| s).collect(),
            spare: Kept::new(MAX_SPARE_BUFFERS),
        })
    }

    /// Takes the most recently used idle connection to `server` that is still usable, goes to
    /// `address` (the server may have been moved at runtime) and was opened for `key` (the TLS
    /// name of a server with `sni = "host"`; `None` for all others, whose connections all match,
    /// the most recent being the last one) and `origin` (what the PROXY header of a server with
    /// `proxy_protocol` said; `None` for all others).
    pub(crate) fn checkout(
        &self,
        backend: usize,
        server: usize,
        key: Option<&str>,
        origin: Option<Origin>,
        address: SocketAddr,
    ) -> Option<ServerConn> {
        let max_age = self.settings.get(backend)?.idle_timeout;
        let mut idle = self.idle.borrow_mut();
        let list = idle.get_mut(backend)?.get_mut(server)?;
        let fits = |c: &IdleConn| c.conn.key.as_deref() == key && c.conn.origin == origin;
        // Bounded: each round removes one connection.
        while let Some(at) = list.iter().rposition(fits) {
            let mut c = list.remove(at);
            if c.since.elapsed() < max_age && c.conn.addr == address && c.conn.is_usable() {
                c.conn.buf = self.lend();
                return Some(c.conn);
            }
        }
        None
    }

    /// Keeps `conn` for reuse, unless the server already has `max_idle_per_server` idle ones
    /// (then it is closed). A stream of an HTTP/2 connection ends here; its connection stays
    /// in [`Sessions`].
    pub(crate) fn checkin(&self, backend: usize, server: usize, mut conn: ServerConn) {
        self.give_back(std::mem::replace(&mut conn.buf, Buffer::empty()));
        if matches!(conn.stream, ServerStream::H2(_)) {
            return;
        }
        let Some(settings) = self.settings.get(backend) else {
            return;
        };
        let mut idle = self.idle.borrow_mut();
        let Some(list) = idle.get_mut(backend).and_then(|b| b.get_mut(server)) else {
            return;
        };
        if list.len() < settings.max_idle_per_server {
            list.push(IdleConn {
                conn,
                since: Instant::now(),
            });
        }
    }

    /// A read buffer for a server connection's exchange: a spare one, emptied, or a new one.
    pub(crate) fn lend(&self) -> Buffer {
        match self.spare.take() {
            Some(mut buf) => {
                buf.reset(RESPONSE_LIMITS.max_head_size);
                buf
            }
            None => Buffer::new(BUFFER_SIZE, RESPONSE_LIMITS.max_head_size),
        }
    }

    /// Keeps `buf` for the next exchange, unless enough are kept or it grew.
    pub(crate) fn give_back(&self, buf: Buffer) {
        if buf.capacity() == BUFFER_SIZE {
            self.spare.give(buf);
        }
    }

    /// Closes idle connections that expired or that the server closed. Returns how many remain.
    pub(crate) fn sweep(&self) -> usize {
        let mut idle = self.idle.borrow_mut();
        let mut kept = 0;
        for (b, servers) in idle.iter_mut().enumerate() {
            let max_age = self
                .settings
                .get(b)
                .map(|s| s.idle_timeout)
                .unwrap_or_default();
            for list in servers.iter_mut() {
                list.retain_mut(|c| c.since.elapsed() < max_age && c.conn.is_usable());
                kept += list.len();
            }
        }
        self.spare.sweep();
        kept + self.h2.sweep(&self.settings)
    }

    /// Closes every idle connection (the worker is stopping).
    pub(crate) fn clear(&self) {
        for servers in self.idle.borrow_mut().iter_mut() {
            servers.iter_mut().for_each(Vec::clear);
        }
        self.h2.clear();
        self.spare.clear();
    }
}

#[cfg(test)]
mod tests;
