//! Header fields: classification, the facts the proxy derives from them, and the recycled
//! storage httparse parses into.
//!
//! Each field is classified once ([`FieldKind`]) by its name, so the rewrite never compares a
//! name again. The facts (framing, `Connection` options, `Expect`, `TE`, Host) are gathered in
//! one pass over the fields and judged after it, so that the verdict on a message does not
//! depend on the order of its fields.
//!
//! httparse writes into a caller's slice of `Header<'buf>`, borrowed from the very buffer being
//! parsed, so the slice cannot live in a struct across messages. Allocating it per message
//! would cost an allocation per request; a stack array would fix the limit at compile time. The
//! heads keep a `Vec<Header<'static>>` that is always empty and lend its allocation to each
//! parse: collecting an empty `vec::IntoIter` into a vector of a type with the same layout
//! reuses the allocation (std's in-place collection), with no `unsafe`. A unit test checks that
//! the allocation really survives.

use httparse::Header;

use crate::error::H1Error;
use crate::span::{is_ows, is_tchar, Span};

/// Most tokens a Connection header may name besides `close`, `keep-alive` and `upgrade`. Each
/// named option costs a pass over the fields, so the count is bounded; real clients name one or
/// two.
pub(crate) const MAX_CONNECTION_OPTIONS: usize = 32;

/// What a field is to the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldKind {
    Host,
    ContentLength,
    TransferEncoding,
    Connection,
    KeepAlive,
    ProxyConnection,
    Te,
    Upgrade,
    Expect,
    XForwardedFor,
    XForwardedProto,
    /// Any other field: end-to-end unless `Connection` names it.
    Other,
}

impl FieldKind {
    /// Classifies a field name (case-insensitive, RFC 9110 §5.1).
    pub fn of(name: &[u8]) -> FieldKind {
        let is = |known: &[u8]| name.eq_ignore_ascii_case(known);
        match name.len() {
            2 if is(b"te") => FieldKind::Te,
            4 if is(b"host") => FieldKind::Host,
            6 if is(b"expect") => FieldKind::Expect,
            7 if is(b"upgrade") => FieldKind::Upgrade,
            10 if is(b"connection") => FieldKind::Connection,
            10 if is(b"keep-alive") => FieldKind::KeepAlive,
            14 if is(b"content-length") => FieldKind::ContentLength,
            15 if is(b"x-forwarded-for") => FieldKind::XForwardedFor,
            16 if is(b"proxy-connection") => FieldKind::ProxyConnection,
            17 if is(b"transfer-encoding") => FieldKind::TransferEncoding,
            17 if is(b"x-forwarded-proto") => FieldKind::XForwardedProto,
            _ => FieldKind::Other,
        }
    }
}

/// One field line: where its name and (trimmed) value are, and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub(crate) name: Span,
    pub(crate) value: Span,
    pub(crate) kind: FieldKind,
    pub(crate) named_by_connection: bool,
}

impl Field {
    /// The name as received.
    pub fn name(self, buf: &[u8]) -> &[u8] {
        self.name.get(buf)
    }

    /// The value without surrounding whitespace.
    pub fn value(self, buf: &[u8]) -> &[u8] {
        self.value.get(buf)
    }

    /// Where the name is.
    pub fn name_span(self) -> Span {
        self.name
    }

    /// Where the value is.
    pub fn value_span(self) -> Span {
        self.value
    }

    /// The classification.
    pub fn kind(self) -> FieldKind {
        self.kind
    }

    /// Whether the field stops at this hop (RFC 9110 §7.6.1): a connection-management field,
    /// or one the `Connection` header names.
    pub fn is_hop_by_hop(self) -> bool {
        self.named_by_connection
            || matches!(
                self.kind,
                FieldKind::Connection
                    | FieldKind::KeepAlive
                    | FieldKind::ProxyConnection
                    | FieldKind::Te
                    | FieldKind::TransferEncoding
                    | FieldKind::Upgrade
            )
    }
}

/// Lends the allocation of an (always empty) `store` as storage for one parse.
pub(crate) fn lend<'b>(store: &mut Vec<Header<'static>>, n: usize) -> Vec<Header<'b>> {
    let mut v: Vec<Header<'b>> = std::mem::take(store)
        .into_iter()
        .map(|_| httparse::EMPTY_HEADER)
        .collect();
    v.clear();
    v.reserve(n);
    v
}

/// Takes the allocation back after the parse.
pub(crate) fn give_back(mut v: Vec<Header<'_>>) -> Vec<Header<'static>> {
    v.clear();
    v.into_iter().map(|_| httparse::EMPTY_HEADER).collect()
}

/// The elements of a comma-separated list value (RFC 9110 §5.6.1), without surrounding
/// whitespace; empty elements are kept (callers decide whether they matter).
pub(crate) fn elements(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|b| *b == b',').map(trim_ows)
}

/// `v` without leading and trailing spaces and tabs (RFC 9110 §5.6.3, OWS).
pub(crate) fn trim_ows(mut v: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = v {
        if !is_ows(*first) {
            break;
        }
        v = rest;
    }
    while let [rest @ .., last] = v {
        if !is_ows(*last) {
            break;
        }
        v = rest;
    }
    v
}

