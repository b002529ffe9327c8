//! One request's way to a server across its connection attempts: which server holds its slot,
//! which ones failed it, and how many retries are left (`retries`, `redispatch`).
//!
//! A connection that could not be opened (refused, timed out, TLS refused) reached no server
//! application, so trying again is safe for every method: on another server with `redispatch`
//! (the failed ones avoided), else on the same one. Protocol-neutral.

use crate::access_log::Tracker;
use crate::exchange::balance::{InFlight, Placement};
use crate::exchange::observe::{observe, Seen};
use crate::stats::bump;
use crate::worker::Worker;

/// One request's way to a server of `backend`, across its connection attempts.
#[derive(Debug)]
pub(crate) struct Attempt {
    backend: usize,
    retries_left: u32,
    /// Servers this request failed to connect to, avoided when it is redispatched.
    failed: Vec<usize>,
    /// The request holds a slot on its server, and counts as in flight, until the exchange
    /// ends or it leaves the server.
    inflight: Option<InFlight>,
}

impl Attempt {
    /// A request about to go to a server of `backend`, with the backend's `retries`.
    pub(crate) fn new(w: &Worker, backend: usize) -> Self {
        Self {
            backend,
            retries_left: w.shared.backend(backend).retries,
            failed: Vec::new(),
            inflight: None,
        }
    }

    /// The server whose slot the request holds, if any.
    pub(crate) fn server(&self) -> Option<usize> {
        self.inflight.as_ref().map(InFlight::server)
    }

    /// How the request may be placed: on `persist` if it is up, never on a server it failed.
    pub(crate) fn placement(&self, persist: Option<usize>) -> Placement<'_> {
        Placement {
            persist,
            avoid: &self.failed,
        }
    }

    /// The request got the slot of `picked`'s server; its server.
    pub(crate) fn hold(&mut self, picked: InFlight) -> usize {
        self.inflight.insert(picked).server()
    }

    /// The request's slot, while it holds one.
    pub(crate) fn inflight(&self) -> Option<&InFlight> {
        self.inflight.as_ref()
    }

    /// Whether persistence chose the server of this request.
    pub(crate) fn persisted(&self) -> bool {
        self.inflight.as_ref().is_some_and(InFlight::persisted)
    }

    /// Counts a failed connection to `server` (passive checks and the log included) and says
    /// whether to try again: on another server with `redispatch` (the failed ones avoided), else
    /// the same one. Nothing reached the server's application, so this is safe for every method.
    pub(crate) fn failed_to_connect(
        &mut self,
        w: &Worker,
        server: usize,
        timed_out: bool,
        mut log: Option<&mut Tracker>,
    ) -> bool {
        if let Some(log) = log.as_deref_mut() {
            log.connect_failed(timed_out);
        }
        let (b, be) = (self.backend, w.shared.backend(self.backend));
        let (bc, sc) = (&w.stats.backends[b], &w.stats.servers[b][server]);
        bump(&bc.connect_errors);
        bump(&sc.connect_errors);
        if let Some(state) = w.balancers.state(b) {
            observe(be, state, server, Seen::ConnectionError);
        }
        if self.retries_left == 0 {
            bump(&bc.no_server);
            return false;
        }
        self.retries_left -= 1;
        bump(&bc.retries);
        if let Some(log) = log {
            log.retried(be.redispatch);
        }
        if be.redispatch {
            self.failed.push(server);
            self.inflight = None;
            bump(&bc.redispatches);
        }
        true
    }
}
