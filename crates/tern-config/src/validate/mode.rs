//! `mode` on frontends and backends (see `model/mode.rs`), and what a TCP proxy refuses.
//!
//! A TCP frontend or backend never reads a request, so a key that acts on requests or
//! responses would silently do nothing there. Each such key is an error naming its path,
//! rather than a setting the operator believes in and tern ignores (HAProxy warns and goes
//! on; a warning in a start-up log is easy to miss). What a TCP proxy keeps: binds and TLS,
//! `maxconn`, `default_backend`, `use_backend` on connection facts (`src`, `dst_port`,
//! `ssl_fc`, `ssl_fc_sni`; `req.ssl_sni` and `req.ssl_hello_type` of a ClientHello read before
//! relaying it, with `tcp_request`), the `client` and `handshake` timeouts; on backends every
//! balancing algorithm but the request-hashing ones, health checks (HTTP checks too, as in
//! HAProxy), `maxconn` and the queue, retries, redispatch, backup servers, stickiness on the
//! source, passive checks on connections (`layer4`), TLS and the PROXY header to servers.
//!
//! Then a frontend and every backend it routes to must be in the same mode
//! ([`Checker::modes_agree`]).

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{Backend, Balance, BalanceKey, Fetch, Frontend, ObserveOn, ProxyMode};
use crate::raw::{RawBackend, RawFrontend, RawServerTls};

/// Why a key is refused on a TCP proxy.
const NO_REQUESTS: &str =
    "is an HTTP setting, and a proxy with mode = \"tcp\" reads no HTTP requests or responses: \
     remove it, or use mode = \"http\"";

impl Checker<'_> {
    /// The mode named by `raw` (default `http`).
    pub(super) fn mode(&mut self, raw: Option<&str>, path: &KeyPath) -> ProxyMode {
        match raw {
            None | Some("http") => ProxyMode::Http,
            Some("tcp") => ProxyMode::Tcp,
            Some(other) => {
                self.issue(
                    path,
                    format!("unknown mode `{other}`: expected \"http\" or \"tcp\""),
                );
                ProxyMode::Http
            }
        }
    }

    /// Reports every HTTP-only key set on a TCP frontend.
    pub(super) fn tcp_frontend_keys(&mut self, raw: &RawFrontend, path: &KeyPath) {
        let (to, lim, h2) = (&raw.timeouts, &raw.limits, &raw.http2);
        let h2_set = h2.cleartext.is_some()
            || h2.max_concurrent_streams.is_some()
            || h2.initial_window_size.is_some()
            || h2.connection_window_size.is_some()
            || h2.max_frame_size.is_some()
            || h2.max_header_list_size.is_some()
            || h2.max_concurrent_reset_streams.is_some()
            || h2.max_pending_accept_reset_streams.is_some()
            || h2.max_local_error_reset_streams.is_some()
            || h2.max_client_resets.is_some()
            || h2.websocket.is_some();
        let keys = [
            ("monitor_uri", raw.monitor_uri.is_some()),
            ("x_forwarded_for", raw.x_forwarded_for.is_some()),
            ("x_forwarded_proto", raw.x_forwarded_proto.is_some()),
            ("client_cert_headers", raw.client_cert_headers.is_some()),
            ("connection_mode", raw.connection_mode.is_some()),
            ("http_request", raw.http_request.is_some()),
            ("http_response", raw.http_response.is_some()),
            ("compression", raw.compression.is_some()),
            (
                "limits",
                lim.max_head_size.is_some() || lim.max_headers.is_some(),
            ),
            ("http2", h2_set),
        ];
        self.refuse_keys(path, &keys);
        let timeouts = [
            ("http_request", to.http_request.is_some()),
            ("keep_alive", to.keep_alive.is_some()),
        ];
        self.refuse_keys(&path.key("timeouts"), &timeouts);
    }

    /// Reports every HTTP-only key set on a TCP backend (those of the raw table; the
    /// algorithm and passive checks are judged on the model in [`Checker::modes_agree`]).
    pub(super) fn tcp_backend_keys(&mut self, raw: &RawBackend, path: &KeyPath) {
        let pool = raw.pool.max_idle_per_server.is_some() || raw.pool.idle_timeout.is_some();
        let keys = [
            ("http_request", raw.http_request.is_some()),
            ("http_response", raw.http_response.is_some()),
            ("compression", raw.compression.is_some()),
            ("cookie", raw.cookie.is_some()),
            ("connection_mode", raw.connection_mode.is_some()),
            ("pool", pool),
            ("proto", raw.proto.is_some()),
        ];
        self.refuse_keys(path, &keys);
        self.tcp_sni(raw.tls.as_ref(), &path.key("tls"));
        for (i, server) in raw.servers.iter().flatten().enumerate() {
            let at = path.key("servers").index(i);
            self.refuse_keys(&at, &[("proto", server.proto.is_some())]);
            self.tcp_sni(server.tls.as_ref(), &at.key("tls"));
        }
    }

    fn refuse_keys(&mut self, path: &KeyPath, keys: &[(&str, bool)]) {
        for (key, _) in keys.iter().filter(|(_, set)| *set) {
            self.issue(&path.key(key), format!("`{key}` {NO_REQUESTS}"));
        }
    }

    /// `sni = "host"` takes the name from the request's Host, which a TCP connection has not.
    fn tcp_sni(&mut self, tls: Option<&RawServerTls>, path: &KeyPath) {
        if let Some(RawServerTls::Table(t)) = tls {
            if t.sni.as_deref() == Some("host") {
                self.issue(
                    &path.key("sni"),
                    "`sni = \"host\"` takes the name from the request's Host header, which a \
                     backend with mode = \"tcp\" never reads: give a fixed name",
                );
            }
        }
    }

    /// Every frontend routes only to backends of its own mode; a TCP frontend's `use_backend`
    /// reads only connection facts; a TCP backend hashes no request part and observes no
    /// responses.
    pub(super) fn modes_agree(&mut self, frontends: &[Frontend], backends: &[Backend]) {
        let root = KeyPath::root();
        for (i, fe) in frontends.iter().enumerate() {
            let path = root.key("frontend").index(i);
            let default = fe.default_backend.as_deref();
            let targets = default
                .map(|name| (name, path.key("default_backend")))
                .into_iter()
                .chain(fe.use_backend.iter().enumerate().map(|(j, r)| {
                    let at = path.key("use_backend").index(j).key("backend");
                    (r.backend.as_str(), at)
                }));
            for (name, at) in targets {
                let Some(be) = backends.iter().find(|b| b.name == name) else {
                    continue;
                };
                if be.mode != fe.mode {
                    self.issue(&at, mismatch(fe, be));
                }
            }
            if fe.mode == ProxyMode::Tcp {
                self.tcp_routes(fe, &path);
            }
            self.hello_readers(fe, &path);
        }
        for (i, be) in backends.iter().enumerate() {
            if be.mode == ProxyMode::Tcp {
                self.tcp_backend_model(be, &root.key("backend").index(i));
            }
        }
    }

    fn tcp_routes(&mut self, fe: &Frontend, path: &KeyPath) {
        for (j, route) in fe.use_backend.iter().enumerate() {
            let http = route.condition.fetches().find(|f| !connection_fetch(f));
            if let Some(fetch) = http {
                let at = path.key("use_backend").index(j);
                self.issue(
                    &at,
                    not_in_tcp_mode(fetch, "a frontend with mode = \"tcp\""),
                );
            }
        }
    }

    fn tcp_backend_model(&mut self, be: &Backend, path: &KeyPath) {
        if let Balance::Hash { key, .. } = &be.balance {
            if *key != BalanceKey::Source {
                self.issue(
                    &path.key("balance"),
                    "hashes a part of an HTTP request, and a backend with mode = \"tcp\" reads \
                     none: use `source` (or another algorithm)",
                );
            }
        }
        if be.observe.is_some_and(|o| o.on == ObserveOn::Layer7) {
            self.issue(
                &path.key("observe").key("on"),
                "`layer7` judges HTTP responses, and a backend with mode = \"tcp\" reads none: \
                 use `layer4`",
            );
        }
    }
}

