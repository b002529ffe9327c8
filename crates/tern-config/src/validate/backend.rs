//! Backend checks: timeouts, pool, servers and their addresses; the rest of a backend's keys
//! are in the sibling modules (`balance`, `health`, `persistence`, `protection`).
//!
//! Server addresses are resolved here, once, so a typo in a host name fails `tern check` rather
//! than the first request, and the data path never waits on DNS.

use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use super::http_rules::Side;
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{
    Backend, BackendTimeouts, PoolSettings, ProxyMode, ProxyProtocol, Server, ServerProto, WsProto,
};
use crate::raw::{RawBackend, RawServer};

impl Checker<'_> {
    pub(super) fn backend(&mut self, raw: &RawBackend, path: &KeyPath) -> Backend {
        let acls = self.acls(raw.acl.as_ref(), &path.key("acl"));
        let timeouts = BackendTimeouts {
            connect: self.duration(
                &path.key("timeouts").key("connect"),
                raw.timeouts.connect.as_ref(),
                Duration::from_secs(5),
            ),
            server: self.duration(
                &path.key("timeouts").key("server"),
                raw.timeouts.server.as_ref(),
                Duration::from_secs(30),
            ),
            tunnel: self.opt_duration(
                &path.key("timeouts").key("tunnel"),
                raw.timeouts.tunnel.as_ref(),
            ),
            server_fin: self.opt_duration(
                &path.key("timeouts").key("server_fin"),
                raw.timeouts.server_fin.as_ref(),
            ),
        };
        let mut servers = self.servers(raw.servers.as_deref(), &path.key("servers"));
        self.server_checks(raw, &mut servers, path);
        self.server_tls(raw, &mut servers, path);
        self.server_protos(raw, &mut servers, path);
        let mode = self.mode(raw.mode.as_deref(), &path.key("mode"));
        if mode == ProxyMode::Tcp {
            self.tcp_backend_keys(raw, path);
        }
        Backend {
            name: self.name(&path.key("name"), raw.name.as_deref()),
            mode,
            balance: self.balance(raw, path),
            timeouts,
            pool: PoolSettings {
                max_idle_per_server: self.int_in(
                    &path.key("pool").key("max_idle_per_server"),
                    raw.pool.max_idle_per_server,
                    0..=65_535,
                    1024,
                ) as usize,
                idle_timeout: self.duration(
                    &path.key("pool").key("idle_timeout"),
                    raw.pool.idle_timeout.as_ref(),
                    Duration::from_secs(30),
                ),
            },
            queue: self.queue(raw, timeouts.connect, path),
            retries: self.retries(raw.retries, path),
            redispatch: raw.redispatch.unwrap_or(true),
            cookie: self.cookie(raw.cookie.as_ref(), &servers, &path.key("cookie")),
            stick: self.stick(raw.stick.as_ref(), &path.key("stick")),
            observe: self.observe(raw.observe.as_ref(), &servers, &path.key("observe")),
            slowstart: self.opt_duration(&path.key("slowstart"), raw.slowstart.as_ref()),
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
            connection_mode: self.connection_mode(
                raw.connection_mode.as_deref(),
                &path.key("connection_mode"),
                false,
            ),
            servers,
        }
    }

    fn servers(&mut self, raw: Option<&[RawServer]>, path: &KeyPath) -> Vec<Server> {
        let Some(raw) = raw else {
            self.issue(
                path,
                "missing key `servers`: list at least one { name, address }",
            );
            return Vec::new();
        };
        if raw.is_empty() {
            self.issue(path, "must list at least one server");
            return Vec::new();
        }
        let servers: Vec<Server> = raw
            .iter()
            .enumerate()
            .flat_map(|(i, server)| self.servers_of(server, &path.index(i)))
            .collect();
        let mut first: HashMap<&str, usize> = HashMap::new();
        for (i, server) in servers.iter().enumerate() {
            if server.name.is_empty() {
                continue;
            }
            if let Some(earlier) = first.get(server.name.as_str()) {
                let message = format!(
                    "duplicate server name `{}` (first used by servers[{earlier}])",
                    server.name
                );
                self.issue(&path.index(i).key("name"), message);
            } else {
                first.insert(&server.name, i);
            }
        }
        if servers.iter().all(|s| s.weight == 0) {
            self.issue(
                path,
                "every server has weight 0; at least one must have a weight above 0",
            );
        } else if servers.iter().all(|s| s.backup) {
            self.issue(
                path,
                "every server is a backup; backups serve only when no other server is up",
            );
        }
        servers
    }

    /// One item of `servers`: a server, or the slots of a template (`count`).
    fn servers_of(&mut self, raw: &RawServer, path: &KeyPath) -> Vec<Server> {
        let Some(slots) = self.slots(raw, path) else {
            return vec![self.server(raw, None, path)];
        };
        let first = slots.first().copied().unwrap_or(1);
        slots
            .into_iter()
            .map(|n| self.server(raw, Some((n, first)), path))
            .collect()
    }

    /// A server, or slot `n` of a template whose first slot is `first`.
    fn server(&mut self, raw: &RawServer, slot: Option<(u32, u32)>, path: &KeyPath) -> Server {
        let address_path = path.key("address");
        let mut resolve = None;
        let address = match raw.address.as_deref() {
            None => {
                self.issue(
                    &address_path,
                    "missing key `address`, e.g. address = \"127.0.0.1:8080\"",
                );
                None
            }
            // An IP address is not resolved, as in HAProxy: `resolvers` changes nothing for it.
            Some(text) if raw.resolvers.is_some() && (slot.is_some() || !is_ip(text)) => {
                self.server_resolve(raw, slot, path).map(|(address, how)| {
                    resolve = Some(how);
                    address
                })
            }
            Some(text) => resolve_server_address(text)
                .map_err(|message| self.issue(&address_path, message))
                .ok(),
        };
        let mut name = self.name(&path.key("name"), raw.name.as_deref());
        if let Some((n, _)) = slot {
            name.push_str(&n.to_string());
        }
        Server {
            name,
            address: address.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0))),
            weight: self.int_in(&path.key("weight"), raw.weight, 0..=256, 1) as u32,
            backup: raw.backup.unwrap_or(false),
            maxconn: self.server_maxconn(raw.maxconn, &path.key("maxconn")),
            // Set by `server_checks`, which needs the whole backend.
            check: None,
            // Set by `server_tls`, which needs the backend's default.
            tls: None,
            disabled: raw.disabled.unwrap_or(false),
            proxy_protocol: self.proxy_protocol(raw.proxy_protocol.as_deref(), path),
            proxy_v2: self.proxy_v2(raw, path),
            // Set by `server_protos`, which needs the backend's default and the server's TLS.
            proto: ServerProto::Http1,
            ws: WsProto::Auto,
            resolve,
        }
    }

    /// `proxy_protocol`: `"v1"` or `"v2"` (HAProxy's `send-proxy`, `send-proxy-v2`).
    fn proxy_protocol(&mut self, raw: Option<&str>, path: &KeyPath) -> Option<ProxyProtocol> {
        let text = raw?;
        match text.to_ascii_lowercase().as_str() {
            "v1" => Some(ProxyProtocol::V1),
            "v2" => Some(ProxyProtocol::V2),
            _ => {
                let message =
                    format!("unknown PROXY protocol version `{text}`: expected \"v1\" or \"v2\"");
                self.issue(&path.key("proxy_protocol"), message);
                None
            }
        }
    }
}

