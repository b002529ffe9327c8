//! Whether a response is worth compressing, and the head changes when it is.
//!
//! HAProxy's rules (its configuration manual, `compression`), in its order: an HTTP/1.1
//! response; status 200, 201, 202 or 203; a body framed by `Content-Length` or chunked (a body
//! delimited by the close is not compressed); no `Content-Encoding` (the server compressed it,
//! or chose identity on purpose); no `Cache-Control: no-transform` (RFC 9111 §5.2.2.6); at
//! most one ETag, and a valid one; a `Content-Type` that is not `multipart/*` and, when `types`
//! is set, starts with one of them (no `Content-Type` then means no compression). tern adds:
//! no `Content-Range` (a part of a representation, whose offsets a coding would break), and a
//! `Content-Length` of at least `min_size`. HEAD and HTTP/1.0 requests were left out when
//! the request was negotiated, and a response to HEAD has no body anyway.

use tern_config::Coding;
use tern_h1::{HeaderEdits, ResponseBody, ResponseHead, Version};

use super::Offer;

/// Whether the response `head` (parsed from `buf`) is to be compressed as `offer` says.
pub(crate) fn worth_compressing(offer: &Offer<'_>, head: &ResponseHead, buf: &[u8]) -> bool {
    let config = offer.config;
    if head.version() != Version::Http11 || !(200..=203).contains(&head.status()) {
        return false;
    }
    match head.body() {
        ResponseBody::Length(n) if n >= config.min_size.max(1) => {}
        ResponseBody::Chunked => {}
        _ => return false,
    }
    let mut etags = 0;
    let mut content_type = None;
    for f in head.fields() {
        let (name, value) = (f.name(buf), f.value(buf));
        let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        let encoded = is("content-encoding") || is("content-range");
        if encoded || (is("cache-control") && has_word(value, b"no-transform")) {
            return false;
        }
        if is("etag") {
            etags += 1;
            if etags > 1 || !valid_etag(value) {
                return false;
            }
        } else if is("content-type") && content_type.is_none() {
            content_type = Some(value);
        }
    }
    match content_type {
        Some(t) if starts_with_ignore_case(t, b"multipart") => false,
        Some(t) => {
            config.types.is_empty()
                || config
                    .types
                    .iter()
                    .any(|listed| starts_with_ignore_case(t, listed.as_bytes()))
        }
        None => config.types.is_empty(),
    }
}

/// The head changes of a compressed response, added to the response's `edits` (which the
/// rules may have filled): `Content-Encoding`, `Vary: Accept-Encoding` unless the server's
/// `Vary` already covers it, and a strong ETag made weak (the bytes differ from the
/// identity representation's, RFC 9110 §8.8.3), as HAProxy does.
pub(crate) fn edit_head(coding: Coding, head: &ResponseHead, buf: &[u8], edits: &mut HeaderEdits) {
    edits
        .add(b"content-encoding")
        .push(coding.token().as_bytes());
    let mut varies = false;
    let mut strong_etag = None;
    for f in head.fields() {
        let (name, value) = (f.name(buf), f.value(buf));
        if name.eq_ignore_ascii_case(b"vary") {
            varies |= has_word(value, b"accept-encoding") || value.trim_ascii() == b"*";
        } else if name.eq_ignore_ascii_case(b"etag") && value.starts_with(b"\"") {
            strong_etag = Some(value);
        }
    }
    if !varies && !edits.deletes(b"vary") {
        edits.add(b"vary").push(b"Accept-Encoding");
    }
    if let Some(tag) = strong_etag.filter(|_| !edits.deletes(b"etag")) {
        let mut value = edits.set(b"etag");
        value.push(b"W/");
        value.push(tag);
    }
}

/// Whether the comma-separated list `value` has `word` as an element (ignoring case and
/// parameters such as `max-age=0`'s value).
fn has_word(value: &[u8], word: &[u8]) -> bool {
    value
        .split(|b| *b == b',')
        .any(|e| e.trim_ascii().eq_ignore_ascii_case(word))
}

/// `entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE` (RFC 9110 §8.8.3).
fn valid_etag(value: &[u8]) -> bool {
    let tag = value.trim_ascii();
    let tag = tag.strip_prefix(b"W/").unwrap_or(tag);
    tag.len() >= 2
        && tag.first() == Some(&b'"')
        && tag.last() == Some(&b'"')
        && !tag[1..tag.len() - 1].contains(&b'"')
}

fn starts_with_ignore_case(value: &[u8], prefix: &[u8]) -> bool {
    value.len() >= prefix.len() && value[..prefix.len()].eq_ignore_ascii_case(prefix)
}
