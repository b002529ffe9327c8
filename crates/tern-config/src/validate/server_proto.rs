//! `proto` of servers: the HTTP version tern speaks to them, checked against the TLS `alpn`
//! offer, since the two say the same thing for a TLS server.
//!
//! - `proto = "h2"` on a plain server is HTTP/2 with prior knowledge (h2c); on a TLS server it
//!   offers ALPN `h2` when `alpn` is not written (HAProxy needs both `proto h2` and `alpn h2`;
//!   tern does not make the operator repeat it), and an `alpn` that leaves `h2` out is an error.
//! - Without `proto`, a TLS server whose `alpn` lists `h2` gets HTTP/2 when it picks `h2`, and
//!   HTTP/1.1 otherwise ([`ServerProto::Negotiated`], as HAProxy's `alpn h2,http/1.1`).
//! - `proto = "h1"` with `h2` in `alpn` is an error: the server could pick a protocol tern was
//!   told not to speak.
//! - HTTP checks follow the server's protocol unless their own `proto` is written
//!   (HAProxy's `check-proto`).

use super::Checker;
use crate::locate::KeyPath;
use crate::model::WsProto;
use crate::model::{CheckKind, Server, ServerProto};
use crate::raw::{RawBackend, RawServerCheck};

/// A server's HTTP check whose `proto` is not written speaks the server's: HTTP/2 to a server
/// with `proto = "h2"` (which may speak nothing else), HTTP/1.1 otherwise, as HAProxy's checks
/// follow the server's `proto` unless `check-proto` says otherwise.
fn follow_proto(server: &mut Server) {
    let h2 = server.proto == ServerProto::Http2;
    if let Some(check) = &mut server.check {
        match &mut check.kind {
            CheckKind::Http(http)
            | CheckKind::Tls {
                http: Some(http), ..
            } => http.h2 = h2,
            CheckKind::Tcp | CheckKind::Tls { http: None, .. } => {}
        }
    }
}

impl Checker<'_> {
    /// Sets `proto` on each of `servers` (built from `raw.servers`, in the same order, their
    /// `tls` already resolved).
    pub(super) fn server_protos(
        &mut self,
        raw: &RawBackend,
        servers: &mut [Server],
        path: &KeyPath,
    ) {
        let default = raw
            .proto
            .as_deref()
            .and_then(|p| self.proto(p, &path.key("proto")));
        let raw_servers = raw.servers.as_deref().unwrap_or_default();
        for (i, (raw_server, server)) in raw_servers.iter().zip(servers.iter_mut()).enumerate() {
            let at = path.key("servers").index(i);
            let own = match raw_server.proto.as_deref() {
                Some(p) => self.proto(p, &at.key("proto")),
                None => None,
            };
            let written = own.or(default);
            let at = if own.is_some() { at } else { path.clone() };
            server.proto = self.with_alpn(server, written, &at);
            let ws_at = path.key("servers").index(i).key("ws");
            server.ws = self.ws(raw_server.ws.as_deref(), server, &ws_at);
            let check_proto_written = raw.check.as_ref().is_some_and(|c| c.proto.is_some())
                || matches!(&raw_server.check, Some(RawServerCheck::Table(c)) if c.proto.is_some());
            if !check_proto_written {
                follow_proto(server);
            }
        }
    }

    /// `ws`: `"auto"`, `"h1"` or `"h2"` (HAProxy's `ws`). On a TLS server the protocol is the
    /// one ALPN picks, so a `ws` that its `alpn` cannot give is refused rather than ignored.
    fn ws(&mut self, text: Option<&str>, server: &Server, at: &KeyPath) -> WsProto {
        let ws = match text.map(str::to_ascii_lowercase).as_deref() {
            None | Some("auto") => WsProto::Auto,
            Some("h1") => WsProto::H1,
            Some("h2") => WsProto::H2,
            Some(_) => {
                let text = text.unwrap_or_default();
                let message =
                    format!("unknown protocol `{text}`: expected \"auto\", \"h1\" or \"h2\"");
                self.issue(at, message);
                WsProto::Auto
            }
        };
        if let Some(tls) = &server.tls {
            let offers =
                |p: &str| tls.alpn.is_empty() && p == "http/1.1" || tls.alpn.iter().any(|a| a == p);
            let (wanted, alpn) = match ws {
                WsProto::H1 if server.proto != ServerProto::Http1 => (true, "http/1.1"),
                WsProto::H2 if server.proto == ServerProto::Http1 => (true, "h2"),
                _ => (false, ""),
            };
            if wanted && !offers(alpn) {
                self.issue(
                    at,
                    format!(
                        "ws = {:?} on a TLS server whose `alpn` leaves out {alpn:?}: the server \
                         could not pick it; add it to `alpn`",
                        text.unwrap_or_default()
                    ),
                );
            }
        }
        ws
    }

    /// `"h1"` / `"http/1.1"` or `"h2"`.
    fn proto(&mut self, text: &str, path: &KeyPath) -> Option<ServerProto> {
        match text.to_ascii_lowercase().as_str() {
            "h1" | "http/1.1" => Some(ServerProto::Http1),
            "h2" => Some(ServerProto::Http2),
            _ => {
                self.issue(
                    path,
                    format!("unknown protocol `{text}`: expected \"h1\" or \"h2\""),
                );
                None
            }
        }
    }

    /// The protocol of `server` from the `written` one and its TLS `alpn` (which may gain `h2`).
    fn with_alpn(
        &mut self,
        server: &mut Server,
        written: Option<ServerProto>,
        at: &KeyPath,
    ) -> ServerProto {
        let Some(tls) = server.tls.as_mut() else {
            return written.unwrap_or_default();
        };
        let offers_h2 = tls.alpn.iter().any(|p| p == "h2");
        match written {
            Some(ServerProto::Http2) if tls.alpn.is_empty() => {
                tls.alpn = vec!["h2".to_owned()];
                ServerProto::Http2
            }
            Some(ServerProto::Http2) if !offers_h2 => {
                self.issue(
                    &at.key("proto"),
                    "proto = \"h2\" on a TLS server whose `alpn` leaves out \"h2\"; add \"h2\" \
                     to `alpn`, or remove `alpn` (tern then offers \"h2\")",
                );
                ServerProto::Http2
            }
            Some(ServerProto::Http1) if offers_h2 => {
                self.issue(
                    &at.key("proto"),
                    "proto = \"h1\" on a TLS server whose `alpn` offers \"h2\"; remove \"h2\" \
                     from `alpn`, or remove `proto` to speak what the server picks",
                );
                ServerProto::Http1
            }
            Some(proto) => proto,
            None if offers_h2 => ServerProto::Negotiated,
            None => ServerProto::Http1,
        }
    }
}