/// What the fields of a head say, before the head's own rules judge it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Facts {
    pub content_length: Option<u64>,
    pub content_length_invalid: bool,
    /// At least one Transfer-Encoding field line.
    pub te_present: bool,
    pub te_foreign: bool,
    pub te_chunked: u32,
    pub host: Option<Span>,
    pub host_count: u32,
    pub close: bool,
    pub keep_alive: bool,
    pub upgrade_option: bool,
    pub upgrade: bool,
    pub expect_continue: bool,
    pub te_trailers: bool,
}

impl Facts {
    /// The framing fields, judged (RFC 9112 §6.1-6.3): foreign codings first (501 / 502), then
    /// a Transfer-Encoding that cannot frame, then Content-Length.
    pub(crate) fn check_framing(&self) -> Result<(), H1Error> {
        if self.te_foreign {
            return Err(H1Error::UnsupportedTransferCoding);
        }
        if self.te_present && self.te_chunked != 1 {
            return Err(H1Error::InvalidTransferEncoding);
        }
        if self.content_length_invalid {
            return Err(H1Error::InvalidContentLength);
        }
        Ok(())
    }
}

/// Records httparse's fields as spans of `base` into `fields`, gathers their facts and marks
/// the fields `Connection` names, in one pass. `options` is scratch space for the named
/// options.
pub(crate) fn read(
    base: &[u8],
    headers: &[Header<'_>],
    fields: &mut Vec<Field>,
    options: &mut Vec<Span>,
) -> Result<Facts, H1Error> {
    let mut f = Facts::default();
    fields.clear();
    options.clear();
    for h in headers {
        let name = h.name.as_bytes();
        let value = trim_ows(h.value);
        let kind = FieldKind::of(name);
        let field = Field {
            name: Span::of(base, name),
            value: Span::of(base, value),
            kind,
            named_by_connection: false,
        };
        fields.push(field);
        match kind {
            FieldKind::Host => {
                f.host_count += 1;
                f.host.get_or_insert(field.value);
            }
            FieldKind::ContentLength => content_length(value, &mut f),
            FieldKind::TransferEncoding => transfer_encoding(value, &mut f),
            FieldKind::Connection => connection(base, value, &mut f, options)?,
            FieldKind::Upgrade => f.upgrade = true,
            FieldKind::Expect => {
                f.expect_continue |=
                    elements(value).any(|e| e.eq_ignore_ascii_case(b"100-continue"));
            }
            FieldKind::Te => {
                f.te_trailers |= elements(value).any(|e| {
                    let token = e.split(|b| *b == b';').next().unwrap_or_default();
                    trim_ows(token).eq_ignore_ascii_case(b"trailers")
                });
            }
            FieldKind::Other if looks_like_framing(name) => {
                return Err(H1Error::Malformed("field name like a framing field"));
            }
            _ => {}
        }
    }
    if !options.is_empty() {
        for field in fields.iter_mut().filter(|f| f.kind == FieldKind::Other) {
            let name = field.name.get(base);
            field.named_by_connection = options
                .iter()
                .any(|o| o.get(base).eq_ignore_ascii_case(name));
        }
    }
    Ok(f)
}

/// `Content_Length` and `Transfer_Encoding`: servers that read `_` as `-` (CGI-style
/// environments do) would frame the body by a field tern ignored, so such names are refused.
fn looks_like_framing(name: &[u8]) -> bool {
    let like = |known: &[u8]| {
        name.len() == known.len()
            && name.contains(&b'_')
            && name
                .iter()
                .zip(known)
                .all(|(a, k)| a.to_ascii_lowercase() == *k || (*a == b'_' && *k == b'-'))
    };
    like(b"content-length") || like(b"transfer-encoding")
}

/// Content-Length = 1*DIGIT (RFC 9110 §8.6); a list of identical values counts as one, any
/// other list, sign, space or overflow is invalid.
fn content_length(value: &[u8], f: &mut Facts) {
    for digits in elements(value) {
        let parsed = (!digits.is_empty()).then_some(digits).and_then(|d| {
            d.iter().try_fold(0u64, |n, b| {
                let digit = b.is_ascii_digit().then(|| u64::from(b - b'0'))?;
                n.checked_mul(10)?.checked_add(digit)
            })
        });
        match (parsed, f.content_length) {
            (None, _) => f.content_length_invalid = true,
            (Some(n), Some(seen)) if n != seen => f.content_length_invalid = true,
            (Some(n), _) => f.content_length = Some(n),
        }
    }
}

/// Transfer-Encoding: tern passes on only `chunked`, once, as the final coding.
fn transfer_encoding(value: &[u8], f: &mut Facts) {
    f.te_present = true;
    for coding in elements(value) {
        if coding.is_empty() {
            continue;
        }
        if coding.eq_ignore_ascii_case(b"chunked") {
            f.te_chunked += 1;
        } else {
            f.te_foreign = true;
        }
    }
}

/// Connection options (RFC 9112 §9.6, RFC 9110 §7.6.1).
fn connection(
    base: &[u8],
    value: &[u8],
    f: &mut Facts,
    options: &mut Vec<Span>,
) -> Result<(), H1Error> {
    for token in elements(value) {
        if token.eq_ignore_ascii_case(b"close") {
            f.close = true;
        } else if token.eq_ignore_ascii_case(b"keep-alive") {
            f.keep_alive = true;
        } else if token.eq_ignore_ascii_case(b"upgrade") {
            f.upgrade_option = true;
        } else if !token.is_empty() && token.iter().all(|b| is_tchar(*b)) {
            if options.len() == MAX_CONNECTION_OPTIONS {
                return Err(H1Error::TooManyConnectionOptions);
            }
            options.push(Span::of(base, token));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
