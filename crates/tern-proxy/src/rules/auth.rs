//! Basic authentication for `http_auth(L)` and `http_auth_group(L)`: the request's
//! credentials are checked *before* its rules run, because a check may have to wait for a
//! slow crypt(3) computation (tern-auth runs it off the event loop) while conditions are
//! evaluated synchronously.
//!
//! Only what a frontend can need is checked: the userlists its own rules and `use_backend`
//! conditions name, and those of the `http_request` rules of every backend it can route to
//! ([`Routing::auth_lists`]). A frontend naming none costs nothing per request; one that does
//! reads the `Authorization` field once, and a request without `Basic` credentials costs
//! nothing more. So a request that carries credentials is checked even when the rule that
//! reads the result would not run for it (a path that needs no login): successful checks are
//! cached, so that costs a microsecond after the first request.

use std::sync::Arc;

use tern_auth::{Authenticator, Credentials, Limits};
use tern_config::{Config, Fetch, Frontend, HttpRule, User, Userlist};
use tern_h1::{Field, RequestHead};

/// The authenticator of a configuration, if any rule reads `http_auth` or `http_auth_group`.
pub(crate) fn authenticator(cfg: &Config) -> Option<Arc<Authenticator>> {
    let reads = cfg.frontends.iter().any(|fe| {
        !lists_read(
            fe.use_backend.iter().map(|r| &r.condition),
            &fe.http_request,
        )
        .is_empty()
    }) || cfg
        .backends
        .iter()
        .any(|be| !lists_read(std::iter::empty(), &be.http_request).is_empty());
    reads.then(|| Arc::new(Authenticator::new(&cfg.userlists, Limits::for_machine())))
}

/// The userlists `fe`'s requests may be checked against: those its rules read, and those of
/// `backends` (the backends it can route to).
pub(crate) fn lists_of(cfg: &Config, fe: &Frontend, backends: &[usize]) -> Vec<usize> {
    let mut lists = lists_read(
        fe.use_backend.iter().map(|r| &r.condition),
        &fe.http_request,
    );
    for &b in backends {
        lists.extend(lists_read(
            std::iter::empty(),
            &cfg.backends[b].http_request,
        ));
    }
    lists.sort_unstable();
    lists.dedup();
    lists
}

fn lists_read<'c>(
    conditions: impl Iterator<Item = &'c tern_config::Condition>,
    rules: &'c [HttpRule],
) -> Vec<usize> {
    conditions
        .chain(rules.iter().map(|r| &r.condition))
        .flat_map(|c| c.fetches())
        .filter_map(|f| match f {
            Fetch::HttpAuth(l) | Fetch::HttpAuthGroup(l) => Some(l.index),
            _ => None,
        })
        .collect()
}

/// Checks the request's `Basic` credentials against each of `lists`; `users[l]` becomes the
/// index of the user of userlist `l` they are (`users` has one slot per userlist).
pub(crate) async fn check(
    auth: &Authenticator,
    lists: &[usize],
    head: &RequestHead,
    buf: &[u8],
    users: &mut Vec<Option<usize>>,
) {
    users.clear();
    users.resize(auth.lists().len(), None);
    let Some(creds) = credentials(head.fields(), buf) else {
        return;
    };
    for &list in lists {
        if let Some(slot) = users.get_mut(list) {
            *slot = auth.check(list, &creds).await;
        }
    }
}

/// The credentials of the first `Authorization` field, if it holds `Basic` ones.
fn credentials(fields: &[Field], buf: &[u8]) -> Option<Credentials> {
    let field = fields
        .iter()
        .find(|f| f.name(buf).eq_ignore_ascii_case(b"authorization"))?;
    Credentials::from_header(field.value(buf))
}

/// Who the request's credentials are, per userlist, for [`tern_config::Facts::auth_user`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AuthSeen<'a> {
    pub lists: &'a [Userlist],
    /// One slot per userlist: the user's index, or `None`.
    pub users: &'a [Option<usize>],
}

impl<'a> AuthSeen<'a> {
    pub(crate) fn user(&self, list: usize) -> Option<&'a User> {
        let user = (*self.users.get(list)?)?;
        self.lists.get(list)?.users.get(user)
    }
}

/// `WWW-Authenticate: Basic realm="R"` after the status line of the answer `out` holds from
/// `start` (validation keeps quotes and backslashes out of realms).
pub(crate) fn add_challenge(out: &mut Vec<u8>, start: usize, realm: &str) {
    let Some(end) = out[start..].windows(2).position(|w| w == b"\r\n") else {
        return;
    };
    let line = format!("www-authenticate: Basic realm=\"{realm}\"\r\n");
    let at = start + end + 2;
    out.splice(at..at, line.into_bytes());
}
