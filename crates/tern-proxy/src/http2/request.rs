//! An HTTP/2 request as the HTTP/1.1 head the session parses (design note 0003).
//!
//! The `h2` crate has already checked the request against RFC 9113 §8.2-8.3 (pseudo-header
//! fields, lower-case names, no connection-specific fields, `te` only `trailers`, field values
//! without CR, LF or NUL), so every name and value can be written as a field line as it is.
//! What is left to translate:
//! - `:method` and `:path` make the request line (origin-form, or `*` for `OPTIONS`);
//! - `:authority` becomes `Host`, written first; a `host` field that names another authority
//!   is refused (§8.3.1), one that names the same is dropped;
//! - `cookie` fields, which HTTP/2 may split into crumbs, are joined into one with `; `
//!   (§8.2.3);
//! - `te: trailers` (the only `te` HTTP/2 allows) is kept: the HTTP/1.1 rewrite passes it on,
//!   and gRPC servers behind an HTTP/2 server connection need it;
//! - a request with a body and no `content-length` is sent chunked, its DATA frames becoming
//!   chunks and its trailers the trailer section;
//! - an extended CONNECT (a `:protocol`, RFC 8441) becomes a WebSocket upgrade request
//!   (`connect.rs`); a plain CONNECT is refused (501).
//!
//! The session then parses the head with `tern-h1` like any other, so an HTTP/2 request meets
//! every HTTP/1.1 check (size and count limits, duplicate or invalid fields) once more.

use http::header::{HeaderName, CONTENT_LENGTH, COOKIE, HOST};
use http::request::Parts;
use http::Method;

use super::connect::{self, Handshake};

/// How the request body goes to the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFraming {
    /// No body (the HEADERS frame ended the stream).
    Empty,
    /// `content-length` bytes, passed as they come.
    Length,
    /// No length known: DATA frames become chunks, trailers the trailer section.
    Chunked,
    /// A WebSocket (RFC 8441, `connect.rs`): no body in the request; once the server switched
    /// protocols, DATA frames are the tunnel's bytes as they are.
    Tunnel(Handshake),
}

/// Why a request cannot be translated; each is answered with the status named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("the host field names another authority than :authority (400)")]
    HostMismatch,
    #[error("no :path (400)")]
    NoPath,
    #[error("CONNECT is not supported (501)")]
    Connect,
    #[error("extended CONNECT for a protocol other than websocket (501)")]
    Protocol,
    #[error("no random bytes for the WebSocket key (500)")]
    NoRandom,
}

impl Refused {
    /// The status tern answers with.
    pub(crate) fn status(self) -> u16 {
        match self {
            Refused::HostMismatch | Refused::NoPath => 400,
            Refused::Connect | Refused::Protocol => 501,
            Refused::NoRandom => 500,
        }
    }
}

/// Writes the HTTP/1.1 head of the request into `out` (cleared first) and says how its body
/// follows. `ends_stream`: the HEADERS frame carried END_STREAM (no body). An extended CONNECT
/// (RFC 8441, a `:protocol`) is translated by `connect.rs`.
pub(crate) fn write_head(
    parts: &Parts,
    ends_stream: bool,
    out: &mut Vec<u8>,
) -> Result<BodyFraming, Refused> {
    if let Some(protocol) = parts.extensions.get::<h2::ext::Protocol>() {
        return connect::write_head(protocol, parts, out).map(BodyFraming::Tunnel);
    }
    if parts.method == Method::CONNECT {
        return Err(Refused::Connect);
    }
    let authority = start_head(parts.method.as_str(), parts, out)?;
    let has_length = write_fields(parts, authority, out, |_| false)?;
    let framing = if ends_stream {
        BodyFraming::Empty
    } else if has_length {
        BodyFraming::Length
    } else {
        line(out, b"transfer-encoding", b"chunked");
        BodyFraming::Chunked
    };
    out.extend_from_slice(b"\r\n");
    Ok(framing)
}

/// Clears `out` and writes the request line (`method`, the origin-form target) and `host`
/// from `:authority`; the authority, if any.
pub(super) fn start_head<'p>(
    method: &str,
    parts: &'p Parts,
    out: &mut Vec<u8>,
) -> Result<Option<&'p str>, Refused> {
    out.clear();
    let target = match parts.uri.path_and_query() {
        Some(pq) if !pq.as_str().is_empty() => pq.as_str(),
        _ => return Err(Refused::NoPath),
    };
    out.reserve(head_size(method, target, parts));
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let authority = parts.uri.authority().map(|a| a.as_str());
    if let Some(authority) = authority {
        line(out, b"host", authority.as_bytes());
    }
    Ok(authority)
}

/// Writes the request's fields but those `skip` names: a `host` that repeats `authority`
/// dropped (another refused), cookies joined, `te: trailers` kept. Whether a `content-length` was
/// written.
pub(super) fn write_fields(
    parts: &Parts,
    authority: Option<&str>,
    out: &mut Vec<u8>,
    skip: impl Fn(&HeaderName) -> bool,
) -> Result<bool, Refused> {
    let mut cookies: Option<Vec<u8>> = None;
    let mut has_length = false;
    for (name, value) in &parts.headers {
        if skip(name) {
            continue;
        } else if name == HOST {
            match authority {
                Some(a) if !value.as_bytes().eq_ignore_ascii_case(a.as_bytes()) => {
                    return Err(Refused::HostMismatch)
                }
                Some(_) => continue,
                None => {}
            }
        } else if name == COOKIE {
            let joined = cookies.get_or_insert_with(Vec::new);
            if !joined.is_empty() {
                joined.extend_from_slice(b"; ");
            }
            joined.extend_from_slice(value.as_bytes());
            continue;
        } else if name == CONTENT_LENGTH {
            has_length = true;
        }
        line(out, name.as_str().as_bytes(), value.as_bytes());
    }
    if let Some(joined) = cookies {
        line(out, b"cookie", &joined);
    }
    Ok(has_length)
}

/// The size of the head [`write_head`] writes, or a little more: reserved at once, where
/// growing line by line reallocated the head four or five times per stream.
fn head_size(method: &str, target: &str, parts: &Parts) -> usize {
    const REQUEST_LINE: usize = " HTTP/1.1\r\n".len() + 1;
    // `host`, or `transfer-encoding: chunked`, and the empty line, with room to spare.
    const EXTRA: usize = 64;
    let authority = parts.uri.authority().map_or(0, |a| a.as_str().len());
    let fields: usize = parts
        .headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    method.len() + target.len() + REQUEST_LINE + authority + fields + EXTRA
}

fn line(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests;
