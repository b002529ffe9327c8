//! Frontend checks: binds and their addresses, TLS inheritance, timeouts and request limits
//! (the TLS table itself is checked in `tls.rs`).
//!
//! A bind inherits the frontend's `tls` unless it says otherwise (`tls = false`, or its own
//! table), so the common case — every bind of a frontend terminating TLS with the same
//! certificates — is written once, and a plain-HTTP bind next to it is one word. `accept_proxy`
//! is inherited the same way.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::condition::network;
use super::http_rules::Side;
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{
    Bind, Frontend, FrontendTimeouts, Http2Settings, IpNet, ProxyMode, RequestLimits, TlsSettings,
};
use crate::raw::{
    RawBind, RawBindTls, RawFrontend, RawFrontendTimeouts, RawHttp2, RawLimits, RawSize, RawTls,
};

/// What a bind inherits from its frontend unless it says otherwise.
#[derive(Clone, Copy)]
struct BindDefaults<'a> {
    tls: Option<&'a TlsSettings>,
    accept_proxy: bool,
    accept_proxy_from: &'a [IpNet],
    mode: ProxyMode,
}

/// Smallest `max_head_size` hyper accepts for its read buffer.
const MIN_HEAD_SIZE: u64 = 8 * 1024;
const MAX_HEAD_SIZE: u64 = 1024 * 1024;