/// Whether `text` is an `ip:port` (nothing to ask DNS).
fn is_ip(text: &str) -> bool {
    text.parse::<SocketAddr>().is_ok()
}

/// Resolves `"host:port"` (or `"[v6]:port"`) with the system resolver, keeping the first result.
pub(super) fn resolve_server_address(text: &str) -> Result<SocketAddr, String> {
    let address = match text.parse::<SocketAddr>() {
        Ok(address) => address,
        Err(_) => {
            let Some((host, port)) = text.rsplit_once(':') else {
                return Err(format!(
                    "server address `{text}` needs a port, e.g. \"{text}:8080\""
                ));
            };
            if host.is_empty() {
                return Err(format!(
                    "server address `{text}` needs a host, e.g. \"127.0.0.1{text}\""
                ));
            }
            let port: u16 = port
                .parse()
                .map_err(|_| format!("invalid port `{port}` in server address `{text}`"))?;
            (host, port)
                .to_socket_addrs()
                .map_err(|e| format!("cannot resolve `{host}`: {e}"))?
                .next()
                .ok_or_else(|| format!("`{host}` resolves to no address"))?
        }
    };
    if address.port() == 0 {
        return Err(format!(
            "server address `{text}` has port 0; give the server's real port"
        ));
    }
    Ok(address)
}