/// Whether a fetch reads the connection only (what a TCP frontend knows).
pub(super) fn connection_fetch(fetch: &Fetch) -> bool {
    matches!(
        fetch,
        Fetch::Src
            | Fetch::DstPort
            | Fetch::Tls
            | Fetch::Sni
            | Fetch::HelloType
            | Fetch::PpTlv(_)
            | Fetch::Constant(_)
    )
}

/// Why `fetch` cannot be read by `who` (TCP-mode routing, tcp_request rules): an HTTP fetch
/// (no request is parsed there), or another one that is not known there.
pub(super) fn not_in_tcp_mode(fetch: &Fetch, who: &str) -> String {
    let why = match fetch {
        Fetch::Method
        | Fetch::Url
        | Fetch::Path
        | Fetch::Query
        | Fetch::Header(_)
        | Fetch::Version
        | Fetch::HttpAuth(_)
        | Fetch::HttpAuthGroup(_)
        | Fetch::UniqueId => {
            format!("`{fetch}` is an HTTP fetch: it reads the request, and {who} parses none")
        }
        _ => format!("`{fetch}` is not known to {who}"),
    };
    format!(
        "{why}; use connection facts only (src, dst_port, ssl_fc, ssl_fc_sni, req.ssl_sni, \
         req.ssl_hello_type, fc_pp_tlv)"
    )
}

fn mismatch(fe: &Frontend, be: &Backend) -> String {
    format!(
        "frontend `{}` has mode = \"{}\" but backend `{}` has mode = \"{}\": a frontend routes \
         only to backends of its own mode",
        fe.name,
        fe.mode.as_str(),
        be.name,
        be.mode.as_str()
    )
}

#[cfg(test)]
mod tests;
