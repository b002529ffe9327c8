//! Persistence: sending a client back to the server it used before.
//!
//! Two mechanisms, both per backend and both optional:
//! - **Cookie**, in one of HAProxy's three modes, honoured on later requests — on this
//!   connection or any other — while the server is up:
//!   - *insert* (`cookie NAME insert`): tern sets a cookie naming the server on a response when
//!     the client did not already present a valid one for that server. `indirect` strips it
//!     from requests so the server never sees it; `nocache` marks the response that sets it
//!     `Cache-Control: private`; `postonly` sets it only on responses to POST.
//!   - *rewrite* (`cookie NAME rewrite`): the server sets the cookie when it sees fit; tern
//!     replaces the value with the server's cookie value on the way out. Requests pass as sent.
//!   - *prefix* (`cookie NAME prefix`): the cookie is the application's (a session id); tern
//!     puts `<server value>~` before its value on the way out, routes by that prefix and
//!     removes it on the way in, so the server finds the value it set. With `indirect`, a
//!     server's update of the cookie is dropped when the client already came with a cookie for
//!     that server (HAProxy's behaviour, which it advises against).
//! - **Stickiness on the source address**: a shared table remembers which server each client
//!   address went to, with expiry and a size limit ([`tern_balance::StickTable`]).
//!
//! A cookie wins over the table. Persistence never sends traffic to a server that is down: the
//! request is then balanced normally (and gets a new cookie). A drained server (weight 0) still
//! takes its persistent clients, which is what draining is for.

use std::net::IpAddr;

use tern_balance::ServerId;
use tern_config::{Backend, CookieMode, CookiePersistence};
use tern_h1::{find_cookie, prefix_server, CookieEdit, Method, RequestHead};

use crate::exchange::servers::{self, BackendState};

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
    let mut value = find_cookie(head, buf, c.name.as_bytes())?;
    if c.mode == CookieMode::Prefix {
        value = prefix_server(value);
    }
    c.values.iter().position(|v| v.as_bytes() == value)
}

/// Remembers the server a request went to, in the stickiness table.
pub(crate) fn remember(state: &BackendState, client: IpAddr, server: ServerId) {
    if state.sticky() {
        state.stick(client, server, servers::now());
    }
}

/// What cookie persistence adds to or changes in one response; kept on the client session and
/// refilled for each request, so its buffers are reused.
#[derive(Debug, Default)]
pub(crate) struct Reply {
    /// Field lines added to the head (insert mode: the cookie, `Cache-Control: private`).
    pub fields: Vec<u8>,
    /// The change to the server's own `Set-Cookie` (rewrite and prefix modes).
    set_cookie: Option<SetCookie>,
    /// The cookie's name and the server's cookie value, for `set_cookie`.
    name: Vec<u8>,
    value: Vec<u8>,
}

/// How a server's `Set-Cookie` of the persistence cookie changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetCookie {
    Rewrite,
    Prefix,
    Drop,
}

impl Reply {
    /// The edit for the response's `Set-Cookie` fields, if any.
    pub(crate) fn cookie_edit(&self) -> Option<CookieEdit<'_>> {
        let (name, value) = (self.name.as_slice(), self.value.as_slice());
        Some(match self.set_cookie? {
            SetCookie::Rewrite => CookieEdit::Rewrite { name, value },
            SetCookie::Prefix => CookieEdit::Prefix { name, value },
            SetCookie::Drop => CookieEdit::Drop(name),
        })
    }

    fn clear(&mut self) {
        self.fields.clear();
        self.set_cookie = None;
    }

    fn edit(&mut self, how: SetCookie, c: &CookiePersistence, value: &str) {
        self.set_cookie = Some(how);
        self.name.clear();
        self.name.extend_from_slice(c.name.as_bytes());
        self.value.clear();
        self.value.extend_from_slice(value.as_bytes());
    }
}

/// Fills `out` with what persistence does to the response `server` gives: in insert mode the
/// fields that set the cookie, when the client needs it (it did not present a cookie naming
/// that server and, with `postonly`, the request is a POST); in the other modes the change to
/// the server's own cookie.
pub(crate) fn response_fields(
    be: &Backend,
    server: ServerId,
    persisted: &Persisted,
    method: Method,
    out: &mut Reply,
) {
    out.clear();
    let Some(c) = &be.cookie else {
        return;
    };
    let Some(value) = c.values.get(server) else {
        return;
    };
    let direct = persisted.cookie == Some(server);
    match c.mode {
        CookieMode::Insert => {}
        CookieMode::Rewrite => return out.edit(SetCookie::Rewrite, c, value),
        CookieMode::Prefix if c.indirect && direct => return out.edit(SetCookie::Drop, c, value),
        CookieMode::Prefix => return out.edit(SetCookie::Prefix, c, value),
    }
    if direct || (c.postonly && method != Method::Post) {
        return;
    }
    let out = &mut out.fields;
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

/// What persistence changes in requests' `Cookie` fields: insert mode with `indirect` strips
/// the cookie, prefix mode removes the server part of its value.
pub(crate) fn request_edit(be: &Backend) -> Option<CookieEdit<'_>> {
    let c = be.cookie.as_ref()?;
    match c.mode {
        CookieMode::Insert if c.indirect => Some(CookieEdit::Strip(c.name.as_bytes())),
        CookieMode::Prefix => Some(CookieEdit::Unprefix(c.name.as_bytes())),
        CookieMode::Insert | CookieMode::Rewrite => None,
    }
}

#[cfg(test)]
mod tests;
