//! Which HTTP version a WebSocket to a server goes over: the server's `ws` (HAProxy's `ws
//! auto|h1|h2`), apart from its requests' `proto`.
//!
//! An HTTP/2 server that does not take RFC 8441 extended CONNECT still takes WebSockets over
//! HTTP/1.1 (`ws = "h1"`); an HTTP/1.1 server may take them as HTTP/2 streams (`ws = "h2"`).
//! With `auto` (the default) a WebSocket goes as the server's other requests do. The choice is
//! made per request in `connect.rs` `obtain`: a WebSocket to a server with another `ws` looks
//! in the other pool and opens a connection of the other protocol (h2c or HTTP/1.1 on a plain
//! server). On a TLS server ALPN picks the protocol, so those connections offer only the
//! WebSocket's protocol: the server's client configuration cloned with that ALPN (its session
//! cache shared), made once per generation ([`client_configs`]).

use std::sync::Arc;

use rustls::ClientConfig;
use tern_config::{Config, Server, ServerProto, WsProto};
use tern_h1::{FieldKind, RequestHead};

/// The `Upgrade` token of a WebSocket.
const WEBSOCKET: &[u8] = b"websocket";

/// Whether `head` (parsed from `buf`) opens a WebSocket: an upgrade request
/// ([`RequestHead::is_upgrade`]) offering `websocket`.
pub(crate) fn is_websocket(head: &RequestHead, buf: &[u8]) -> bool {
    head.is_upgrade()
        && head
            .fields()
            .iter()
            .filter(|f| f.kind() == FieldKind::Upgrade)
            .flat_map(|f| f.value(buf).split(|&b| b == b','))
            // Upgrade tokens are case-insensitive (RFC 9110 §7.8).
            .any(|token| token.trim_ascii().eq_ignore_ascii_case(WEBSOCKET))
}

/// The protocol a request to `server` goes over (`websocket`: it opens one).
pub(crate) fn proto_of(server: &Server, websocket: bool) -> ServerProto {
    if websocket {
        server.websocket_proto()
    } else {
        server.proto
    }
}

/// The ALPN a TLS connection for `server`'s WebSockets offers, when it is not its requests'.
fn websocket_alpn(server: &Server) -> Option<&'static [u8]> {
    match (server.ws, server.proto) {
        (WsProto::H1, ServerProto::Http2 | ServerProto::Negotiated) => Some(b"http/1.1"),
        (WsProto::H2, ServerProto::Http1) => Some(b"h2"),
        _ => None,
    }
}

/// For each server (`[backend][server]`) with `tls` and a `ws` its requests' ALPN does not
/// give, its client configuration (`servers_tls`) with the WebSocket's ALPN.
pub(crate) fn client_configs(
    config: &Config,
    servers_tls: &[Vec<Option<Arc<ClientConfig>>>],
) -> Vec<Vec<Option<Arc<ClientConfig>>>> {
    config
        .backends
        .iter()
        .enumerate()
        .map(|(b, be)| {
            be.servers
                .iter()
                .enumerate()
                .map(|(i, server)| {
                    let alpn = websocket_alpn(server)?;
                    let main = servers_tls.get(b)?.get(i)?.as_ref()?;
                    let mut ws = ClientConfig::clone(main);
                    ws.alpn_protocols = vec![alpn.to_vec()];
                    Some(Arc::new(ws))
                })
                .collect()
        })
        .collect()
}
