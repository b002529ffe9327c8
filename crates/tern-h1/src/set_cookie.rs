//! Response cookies: changing the persistence cookie a server sets itself (`Set-Cookie`).
//!
//! In HAProxy's rewrite and prefix modes the persistence cookie is the server's: tern does not
//! add one, it changes the value of the one the server sets, on its way to the client. A
//! `Set-Cookie` value is one `name=value` pair followed by attributes (RFC 6265 §4.1.1), so
//! only that first pair is looked at; an attribute that happens to be called like the cookie
//! is not a cookie. Everything around the value (attributes, quotes, the field name's case) is
//! copied as the server wrote it.

use std::ops::Range;

use crate::cookie::{CookieEdit, PREFIX_DELIMITER};
use crate::fields::Field;

/// Whether a field is a `Set-Cookie` field.
fn is_set_cookie(f: &Field, buf: &[u8]) -> bool {
    f.name(buf).eq_ignore_ascii_case(b"set-cookie")
}

/// Where the value of the cookie a `Set-Cookie` value sets lies (inside its quotes, if
/// quoted), when that cookie is called `name`.
fn value_of(value: &[u8], name: &[u8]) -> Option<Range<usize>> {
    let end = value.iter().position(|&b| b == b';').unwrap_or(value.len());
    let eq = value[..end].iter().position(|&b| b == b'=')?;
    if value[..eq].trim_ascii() != name {
        return None;
    }
    let lead = value[eq + 1..end].len() - value[eq + 1..end].trim_ascii_start().len();
    let (mut start, mut stop) = (eq + 1 + lead, end);
    stop -= value[start..stop].len() - value[start..stop].trim_ascii_end().len();
    if stop - start >= 2 && value[start] == b'"' && value[stop - 1] == b'"' {
        (start, stop) = (start + 1, stop - 1);
    }
    Some(start..stop)
}

/// The response-side cookie name an edit acts on.
fn response_name<'a>(edit: &CookieEdit<'a>) -> Option<&'a [u8]> {
    match *edit {
        CookieEdit::Rewrite { name, .. } | CookieEdit::Prefix { name, .. } => Some(name),
        CookieEdit::Drop(name) => Some(name),
        CookieEdit::Strip(_) | CookieEdit::Unprefix(_) => None,
    }
}

/// Whether `edit` changes the field `f` of a response.
pub(crate) fn applies(edit: &CookieEdit<'_>, f: &Field, buf: &[u8]) -> bool {
    response_name(edit)
        .is_some_and(|name| is_set_cookie(f, buf) && value_of(f.value(buf), name).is_some())
}

/// Writes the `Set-Cookie` field `f` changed by `edit`, or nothing when the edit drops it. A
/// field the edit does not apply to is written unchanged.
pub(crate) fn write_edited(out: &mut Vec<u8>, buf: &[u8], f: &Field, edit: &CookieEdit<'_>) {
    let value = f.value(buf);
    let range = response_name(edit).and_then(|name| value_of(value, name));
    let Some(range) = range else {
        line(out, f.name(buf), &[value]);
        return;
    };
    let (before, old, after) = (
        &value[..range.start],
        &value[range.clone()],
        &value[range.end..],
    );
    match *edit {
        CookieEdit::Rewrite { value: server, .. } => {
            line(out, f.name(buf), &[before, server, after])
        }
        CookieEdit::Prefix { value: server, .. } => line(
            out,
            f.name(buf),
            &[before, server, &[PREFIX_DELIMITER], old, after],
        ),
        CookieEdit::Drop(_) | CookieEdit::Strip(_) | CookieEdit::Unprefix(_) => {}
    }
}

fn line(out: &mut Vec<u8>, name: &[u8], value: &[&[u8]]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    for piece in value {
        out.extend_from_slice(piece);
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests;
