//! Header rewriting between client and server.
//!
//! tern forwards end-to-end headers untouched and in order (including `Trailer`), removes
//! hop-by-hop headers (RFC 9110 §7.6.1: those named in `Connection` plus the classic list; `TE`
//! is reduced to `trailers` when the client sent that), and adds `X-Forwarded-For` /
//! `X-Forwarded-Proto` when the frontend asks for them. Message framing (Content-Length versus
//! chunked) is hyper's job on each side, so `Transfer-Encoding` never crosses the proxy as is.
//! `Expect: 100-continue` is answered by tern itself (hyper sends the 100 when the body is first
//! read, which happens once a server connection is ready), so it is not forwarded either.

use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{request, uri::Uri, Version};

/// Hop-by-hop headers that never cross the proxy.
const HOP_BY_HOP: [HeaderName; 4] = [
    header::CONNECTION,
    header::TE,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

static KEEP_ALIVE: HeaderName = HeaderName::from_static("keep-alive");
static PROXY_CONNECTION: HeaderName = HeaderName::from_static("proxy-connection");
static X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
static X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");

/// What the frontend adds to forwarded requests.
#[derive(Debug, Clone)]
pub(crate) struct Forwarding {
    /// The client address, formatted once per connection; `None` when not added.
    pub forwarded_for: Option<HeaderValue>,
    /// `https` or `http`; `None` when not added.
    pub forwarded_proto: Option<HeaderValue>,
}

/// Removes hop-by-hop headers, including any named in `Connection`.
pub(crate) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    if headers.contains_key(header::CONNECTION) {
        let named: Vec<HeaderName> = headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|t| HeaderName::from_bytes(t.trim().as_bytes()).ok())
            .collect();
        for name in named {
            headers.remove(name);
        }
    }
    for name in &HOP_BY_HOP {
        headers.remove(name);
    }
    headers.remove(&KEEP_ALIVE);
    headers.remove(&PROXY_CONNECTION);
}

/// Rewrites a client request head into the one sent to the server.
pub(crate) fn prepare_request(parts: &mut request::Parts, fwd: &Forwarding) {
    let trailers = accepts_trailers(&parts.headers);
    strip_hop_by_hop(&mut parts.headers);
    if trailers {
        // TE is hop-by-hop, but "trailers" is about the whole chain: without it the server (and
        // hyper) would drop response trailers that the client asked for.
        parts
            .headers
            .insert(header::TE, HeaderValue::from_static("trailers"));
    }
    parts.headers.remove(header::EXPECT);
    to_origin_form(parts);
    parts.version = Version::HTTP_11;
    if let Some(client) = &fwd.forwarded_for {
        append_forwarded_for(&mut parts.headers, client);
    }
    if let Some(proto) = &fwd.forwarded_proto {
        parts
            .headers
            .insert(X_FORWARDED_PROTO.clone(), proto.clone());
    }
}

/// Rewrites a server response head into the one sent to the client.
pub(crate) fn prepare_response(headers: &mut HeaderMap) {
    strip_hop_by_hop(headers);
}

/// Whether a message uses a transfer coding other than `chunked` (e.g. `gzip, chunked`). hyper
/// decodes only `chunked`, and tern re-frames every message, so another coding would silently
/// reach the other side undeclared: such requests get 501 (RFC 9112 §6.1) and such responses
/// 502.
pub(crate) fn has_foreign_transfer_coding(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .any(|v| match v.to_str() {
            Ok(v) => v
                .split(',')
                .map(str::trim)
                .any(|c| !c.is_empty() && !c.eq_ignore_ascii_case("chunked")),
            Err(_) => true,
        })
}

/// Whether the client's `TE` header lists `trailers`.
fn accepts_trailers(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::TE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            t.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("trailers"))
        })
}

/// An absolute-form target (`GET http://host/path`) becomes origin-form with its authority as
/// the Host header, as RFC 9112 §3.2.2 requires of a recipient.
fn to_origin_form(parts: &mut request::Parts) {
    let Some(authority) = parts.uri.authority().cloned() else {
        return;
    };
    // Host is host[:port]; userinfo (`user:pw@`) must never leak into it.
    let host = match authority.port_u16() {
        Some(port) => format!("{}:{port}", authority.host()),
        None => authority.host().to_owned(),
    };
    if let Ok(host) = HeaderValue::from_str(&host) {
        parts.headers.insert(header::HOST, host);
    }
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |pq| pq.as_str())
        .to_owned();
    if let Ok(uri) = path.parse::<Uri>() {
        parts.uri = uri;
    }
}

/// Appends the client to the last `X-Forwarded-For` value, as nginx's
/// `$proxy_add_x_forwarded_for` does, so the chain of proxies stays in one list.
fn append_forwarded_for(headers: &mut HeaderMap, client: &HeaderValue) {
    let combined = match headers.get(&X_FORWARDED_FOR) {
        None => None,
        Some(prev) => {
            let mut v = Vec::with_capacity(prev.len() + 2 + client.len());
            v.extend_from_slice(prev.as_bytes());
            v.extend_from_slice(b", ");
            v.extend_from_slice(client.as_bytes());
            HeaderValue::from_bytes(&v).ok()
        }
    };
    let value = combined.unwrap_or_else(|| client.clone());
    headers.insert(X_FORWARDED_FOR.clone(), value);
}

#[cfg(test)]
mod tests;
