//! Request cookies: finding one by name and writing a `Cookie` field without it.
//!
//! Cookie persistence reads the load balancer's own cookie from the request and, in `indirect`
//! mode, removes it before the request reaches the server, leaving every other cookie as sent.
//! A `Cookie` field is a `; `-separated list of `name=value` pairs (RFC 6265 §4.2.1); clients
//! may send several `Cookie` fields (HTTP/1.1 clients should not, but some do), so every one is
//! searched. Parsing is lenient the way servers are: pairs without `=` are kept as they are and
//! skipped when searching, whitespace around names and values is ignored, and a value may be
//! quoted.

use crate::fields::Field;
use crate::request::RequestHead;

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

#[cfg(test)]
mod tests;
