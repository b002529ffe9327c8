//! Persistence: sending a client back to the server it used before.
//!
//! Two mechanisms, both per backend and both optional:
//! - **Cookie** (insert mode, as HAProxy's `cookie NAME insert`): tern sets a cookie naming the
//!   server on a response when the client did not already present a valid one for that server,
//!   and honours it on later requests — on this connection or any other — while the server is
//!   up. `indirect` strips it from requests so the server never sees it; `nocache` marks the
//!   response that sets it `Cache-Control: private`; `postonly` sets it only on responses to
//!   POST.
//! - **Stickiness on the source address**: a shared table remembers which server each client
//!   address went to, with expiry and a size limit ([`tern_balance::StickTable`]).
//!
//! A cookie wins over the table. Persistence never sends traffic to a server that is down: the
//! request is then balanced normally (and gets a new cookie). A drained server (weight 0) still
//! takes its persistent clients, which is what draining is for.

use std::net::IpAddr;

use tern_balance::ServerId;
use tern_config::{Backend, CookiePersistence};
use tern_h1::{find_cookie, Method, RequestHead};

use crate::servers::{self, BackendState};

/// What persistence says about one request.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Persisted {
    /// The server the request's cookie names (valid or not for routing: it may be down).
    pub cookie: Option<ServerId>,
    /// The server to try first (cookie, else stickiness).
    pub server: Option<ServerId>,
}

/// Reads the persistence cookie and the stickiness table for a request.
pub(crate) fn lookup(
    be: &Backend,
    state: &BackendState,
    head: &RequestHead,
    buf: &[u8],
    client: IpAddr,
) -> Persisted {
    let cookie = be.cookie.as_ref().and_then(|c| cookie_server(c, head, buf));
    let server = match cookie {
        Some(s) if state.server(s).is_some_and(|s| s.usable()) => Some(s),
        _ if state.sticky() => state.stuck(client, servers::now()),
        _ => None,
    };
    Persisted { cookie, server }
}

/// The server whose cookie value the request carries.
fn cookie_server(c: &CookiePersistence, head: &RequestHead, buf: &[u8]) -> Option<ServerId> {
    let value = find_cookie(head, buf, c.name.as_bytes())?;
    c.values.iter().position(|v| v.as_bytes() == value)
}

/// Remembers the server a request went to, in the stickiness table.
pub(crate) fn remember(state: &BackendState, client: IpAddr, server: ServerId) {
    if state.sticky() {
        state.stick(client, server, servers::now());
    }
}

/// Appends the fields that set the persistence cookie for `server`, when the client needs it:
/// it did not present a cookie naming that server (and, with `postonly`, the request is a POST).
pub(crate) fn response_fields(
    be: &Backend,
    server: ServerId,
    persisted: &Persisted,
    method: Method,
    out: &mut Vec<u8>,
) {
    out.clear();
    let Some(c) = &be.cookie else {
        return;
    };
    if persisted.cookie == Some(server) || (c.postonly && method != Method::Post) {
        return;
    }
    let Some(value) = c.values.get(server) else {
        return;
    };
    out.extend_from_slice(b"set-cookie: ");
    out.extend_from_slice(c.name.as_bytes());
    out.push(b'=');
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"; path=/");
    if let Some(domain) = &c.domain {
        out.extend_from_slice(b"; domain=");
        out.extend_from_slice(domain.as_bytes());
    }
    if let Some(age) = c.max_age {
        out.extend_from_slice(format!("; max-age={}", age.as_secs()).as_bytes());
    }
    if c.httponly {
        out.extend_from_slice(b"; HttpOnly");
    }
    if c.secure {
        out.extend_from_slice(b"; Secure");
    }
    out.extend_from_slice(b"\r\n");
    if c.nocache {
        out.extend_from_slice(b"cache-control: private\r\n");
    }
}

/// The cookie to strip from requests (`indirect`), if any.
pub(crate) fn strip(be: &Backend) -> Option<&[u8]> {
    be.cookie
        .as_ref()
        .filter(|c| c.indirect)
        .map(|c| c.name.as_bytes())
}