impl Checker<'_> {
    pub(super) fn frontend(
        &mut self,
        raw: &RawFrontend,
        path: &KeyPath,
        backends: &[Option<&str>],
    ) -> Frontend {
        let mode = self.mode(raw.mode.as_deref(), &path.key("mode"));
        let mut tls = raw.tls.as_ref().and_then(|t| self.tls(t, &path.key("tls")));
        if let (Some(settings), Some(written)) = (tls.as_mut(), raw.tls.as_ref()) {
            tcp_alpn(mode, settings, written);
        }
        let proxy_from = self.sources(
            raw.accept_proxy_from.as_deref(),
            &path.key("accept_proxy_from"),
        );
        let acls = self.acls(raw.acl.as_ref(), &path.key("acl"));
        let request_log = self.request_log(raw, mode, path);
        if mode == ProxyMode::Tcp {
            self.tcp_frontend_keys(raw, path);
        }
        Frontend {
            name: self.name(&path.key("name"), raw.name.as_deref()),
            mode,
            binds: self.binds(
                raw.bind.as_deref(),
                BindDefaults {
                    tls: tls.as_ref(),
                    // A list of senders turns the header on, unless `accept_proxy` says no.
                    accept_proxy: raw.accept_proxy.unwrap_or(!proxy_from.is_empty()),
                    accept_proxy_from: &proxy_from,
                    mode,
                },
                &path.key("bind"),
            ),
            monitor_uri: self.monitor_uri(raw.monitor_uri.as_deref(), &path.key("monitor_uri")),
            default_backend: self.default_backend(raw, path, backends),
            use_backend: self.use_backend(
                raw.use_backend.as_deref(),
                &acls,
                &path.key("use_backend"),
                backends,
            ),
            http_request: self.http_rules(
                raw.http_request.as_deref(),
                &acls,
                Side::Request,
                &path.key("http_request"),
            ),
            http_response: self.http_rules(
                raw.http_response.as_deref(),
                &acls,
                Side::Response,
                &path.key("http_response"),
            ),
            error_pages: self.error_pages(raw.error_pages.as_ref(), &path.key("error_pages")),
            compression: self.compression(raw.compression.as_ref(), &path.key("compression")),
            tcp_request: self.tcp_request(
                raw.tcp_request.as_ref(),
                &acls,
                mode,
                &path.key("tcp_request"),
            ),
            timeouts: self.frontend_timeouts(&raw.timeouts, &path.key("timeouts")),
            maxconn: raw.maxconn.map(|m| {
                self.int_in(&path.key("maxconn"), Some(m), 1..=i64::from(u32::MAX), 1) as usize
            }),
            rate_limit_sessions: self
                .opt_int_in(
                    &path.key("rate_limit_sessions"),
                    raw.rate_limit_sessions,
                    1..=10_000_000,
                )
                .map(|n| n as u32),
            x_forwarded_for: raw.x_forwarded_for.unwrap_or(true),
            x_forwarded_proto: raw.x_forwarded_proto.unwrap_or(true),
            client_cert_headers: raw.client_cert_headers.unwrap_or(false),
            limits: self.limits(&raw.limits, &path.key("limits")),
            http2: self.http2(&raw.http2, &path.key("http2")),
            connection_mode: self.connection_mode(
                raw.connection_mode.as_deref(),
                &path.key("connection_mode"),
                true,
            ),
            request_log,
        }
    }

    fn binds(
        &mut self,
        raw: Option<&[RawBind]>,
        defaults: BindDefaults<'_>,
        path: &KeyPath,
    ) -> Vec<Bind> {
        let Some(raw) = raw else {
            self.issue(
                path,
                "missing key `bind`: list at least one address, e.g. bind = [\"127.0.0.1:8443\"]",
            );
            return Vec::new();
        };
        if raw.is_empty() {
            self.issue(path, "must list at least one address");
        }
        raw.iter()
            .enumerate()
            .map(|(i, bind)| self.bind(bind, &path.index(i), defaults))
            .collect()
    }

    fn bind(&mut self, raw: &RawBind, path: &KeyPath, frontend: BindDefaults<'_>) -> Bind {
        let frontend_tls = frontend.tls;
        let mut accept_proxy = frontend.accept_proxy;
        let mut accept_proxy_from = frontend.accept_proxy_from.to_vec();
        let (address, address_path, tls) = match raw {
            RawBind::Address(address) => (address, path.clone(), frontend_tls.cloned()),
            RawBind::Table(table) => {
                let tls_path = path.key("tls");
                let tls = match &table.tls {
                    None => frontend_tls.cloned(),
                    Some(RawBindTls::Enabled(false)) => None,
                    Some(RawBindTls::Enabled(true)) => {
                        self.issue(
                            &tls_path,
                            "`tls = true` is not accepted: leave `tls` out to use the frontend's TLS, \
                             write `tls = false` for plain HTTP, or give a table { certs = [...] }",
                        );
                        None
                    }
                    Some(RawBindTls::Settings(settings)) => {
                        let mut tls = self.tls(settings, &tls_path);
                        if let Some(own) = tls.as_mut() {
                            tcp_alpn(frontend.mode, own, settings);
                        }
                        tls
                    }
                };
                if let Some(from) = &table.accept_proxy_from {
                    accept_proxy_from = self.sources(Some(from), &path.key("accept_proxy_from"));
                }
                let listed = table.accept_proxy_from.is_some() && !accept_proxy_from.is_empty();
                accept_proxy = table.accept_proxy.unwrap_or(accept_proxy || listed);
                (&table.address, path.key("address"), tls)
            }
        };
        let address = match parse_bind_address(address) {
            Ok(address) => {
                self.note_bind(address, &address_path);
                address
            }
            Err(message) => {
                self.issue(&address_path, message);
                SocketAddr::from(([0, 0, 0, 0], 0))
            }
        };
        if !accept_proxy {
            accept_proxy_from.clear();
        }
        Bind {
            address,
            tls,
            accept_proxy,
            accept_proxy_from,
        }
    }

    /// `accept_proxy_from`: addresses or networks (`10.0.0.0/8`, `::1`).
    fn sources(&mut self, raw: Option<&[String]>, path: &KeyPath) -> Vec<IpNet> {
        let mut nets = Vec::new();
        for (i, text) in raw.unwrap_or_default().iter().enumerate() {
            match network(text) {
                Ok(net) => nets.push(net),
                Err(message) => self.issue(&path.index(i), message),
            }
        }
        nets
    }

    /// Records a bind address, reporting it if another bind already uses it (port 0 excepted:
    /// each such bind gets its own ephemeral port).
    fn note_bind(&mut self, address: SocketAddr, path: &KeyPath) {
        if address.port() == 0 {
            return;
        }
        if let Some(first) = self.binds_seen.get(&address) {
            let message = format!("bind address {address} is already used by {first}");
            self.issue(path, message);
        } else {
            self.binds_seen.insert(address, path.clone());
        }
    }

    /// Resolves a file path against the config file's directory and makes it absolute. The file
    /// is not opened: the TLS crate loads it and reports its own errors.
    pub(super) fn file_path(&mut self, raw: &str, path: &KeyPath) -> PathBuf {
        if raw.is_empty() {
            self.issue(path, "file path must not be empty");
            return PathBuf::new();
        }
        let joined = self.base_dir.join(raw);
        std::path::absolute(&joined).unwrap_or_else(|e| {
            self.issue(path, format!("cannot make `{raw}` absolute: {e}"));
            joined
        })
    }

    fn monitor_uri(&mut self, raw: Option<&str>, path: &KeyPath) -> Option<String> {
        let uri = raw?;
        if !uri.starts_with('/') {
            self.issue(path, format!("`{uri}` must start with '/'"));
        } else if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
            self.issue(
                path,
                format!("{uri:?} must not contain spaces or control characters"),
            );
        }
        Some(uri.to_owned())
    }

    /// `default_backend`: required unless `use_backend` or `http_request` has rules (then a
    /// request no rule takes or answers is answered 503, as in HAProxy: a frontend that only
    /// redirects to https needs no backend).
    fn default_backend(
        &mut self,
        raw: &RawFrontend,
        frontend: &KeyPath,
        backends: &[Option<&str>],
    ) -> Option<String> {
        let path = frontend.key("default_backend");
        let Some(name) = raw.default_backend.as_deref() else {
            let routes = raw.use_backend.as_ref().is_some_and(|r| !r.is_empty());
            let rules = raw.http_request.as_ref().is_some_and(|r| !r.is_empty());
            if !routes && !rules {
                self.issue(
                    &path,
                    "missing key `default_backend`: name the backend that receives requests \
                     (it may be left out only when `use_backend` or `http_request` has rules)",
                );
            }
            return None;
        };
        self.backend_exists(name, &path, backends);
        Some(name.to_owned())
    }

    /// Records an issue at `path` when no backend is named `name`.
    pub(super) fn backend_exists(&mut self, name: &str, path: &KeyPath, backends: &[Option<&str>]) {
        if !backends.contains(&Some(name)) {
            let known: Vec<String> = backends
                .iter()
                .flatten()
                .map(|b| format!("`{b}`"))
                .collect();
            let known = if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            };
            self.issue(
                path,
                format!("no backend named `{name}` (backends: {known})"),
            );
        }
    }

    fn frontend_timeouts(&mut self, raw: &RawFrontendTimeouts, path: &KeyPath) -> FrontendTimeouts {
        FrontendTimeouts {
            client: self.duration(
                &path.key("client"),
                raw.client.as_ref(),
                Duration::from_secs(30),
            ),
            http_request: self.duration(
                &path.key("http_request"),
                raw.http_request.as_ref(),
                Duration::from_secs(10),
            ),
            keep_alive: self.duration(
                &path.key("keep_alive"),
                raw.keep_alive.as_ref(),
                Duration::from_secs(10),
            ),
            handshake: self.duration(
                &path.key("handshake"),
                raw.handshake.as_ref(),
                Duration::from_secs(10),
            ),
            client_fin: self.opt_duration(&path.key("client_fin"), raw.client_fin.as_ref()),
            tarpit: self.duration(
                &path.key("tarpit"),
                raw.tarpit.as_ref(),
                Duration::from_secs(5),
            ),
        }
    }

    fn limits(&mut self, raw: &RawLimits, path: &KeyPath) -> RequestLimits {
        let head = self.size_in(
            &path.key("max_head_size"),
            raw.max_head_size.as_ref(),
            MIN_HEAD_SIZE..=MAX_HEAD_SIZE,
            16 * 1024,
        );
        RequestLimits {
            // In range 8k..=1m, so it fits any usize tern runs on.
            max_head_size: usize::try_from(head).unwrap_or(usize::MAX),
            max_headers: self.int_in(&path.key("max_headers"), raw.max_headers, 1..=1000, 100)
                as usize,
        }
    }
}

