//! A redirect rule's answer (HAProxy's `http_apply_redirect_rule`): the `Location` built
//! from the rule and the request, the `Cache-Control` and `Set-Cookie` lines HAProxy adds.
//!
//! The lines go into the request's [`HeaderEdits`] (cleared first: the request is not
//! forwarded, so the edits of earlier rules are moot), whose buffer is kept across requests:
//! a redirect allocates nothing once warm. The session writes them after the status line
//! ([`tern_h1::local::write_redirect`]).

use tern_config::{Redirect, RedirectTo};
use tern_h1::HeaderEdits;

use super::facts::Samples;
use super::rewrite::format;

/// Fills `edits` with the lines of `rule`'s answer to the request of `facts`.
pub(crate) fn answer<F: Samples>(rule: &Redirect, facts: &F, edits: &mut HeaderEdits) {
    edits.clear();
    {
        let mut location = edits.add(b"location");
        let start = location.raw().len();
        match &rule.to {
            RedirectTo::Location(value) => format(value, facts, &mut location),
            RedirectTo::Prefix(value) => {
                format(value, facts, &mut location);
                // A prefix of exactly `/` adds nothing: a redirect to the same URI.
                if &location.raw()[start..] == b"/" {
                    location.raw().truncate(start);
                }
                path(rule, facts.target(), location.raw());
            }
            RedirectTo::Scheme(value) => {
                format(value, facts, &mut location);
                location.push(b"://");
                if let Some(host) = facts.first_field("host") {
                    location.push(host);
                }
                path(rule, facts.target(), location.raw());
            }
        }
        let out = location.raw();
        if rule.append_slash && out.len() > start && out.last() != Some(&b'/') {
            out.push(b'/');
        }
    }
    if matches!(rule.code, 302 | 303 | 307) {
        edits.add(b"cache-control").push(b"no-cache");
    }
    if let Some(cookie) = &rule.cookie {
        edits.add(b"set-cookie").push(cookie.as_bytes());
    }
}

/// Appends the request's path and query (only the path with `drop_query`).
fn path(rule: &Redirect, target: &[u8], out: &mut Vec<u8>) {
    let end = if rule.drop_query {
        target
            .iter()
            .position(|&b| b == b'?')
            .unwrap_or(target.len())
    } else {
        target.len()
    };
    out.extend(
        target[..end]
            .iter()
            .filter(|b| !matches!(b, b'\r' | b'\n' | 0)),
    );
}
