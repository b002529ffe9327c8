//! A server for a TCP-mode session: the same steps as an HTTP request's, without a request.
//!
//! Stickiness on the source names a server if it is up; otherwise the balancer picks one
//! ([`crate::exchange::pick::pick_server`] with no request: `source` hashing reads the client
//! address, the others need nothing), waiting in the backend queue when every usable server is
//! at its `maxconn`. The connection is always new ([`upstream::connect`]: TLS to servers with
//! `tls`, the PROXY header for those with `proxy_protocol`, all inside the `connect` timeout):
//! a pooled HTTP connection may not carry a stranger's bytes, and a TCP server connection ends
//! with its client's. A failed connect goes through [`Attempt::failed_to_connect`] (counters,
//! passive checks, the log, `retries` and `redispatch`) exactly as for HTTP.

use tracing::{debug, warn};

use crate::access_log::Tracker;
use crate::exchange::attempt::Attempt;
use crate::exchange::connect::{address, proxied, tls_target};
use crate::exchange::persist;
use crate::exchange::pick::{pick_server, refusal_state};
use crate::exchange::servers;
use crate::exchange::upstream::{self, ConnectError, ServerConn};
use crate::listen::client::ClientStream;
use crate::listen::proxy_in::Addrs;
use crate::profiling::{Kind, Profiled};
use crate::stats::bump;
use crate::worker::Worker;

/// A TCP-mode session looking for its server.
pub(super) struct Session<'w> {
    pub w: &'w Worker,
    pub backend: usize,
    /// The client's addresses (the socket's, or its PROXY header's).
    pub addrs: Addrs,
}

impl Session<'_> {
    /// The session's server, a connection to it, and the attempt holding the server's slot
    /// (drop it when the session ends); `None` when no server could be had (logged and
    /// counted).
    pub(super) async fn server<S: ClientStream>(
        &self,
        io: &S,
        mut log: Option<&mut Tracker>,
    ) -> Option<(usize, ServerConn, Attempt)> {
        let (w, b) = (self.w, self.backend);
        let state = w.balancers.state(b)?;
        let stuck = state
            .sticky()
            .then(|| state.stuck(self.addrs.peer.ip(), servers::now()))
            .flatten();
        let mut attempt = Attempt::new(w, b);
        loop {
            let server = match attempt.server() {
                Some(server) => server,
                None => self.pick(&mut attempt, stuck, log.as_deref_mut()).await?,
            };
            match self.open(io, server).await {
                Ok(conn) => {
                    if !attempt.persisted() {
                        persist::remember(state, self.addrs.peer.ip(), server);
                    }
                    if let Some(log) = log.as_deref_mut() {
                        log.connected();
                    }
                    return Some((server, conn, attempt));
                }
                Err(timed_out) => {
                    let again = attempt.failed_to_connect(w, server, timed_out, log.as_deref_mut());
                    if !again {
                        return None;
                    }
                }
            }
        }
    }

    /// Picks a server (or waits in the queue for one) and takes its slot.
    async fn pick(
        &self,
        attempt: &mut Attempt,
        stuck: Option<usize>,
        log: Option<&mut Tracker>,
    ) -> Option<usize> {
        let (w, b) = (self.w, self.backend);
        let placement = attempt.placement(stuck);
        match pick_server(w, b, None, self.addrs.peer.ip(), placement).await {
            Ok(picked) => {
                if let Some(log) = log {
                    log.picked(picked.server());
                }
                Some(attempt.hold(picked))
            }
            Err(refusal) => {
                debug!(backend = %w.shared.backend(b).name, %refusal, "no server");
                bump(&w.stats.backends[b].no_server);
                if let Some(log) = log {
                    log.no_server(refusal_state(&refusal));
                }
                None
            }
        }
    }

    /// A new connection to `server`; `Err(true)` when it timed out, `Err(false)` when it
    /// failed otherwise.
    async fn open<S: ClientStream>(&self, io: &S, server: usize) -> Result<ServerConn, bool> {
        let (w, b) = (self.w, self.backend);
        let be = w.shared.backend(b);
        let srv = &be.servers[server];
        let addr = address(w, b, server);
        let tls = tls_target(w, b, server, None, addr);
        let proxy = proxied(io, &self.addrs, srv);
        // A spare buffer: a new one is allocated and zeroed (32 KiB) for every session otherwise.
        let buf = w.pools.lend();
        let connect = upstream::connect_with(addr, be.timeouts.connect, tls, proxy, buf);
        match Profiled::new(Kind::Connect, connect).await {
            Ok(conn) => {
                let sc = &w.stats.servers[b][server];
                bump(&sc.connects);
                bump(&sc.tcp_sessions);
                bump(&w.stats.backends[b].tcp_sessions);
                Ok(conn)
            }
            Err(e) => {
                if e.is_tls() {
                    warn!(backend = %be.name, server = %srv.name, error = %e, "connect failed");
                } else {
                    debug!(backend = %be.name, server = %srv.name, error = %e, "connect failed");
                }
                Err(matches!(e, ConnectError::Timeout { .. }))
            }
        }
    }
}