impl Checker<'_> {
    /// `frontend.http2`: each setting within what RFC 9113 allows and what keeps a connection's
    /// memory bounded.
    fn http2(&mut self, raw: &RawHttp2, path: &KeyPath) -> Http2Settings {
        let d = Http2Settings::default();
        let window = |c: &mut Self, key: &str, raw: Option<&RawSize>, default: u32| {
            // RFC 9113 §6.9.1: at most 2^31-1.
            c.size_in(&path.key(key), raw, 1..=(1 << 31) - 1, u64::from(default)) as u32
        };
        let count = |c: &mut Self, key: &str, raw: Option<i64>, max: i64, default: usize| {
            c.int_in(&path.key(key), raw, 1..=max, default as i64) as usize
        };
        Http2Settings {
            cleartext: raw.cleartext.unwrap_or(d.cleartext),
            max_concurrent_streams: count(
                self,
                "max_concurrent_streams",
                raw.max_concurrent_streams,
                10_000,
                d.max_concurrent_streams as usize,
            ) as u32,
            initial_window_size: window(
                self,
                "initial_window_size",
                raw.initial_window_size.as_ref(),
                d.initial_window_size,
            ),
            connection_window_size: window(
                self,
                "connection_window_size",
                raw.connection_window_size.as_ref(),
                d.connection_window_size,
            ),
            // RFC 9113 §6.5.2: 2^14 to 2^24-1.
            max_frame_size: self.size_in(
                &path.key("max_frame_size"),
                raw.max_frame_size.as_ref(),
                16_384..=16_777_215,
                u64::from(d.max_frame_size),
            ) as u32,
            max_header_list_size: self.size_in(
                &path.key("max_header_list_size"),
                raw.max_header_list_size.as_ref(),
                1024..=16 << 20,
                u64::from(d.max_header_list_size),
            ) as u32,
            max_concurrent_reset_streams: count(
                self,
                "max_concurrent_reset_streams",
                raw.max_concurrent_reset_streams,
                100_000,
                d.max_concurrent_reset_streams,
            ),
            max_pending_accept_reset_streams: count(
                self,
                "max_pending_accept_reset_streams",
                raw.max_pending_accept_reset_streams,
                100_000,
                d.max_pending_accept_reset_streams,
            ),
            max_local_error_reset_streams: count(
                self,
                "max_local_error_reset_streams",
                raw.max_local_error_reset_streams,
                100_000,
                d.max_local_error_reset_streams,
            ),
            max_client_resets: count(
                self,
                "max_client_resets",
                raw.max_client_resets,
                10_000_000,
                d.max_client_resets,
            ),
            websocket: raw.websocket.unwrap_or(d.websocket),
            max_control_frames: count(
                self,
                "max_control_frames",
                raw.max_control_frames,
                10_000_000,
                d.max_control_frames,
            ),
        }
    }
}

