//! Passive checks (`observe`): what live traffic showed of a server, fed to its shared state;
//! the health checker acts when `error_limit` consecutive errors are reached. Protocol-neutral:
//! each protocol classifies its own exchanges into [`Seen`].

use tern_config::{Backend, ObserveOn};
use tracing::debug;

use crate::exchange::servers::BackendState;

/// What live traffic showed of a server, for passive checks (`observe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Connected and answered validly (a 5xx included, at layer 4).
    Fine,
    /// The connection failed: refused, timed out, or reset before any response.
    ConnectionError,
    /// An invalid response, no response in time, or a 5xx (other than 501 and 505, which
    /// describe the request, as in HAProxy).
    ResponseError,
}

/// Feeds one observation of live traffic to the server's passive check.
pub(crate) fn observe(be: &Backend, state: &BackendState, server: usize, what: Seen) {
    let Some(o) = &be.observe else {
        return;
    };
    let Some(s) = state.server(server) else {
        return;
    };
    let error = match (what, o.on) {
        (Seen::Fine, _) | (Seen::ResponseError, ObserveOn::Layer4) => false,
        (Seen::ConnectionError, _) | (Seen::ResponseError, ObserveOn::Layer7) => true,
    };
    if s.observe(error, o.error_limit) {
        debug!(backend = %be.name, server = %be.servers[server].name, "passive check error limit reached");
    }
}
