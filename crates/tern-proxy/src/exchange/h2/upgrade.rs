//! An upgrade request (a WebSocket opening) to an HTTP/2 server, as RFC 8441's extended
//! CONNECT, and the server's acceptance as the `101` the relay expects; HAProxy (2.4+) does
//! the same for its `proto h2` servers.
//!
//! HTTP/2 has no `101` and no `Upgrade` field (RFC 9113 §8.6), so the exchange's HTTP/1.1
//! upgrade request changes form on the stream, as a stream from an HTTP/2 client changes it the
//! other way (`http2/connect.rs`):
//!
//! | the exchange's HTTP/1.1 request and response | on the server's stream |
//! |---|---|
//! | `GET <path>`, `upgrade: websocket`, `connection: upgrade` | `:method CONNECT`, `:protocol websocket`, `:scheme`, `:path`, `:authority` (RFC 8441 §4) |
//! | `sec-websocket-key` | not sent: HTTP/2 has no use for it (§5) |
//! | `sec-websocket-version`, `-protocol`, `-extensions`, `origin`, ... | passed as they are |
//! | `101 Switching Protocols`, `upgrade`, `connection: upgrade`, `sec-websocket-accept` computed from the request's key | a 2xx answer (RFC 9110 §9.3.6: the tunnel starts) |
//! | any other answer | that answer, and the stream is dropped after it |
//! | the tunnel's bytes, a half-close | DATA, END_STREAM |
//! | a reset | RST_STREAM (CANCEL) |
//!
//! Only WebSocket openings are sent this way (`websocket` among the protocols `Upgrade` offers:
//! `:protocol` holds one). Other upgrades go as before, as plain requests without their
//! `Upgrade` field: `Upgrade: h2c`, which curl offers on every plain GET with `--http2`, means
//! nothing to a server already spoken to in HTTP/2, and an extended CONNECT for it would turn an
//! ordinary request into a refusal. The request waits for the server's first SETTINGS, which
//! says whether it takes extended CONNECT (`SETTINGS_ENABLE_CONNECT_PROTOCOL`, RFC 8441 §3):
//! a server that does not gets no request, and the client a `502` ([`Unsupported`]), as
//! HAProxy 2.6 answers (termination `SH`).

use http::header::{CONTENT_LENGTH, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY};
use http::response::Parts;
use http::{Method, Request};
use tern_h1::RequestHead;

use super::response::line;
use crate::http2::websocket_accept;

/// The WebSocket opening a request is.
#[derive(Debug, Clone, Copy)]
pub(super) struct Upgrade {
    /// The `sec-websocket-accept` value that answers the request's key, if it has one.
    accept: Option<[u8; 28]>,
}

/// The protocol sent, and named in the `101`.
const WEBSOCKET: &str = "websocket";

/// The server did not announce `SETTINGS_ENABLE_CONNECT_PROTOCOL`: an upgrade request cannot
/// reach it. Never worth a retry (the request was not sent, and another connection to the
/// same server would say the same).
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the HTTP/2 server does not accept extended CONNECT (RFC 8441): no WebSocket to it")]
pub(crate) struct Unsupported;

/// Whether `e` (a server stream's error) is [`Unsupported`].
pub(crate) fn is_unsupported(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Unsupported>())
}

impl Upgrade {
    /// The WebSocket opening `head` (parsed from `buf`) is, if it is an upgrade request
    /// ([`RequestHead::is_upgrade`]) offering `websocket`.
    pub(super) fn of(head: &RequestHead, buf: &[u8]) -> Option<Upgrade> {
        if !crate::exchange::websocket::is_websocket(head, buf) {
            return None;
        }
        let mut keys = head
            .fields()
            .iter()
            .filter(|f| f.name(buf).eq_ignore_ascii_case(b"sec-websocket-key"));
        let accept = match (keys.next(), keys.next()) {
            (Some(key), None) => Some(websocket_accept(key.value(buf).trim_ascii())),
            _ => None,
        };
        Some(Upgrade { accept })
    }

    /// Turns `request` (the upgrade request translated as any request) into the extended
    /// CONNECT that stands for it.
    pub(super) fn apply(&self, request: &mut Request<()>) {
        *request.method_mut() = Method::CONNECT;
        request
            .extensions_mut()
            .insert(h2::ext::Protocol::from_static(WEBSOCKET));
        request.headers_mut().remove(SEC_WEBSOCKET_KEY);
    }

    /// Whether `status` accepts the extended CONNECT: any 2xx starts the tunnel.
    pub(super) fn accepted(status: http::StatusCode) -> bool {
        status.is_success()
    }

    /// Writes the `101` that stands for the server's acceptance `parts` into `out`: its fields
    /// (but a length, which a tunnel has none of, and an accept value, which is tern's to
    /// give), `upgrade` and `connection`, and the accept value that answers the client's key.
    pub(super) fn write_switch(&self, parts: &Parts, out: &mut Vec<u8>) {
        out.extend_from_slice(b"HTTP/1.1 101 Switching Protocols\r\n");
        for (name, value) in &parts.headers {
            if name == CONTENT_LENGTH || name == SEC_WEBSOCKET_ACCEPT {
                continue;
            }
            line(out, name.as_str().as_bytes(), value.as_bytes());
        }
        line(out, b"upgrade", WEBSOCKET.as_bytes());
        line(out, b"connection", b"upgrade");
        if let Some(accept) = &self.accept {
            line(out, b"sec-websocket-accept", accept);
        }
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests;