/// Parses `"1.2.3.4:443"`, `"[::1]:443"`, `"*:443"` or `":443"` (the last two: all IPv4
/// addresses). Host names are refused: a bind must not depend on DNS at start-up.
pub(super) fn parse_bind_address(text: &str) -> Result<SocketAddr, String> {
    let forms = "use \"1.2.3.4:443\", \"[::1]:443\", \"*:443\" or \":443\"";
    if let Some(port) = text.strip_prefix("*:").or_else(|| text.strip_prefix(':')) {
        let port: u16 = port
            .parse()
            .map_err(|_| format!("invalid port in bind address `{text}`: {forms}"))?;
        return Ok(SocketAddr::from(([0, 0, 0, 0], port)));
    }
    text.parse()
        .map_err(|_| format!("invalid bind address `{text}`: {forms}"))
}

/// A TCP frontend offers no ALPN unless `alpn` is written: tern does not know the protocol its
/// servers speak, and offering `h2` would let clients pick HTTP/2 in front of servers that
/// speak HTTP/1.1 or no HTTP at all (HAProxy's `mode tcp` binds offer none either).
fn tcp_alpn(mode: ProxyMode, settings: &mut TlsSettings, written: &RawTls) {
    if mode == ProxyMode::Tcp && written.alpn.is_none() {
        settings.policy.alpn.clear();
    }
}
