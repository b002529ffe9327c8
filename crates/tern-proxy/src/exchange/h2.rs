//! HTTP/2 to servers (`proto = "h2"`, or `h2` picked from a TLS server's `alpn` offer): each
//! request of the exchange is a stream on a connection shared with the worker's other
//! requests to the same server.
//!
//! The exchange does not change for it. A request still gets a
//! [`ServerConn`](crate::exchange::upstream::ServerConn) from `connect.rs`, whose stream is an
//! [`UpstreamStream`]: the relay writes the HTTP/1.1 request to it and reads an HTTP/1.1
//! response back, and the stream speaks HTTP/2 underneath (`stream.rs`) — the mirror image of
//! the client side, where each HTTP/2 stream is served as an HTTP/1.1 exchange (design note
//! 0003). Retries, redispatch, passive checks, persistence, `maxconn` and the queue (a stream
//! holds a server slot as a connection does) work as for HTTP/1.1.
//!
//! **Connections** ([`Sessions`], one set per worker, no lock): a request takes the oldest
//! connection to its server with room for a stream under the server's
//! `SETTINGS_MAX_CONCURRENT_STREAMS`, and opens a new connection when none has room, so the
//! server's limit is honoured and requests never queue behind a full connection. Connections
//! that carry no stream are closed after the backend's `pool.idle_timeout`, and at most
//! `pool.max_idle_per_server` idle ones are kept; one that got a GOAWAY takes no new stream
//! (a request that met the GOAWAY before any response byte is sent again on a new connection,
//! as on a closed HTTP/1.1 keep-alive connection).
//!
//! | file | what |
//! |---|---|
//! | `session.rs` | one connection: its task, its stream count, whether it is usable |
//! | `request.rs` | the HTTP/1.1 request head as HTTP/2 HEADERS |
//! | `response.rs` | the HTTP/2 response head as an HTTP/1.1 head, and its body framing |
//! | `stream.rs` | one exchange as the byte stream the relay uses |
//! | `upgrade.rs` | an upgrade request (WebSocket) as an extended CONNECT (RFC 8441), its 2xx as a `101` |
//! | `fuzz.rs` | one request served in memory, for the `h2_response` fuzz target |

#[doc(hidden)]
pub mod fuzz;
mod request;
mod response;
mod session;
mod stream;
mod upgrade;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use tern_config::PoolSettings;

use crate::exchange::proxy_header::Origin;
use crate::exchange::upstream::ServerStream;
use crate::stats::WorkerStats;
pub(crate) use request::Target;
use session::Session;
pub(crate) use stream::UpstreamStream;
pub(crate) use upgrade::is_unsupported;

/// The HTTP/2 connections of one worker to its servers, indexed by backend then server.
#[derive(Debug)]
pub(crate) struct Sessions {
    by_server: RefCell<Vec<Vec<Vec<Rc<Session>>>>>,
}

impl Sessions {
    /// No connection yet, for backends with these server counts.
    pub(crate) fn new(backends: &[(usize, PoolSettings)]) -> Self {
        Sessions {
            by_server: RefCell::new(
                backends
                    .iter()
                    .map(|&(n, _)| (0..n).map(|_| Vec::new()).collect())
                    .collect(),
            ),
        }
    }

    /// A stream on a connection to `server` at `address` with room for one, opened for `key`
    /// and `origin` (see [`crate::exchange::pool::Pools::checkout`]); connections no longer
    /// usable are dropped on the way.
    pub(crate) fn stream(
        &self,
        backend: usize,
        server: usize,
        key: Option<&str>,
        origin: Option<Origin>,
        target: Target,
    ) -> Option<UpstreamStream> {
        let mut all = self.by_server.borrow_mut();
        let list = all.get_mut(backend)?.get_mut(server)?;
        list.retain(|s| s.is_usable() && s.addr == target.addr);
        let session = list
            .iter()
            .find(|s| s.key.as_deref() == key && s.origin == origin && s.has_room())?;
        Some(UpstreamStream::new(Rc::clone(session), target))
    }

    /// Starts HTTP/2 on a new connection to `server` of `backend` and opens a stream on it;
    /// the connection's task counts a panic in `stats`' backend counters.
    pub(crate) async fn open(
        &self,
        (stats, backend, server): (&Arc<WorkerStats>, usize, usize),
        io: ServerStream,
        key: Option<Box<str>>,
        origin: Option<Origin>,
        target: Target,
    ) -> Result<UpstreamStream, h2::Error> {
        let guard = (stats, backend);
        let session = Session::start(io, target.addr, key, origin, guard).await?;
        let stream = UpstreamStream::new(Rc::clone(&session), target);
        if let Some(list) = self
            .by_server
            .borrow_mut()
            .get_mut(backend)
            .and_then(|b| b.get_mut(server))
        {
            list.push(session);
        }
        Ok(stream)
    }

    /// Closes connections that ended, and idle ones beyond `max_idle_per_server` or idle for
    /// `idle_timeout` (each backend's `settings`). Returns how many remain.
    pub(crate) fn sweep(&self, settings: &[PoolSettings]) -> usize {
        let mut kept = 0;
        for (b, servers) in self.by_server.borrow_mut().iter_mut().enumerate() {
            let Some(pool) = settings.get(b) else {
                continue;
            };
            for list in servers.iter_mut() {
                list.retain(|s| s.is_usable() && s.idle_for() < pool.idle_timeout);
                let mut idle = list.iter().filter(|s| s.is_idle()).count();
                // The newest idle connections go first: the oldest are the ones requests fill.
                let mut i = list.len();
                while idle > pool.max_idle_per_server && i > 0 {
                    i -= 1;
                    if list[i].is_idle() {
                        list.remove(i);
                        idle -= 1;
                    }
                }
                kept += list.len();
            }
        }
        kept
    }

    /// Drops every connection (the worker is stopping): each closes once its streams ended.
    pub(crate) fn clear(&self) {
        for servers in self.by_server.borrow_mut().iter_mut() {
            servers.iter_mut().for_each(Vec::clear);
        }
    }
}
