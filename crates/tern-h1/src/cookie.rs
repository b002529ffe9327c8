//! Request cookies: finding one by name, writing a `Cookie` field without it or without the
//! server prefix tern put on it, and the [`CookieEdit`] a rewrite applies.
//!
//! Cookie persistence reads the load balancer's own cookie from the request and, in `indirect`
//! mode, removes it before the request reaches the server, leaving every other cookie as sent.
//! In prefix mode the cookie is the application's own, its value prefixed with `<server>~`
//! on the way to the client ([`crate::set_cookie`]); the prefix is removed again on the way
//! back, so the server finds the value it set.
//! A `Cookie` field is a `; `-separated list of `name=value` pairs (RFC 6265 §4.2.1); clients
//! may send several `Cookie` fields (HTTP/1.1 clients should not, but some do), so every one is
//! searched. Parsing is lenient the way servers are: pairs without `=` are kept as they are and
//! skipped when searching, whitespace around names and values is ignored, and a value may be
//! quoted.

use crate::fields::Field;
use crate::request::RequestHead;

/// Separates the server's value from the application's in prefix mode (HAProxy's `~`).
pub const PREFIX_DELIMITER: u8 = b'~';

/// What a rewrite does to the persistence cookie of one message (cookie persistence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieEdit<'a> {
    /// Requests: remove the cookie `name` from every `Cookie` field (insert mode, `indirect`).
    Strip(&'a [u8]),
    /// Requests: remove the `<server>~` prefix from the value of the cookie `name` (prefix mode).
    Unprefix(&'a [u8]),
    /// Responses: a `Set-Cookie` that sets `name` sets it to `value` instead (rewrite mode).
    Rewrite { name: &'a [u8], value: &'a [u8] },
    /// Responses: a `Set-Cookie` that sets `name` gets `value~` before its value (prefix mode).
    Prefix { name: &'a [u8], value: &'a [u8] },
    /// Responses: every `Set-Cookie` that sets `name` is removed (prefix mode with `indirect`,
    /// when the client already holds a cookie for the server).
    Drop(&'a [u8]),
}

/// The server part of a prefix-mode value: what comes before the first `~`, or the whole
/// value when there is none (HAProxy reads it so too).
pub fn prefix_server(value: &[u8]) -> &[u8] {
    match value.iter().position(|&b| b == PREFIX_DELIMITER) {
        Some(at) => &value[..at],
        None => value,
    }
}

/// Whether a field is a `Cookie` field.
pub(crate) fn is_cookie(f: &Field, buf: &[u8]) -> bool {
    f.name(buf).eq_ignore_ascii_case(b"cookie")
}

/// The `name=value` pairs of one `Cookie` value, as (whole pair, name, value), trimmed.
fn pairs(value: &[u8]) -> impl Iterator<Item = (&[u8], &[u8], Option<&[u8]>)> {
    value.split(|&b| b == b';').filter_map(|pair| {
        let pair = pair.trim_ascii();
        if pair.is_empty() {
            return None;
        }
        Some(match pair.iter().position(|&b| b == b'=') {
            Some(at) => {
                let name = pair[..at].trim_ascii();
                let value = pair[at + 1..].trim_ascii();
                let value = value
                    .strip_prefix(b"\"")
                    .and_then(|v| v.strip_suffix(b"\""))
                    .unwrap_or(value);
                (pair, name, Some(value))
            }
            None => (pair, pair, None),
        })
    })
}

/// The value of the first cookie called `name` (case-sensitive, as cookie names are) in any
/// `Cookie` field of the request.
pub fn find_cookie<'a>(head: &RequestHead, buf: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    head.fields()
        .iter()
        .filter(|f| is_cookie(f, buf))
        .find_map(|f| pairs(f.value(buf)).find_map(|(_, n, v)| if n == name { v } else { None }))
}

/// Writes the `Cookie` field `f` without the cookies called `name`; writes nothing when no
/// cookie is left. Returns whether anything was removed.
pub(crate) fn write_without(out: &mut Vec<u8>, buf: &[u8], f: &Field, name: &[u8]) -> bool {
    let value = f.value(buf);
    let mut kept = 0;
    let mut removed = false;
    let start = out.len();
    for (pair, n, v) in pairs(value) {
        if n == name && v.is_some() {
            removed = true;
            continue;
        }
        out.extend_from_slice(if kept == 0 { b"cookie: " } else { b"; " });
        out.extend_from_slice(pair);
        kept += 1;
    }
    if kept > 0 {
        out.extend_from_slice(b"\r\n");
    } else {
        out.truncate(start);
    }
    removed
}

/// Writes the `Cookie` field `f` with the `<server>~` prefix removed from the value of every
/// cookie called `name` (a quoted value keeps its quotes). Returns whether anything changed.
pub(crate) fn write_unprefixed(out: &mut Vec<u8>, buf: &[u8], f: &Field, name: &[u8]) -> bool {
    let (start, mut changed, mut kept) = (out.len(), false, 0);
    for (pair, n, v) in pairs(f.value(buf)) {
        out.extend_from_slice(if kept == 0 { b"cookie: " } else { b"; " });
        kept += 1;
        let delimiter = v.filter(|_| n == name).and_then(|v| {
            v.iter()
                .position(|&b| b == PREFIX_DELIMITER)
                .map(|at| (v, at))
        });
        match delimiter {
            Some((v, at)) => {
                // `v` is a piece of `pair`: keep what surrounds it (`name=`, quotes).
                let from = v.as_ptr() as usize - pair.as_ptr() as usize;
                out.extend_from_slice(&pair[..from]);
                out.extend_from_slice(&pair[from + at + 1..]);
                changed = true;
            }
            None => out.extend_from_slice(pair),
        }
    }
    if kept > 0 {
        out.extend_from_slice(b"\r\n");
    } else {
        out.truncate(start);
    }
    changed
}

#[cfg(test)]
mod tests;
