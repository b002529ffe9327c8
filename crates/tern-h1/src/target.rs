//! The request-target (RFC 9112 §3.2) and the Host value (RFC 9110 §7.2).
//!
//! The four forms are told apart by the method and the first byte: origin-form (`/path?q`),
//! absolute-form (`http://host/path`, what a client sends to a proxy), authority-form
//! (`host:port`, CONNECT only) and asterisk-form (`*`, OPTIONS only). A form the method cannot
//! use is refused rather than guessed at.
//!
//! Strictness, and why:
//! - only visible ASCII: httparse lets bytes above 0x7F through; a target is ASCII by grammar
//!   (RFC 3986) and servers decode anything else in different ways;
//! - no `#`: a fragment is never sent (RFC 9110 §7.1), and a target with one is read as two
//!   different paths by different servers (the path-ACL bypass fixed in HAProxy 2.8.5 and
//!   friends);
//! - userinfo (`user:pw@`) in an absolute-form target is stripped, not forwarded: the request is
//!   served as before (tern's behaviour under hyper) but credentials never reach the Host a
//!   server sees;
//! - the authority and the Host value must be `host[:port]` with a numeric port ≤ 65535.

use crate::error::H1Error;
use crate::span::{ByteSet, Method, Span};

/// reg-name and IPv4 characters (RFC 3986 §3.2.2: unreserved, pct-encoded, sub-delims).
static REG_NAME: ByteSet = ByteSet::alnum_and(b"-._~%!$&'()*+,;=");
/// Characters inside an IP literal's brackets (hex, `:`, `.`, IPvFuture's `v`, zone ids).
static IP_LITERAL: ByteSet = ByteSet::of(b"0123456789abcdefABCDEFvV:.%-_~");

/// Which of the four forms the request-target has (RFC 9112 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TargetForm {
    /// `/path?query`.
    #[default]
    Origin,
    /// `scheme://[userinfo@]authority[/path?query]`: the authority without userinfo, and the
    /// path and query (empty when the target has neither).
    Absolute {
        /// `host[:port]`, userinfo removed.
        authority: Span,
        /// From the first `/` or `?` after the authority to the end.
        path: Span,
    },
    /// `host:port` (CONNECT).
    Authority,
    /// `*` (OPTIONS).
    Asterisk,
}

/// Classifies and checks the target at `target` in `buf`.
pub(crate) fn parse_target(
    buf: &[u8],
    target: Span,
    method: Method,
) -> Result<TargetForm, H1Error> {
    let t = target.get(buf);
    if t.is_empty() || !t.iter().all(|b| (0x21..=0x7e).contains(b) && *b != b'#') {
        return Err(H1Error::InvalidTarget);
    }
    match (method, t[0]) {
        (Method::Connect, _) => {
            if t.contains(&b'@') || !is_host_port(t, true) {
                return Err(H1Error::InvalidTarget);
            }
            Ok(TargetForm::Authority)
        }
        (_, b'/') => Ok(TargetForm::Origin),
        (Method::Options, b'*') if t.len() == 1 => Ok(TargetForm::Asterisk),
        _ => absolute(t, target),
    }
}

/// `scheme "://" authority path-abempty [ "?" query ]`.
fn absolute(t: &[u8], target: Span) -> Result<TargetForm, H1Error> {
    let scheme_len = t
        .iter()
        .position(|b| *b == b':')
        .ok_or(H1Error::InvalidTarget)?;
    let scheme = &t[..scheme_len];
    let valid_scheme = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b));
    if !valid_scheme || !t[scheme_len..].starts_with(b"://") {
        return Err(H1Error::InvalidTarget);
    }
    let auth_start = scheme_len + 3;
    let auth_end = t[auth_start..]
        .iter()
        .position(|b| *b == b'/' || *b == b'?')
        .map_or(t.len(), |i| auth_start + i);
    let with_userinfo = &t[auth_start..auth_end];
    // userinfo ends at the last '@' of the authority (it may not contain '/', '?' or '#').
    let host_start = with_userinfo
        .iter()
        .rposition(|b| *b == b'@')
        .map_or(auth_start, |i| auth_start + i + 1);
    if !is_host_port(&t[host_start..auth_end], false) {
        return Err(H1Error::InvalidTarget);
    }
    Ok(TargetForm::Absolute {
        authority: target.sub(host_start, auth_end),
        path: target.sub(auth_end, t.len()),
    })
}

/// Whether a Host value is valid: empty (a target without authority) or `host[:port]`.
pub(crate) fn is_valid_host(value: &[u8]) -> bool {
    value.is_empty() || is_host_port(value, false)
}

/// `uri-host [ ":" port ]` with a port of 1-5 digits ≤ 65535 (required when `need_port`):
/// a reg-name or IPv4 address, or an IP literal in brackets.
fn is_host_port(v: &[u8], need_port: bool) -> bool {
    let (host, port) = if v.first() == Some(&b'[') {
        let Some(close) = v.iter().position(|b| *b == b']') else {
            return false;
        };
        let literal = &v[1..close];
        let ok = !literal.is_empty() && literal.iter().all(|b| IP_LITERAL.has(*b));
        if !ok {
            return false;
        }
        match &v[close + 1..] {
            [] => (&v[..=close], None),
            [b':', port @ ..] => (&v[..=close], Some(port)),
            _ => return false,
        }
    } else {
        match v.iter().rposition(|b| *b == b':') {
            Some(i) => (&v[..i], Some(&v[i + 1..])),
            None => (v, None),
        }
    };
    let host_ok = !host.is_empty() && (host[0] == b'[' || host.iter().all(|b| REG_NAME.has(*b)));
    let port_ok = match port {
        None => !need_port,
        Some(p) => {
            (1..=5).contains(&p.len())
                && p.iter().all(u8::is_ascii_digit)
                && p.iter().fold(0u32, |n, b| n * 10 + u32::from(b - b'0')) <= 65535
        }
    };
    host_ok && port_ok
}

#[cfg(test)]
mod tests;
