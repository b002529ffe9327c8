//! The HTTP/1.1 request head the exchange wrote for a server, as an HTTP/2 request.
//!
//! The exchange rewrote the head already (forwarding fields, header rules, persistence), so this
//! side only changes its form (RFC 9113 §8.3.1): the method and the target make `:method` and
//! `:path`, the authority (an absolute-form target's, else `Host`) makes `:authority`, the
//! scheme is the server connection's (`https` over TLS). Connection-specific fields are dropped
//! (§8.2.2): `connection` and what it names, `keep-alive`, `proxy-connection`,
//! `transfer-encoding`, `upgrade`; `te` is sent only as `te: trailers` (gRPC servers require
//! it). `content-length` stays: the `h2` crate checks the DATA against it.

use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderName, HeaderValue, Method, Request, Uri};
use tern_h1::{FieldKind, Framing, Limits, RequestHead, TargetForm};

/// What a head written by the exchange may hold: any client head within the frontend's limits
/// plus the fields tern adds. Generous: these bytes come from tern itself.
pub(super) const HEAD_LIMITS: Limits = Limits {
    max_head_size: 256 * 1024,
    max_headers: 1024,
    max_chunk_ext: 64 * 1024,
    max_trailer_size: 256 * 1024,
};

/// Why a head cannot be sent as an HTTP/2 request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum Untranslatable {
    #[error("a method HTTP/2 cannot carry")]
    Method,
    #[error("a request target HTTP/2 cannot carry")]
    Target,
    #[error("a field HTTP/2 cannot carry")]
    Field,
}

/// Where a request goes: the server connection's scheme, and the authority sent when the head
/// names none (an HTTP/1.0 request without `Host`): the server's address.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub tls: bool,
    pub addr: std::net::SocketAddr,
}

/// The HTTP/2 request for `head` (parsed from `buf`) to `target`.
pub(super) fn translate(
    head: &RequestHead,
    buf: &[u8],
    target: Target,
) -> Result<Request<()>, Untranslatable> {
    let method = Method::from_bytes(head.method_bytes(buf)).map_err(|_| Untranslatable::Method)?;
    let mut request = Request::new(());
    *request.method_mut() = method;
    *request.uri_mut() = uri(head, buf, target)?;
    let headers = request.headers_mut();
    headers.reserve(head.fields().len());
    for field in head.fields() {
        if field.is_hop_by_hop() || field.kind() == FieldKind::Host {
            continue;
        }
        let name = HeaderName::from_bytes(field.name(buf)).map_err(|_| Untranslatable::Field)?;
        let value = HeaderValue::from_bytes(field.value(buf)).map_err(|_| Untranslatable::Field)?;
        headers.append(name, value);
    }
    if head.te_trailers() {
        headers.insert(http::header::TE, HeaderValue::from_static("trailers"));
    }
    Ok(request)
}

/// `:scheme`, `:authority` and `:path`.
fn uri(head: &RequestHead, buf: &[u8], target: Target) -> Result<Uri, Untranslatable> {
    let scheme = if target.tls {
        Scheme::HTTPS
    } else {
        Scheme::HTTP
    };
    let path = match head.form() {
        TargetForm::Asterisk => PathAndQuery::from_static("*"),
        TargetForm::Authority => return Err(Untranslatable::Target),
        _ => match head.path().get(buf) {
            [] => PathAndQuery::from_static("/"),
            p => PathAndQuery::try_from(p).map_err(|_| Untranslatable::Target)?,
        },
    };
    let authority = match head.authority().map(|a| a.get(buf)) {
        Some(named) if !named.is_empty() => {
            Authority::try_from(named).map_err(|_| Untranslatable::Target)?
        }
        _ => Authority::try_from(target.addr.to_string().as_str())
            .map_err(|_| Untranslatable::Target)?,
    };
    Uri::builder()
        .scheme(scheme)
        .authority(authority)
        .path_and_query(path)
        .build()
        .map_err(|_| Untranslatable::Target)
}

/// Whether the request body follows the head (no END_STREAM on HEADERS).
pub(super) fn has_body(head: &RequestHead) -> bool {
    match head.framing() {
        Framing::None | Framing::Length(0) => false,
        Framing::Length(_) | Framing::Chunked => true,
    }
}

#[cfg(test)]
mod tests;
