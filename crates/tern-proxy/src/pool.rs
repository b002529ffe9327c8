//! Idle keep-alive connections to servers, one pool per worker.
//!
//! Each worker keeps its own idle connections per server, so checking one out or in touches only
//! that worker's memory (no lock, no atomic). Connections are reused most-recent-first (the one
//! least likely to have been closed by the server), capped per server, and closed once older than
//! the backend's `idle_timeout` — checked at checkout and by a periodic sweep, so idle connections
//! never pile up when traffic stops.

use std::cell::RefCell;
use std::rc::Rc;

use hyper::client::conn::http1::SendRequest;
use tern_config::PoolSettings;
use tokio::time::Instant;

use crate::body::RequestBody;

/// The sending half of an upstream HTTP/1.1 connection.
pub(crate) type Sender = SendRequest<RequestBody>;

#[derive(Debug)]
struct Idle {
    sender: Sender,
    since: Instant,
}

/// All idle upstream connections of one worker, indexed by backend then server.
#[derive(Debug)]
pub(crate) struct Pools {
    idle: RefCell<Vec<Vec<Vec<Idle>>>>,
    settings: Vec<PoolSettings>,
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
            settings: backends.iter().map(|&(_, s)| s).collect(),
        })
    }

    /// Takes the most recently used idle connection to `server` that is still open and fresh.
    pub(crate) fn checkout(&self, backend: usize, server: usize) -> Option<Sender> {
        let max_age = self.settings.get(backend)?.idle_timeout;
        let mut idle = self.idle.borrow_mut();
        let list = idle.get_mut(backend)?.get_mut(server)?;
        while let Some(conn) = list.pop() {
            if !conn.sender.is_closed() && conn.since.elapsed() < max_age {
                return Some(conn.sender);
            }
        }
        None
    }

    fn checkin(&self, backend: usize, server: usize, sender: Sender) {
        let Some(settings) = self.settings.get(backend) else {
            return;
        };
        let mut idle = self.idle.borrow_mut();
        let Some(list) = idle.get_mut(backend).and_then(|b| b.get_mut(server)) else {
            return;
        };
        if list.len() < settings.max_idle_per_server && !sender.is_closed() {
            list.push(Idle {
                sender,
                since: Instant::now(),
            });
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
                list.retain(|c| !c.sender.is_closed() && c.since.elapsed() < max_age);
                kept += list.len();
            }
        }
        kept
    }
}

/// A connection in use by one stream; returned to the pool with [`Lease::release`] once its
/// response was read to the end, or closed by dropping it.
#[derive(Debug)]
pub(crate) struct Lease {
    pools: Rc<Pools>,
    backend: usize,
    server: usize,
    sender: Sender,
}

impl Lease {
    pub(crate) fn new(pools: Rc<Pools>, backend: usize, server: usize, sender: Sender) -> Self {
        Self {
            pools,
            backend,
            server,
            sender,
        }
    }

    pub(crate) fn sender(&mut self) -> &mut Sender {
        &mut self.sender
    }

    pub(crate) fn release(self) {
        self.pools.checkin(self.backend, self.server, self.sender);
    }
}
