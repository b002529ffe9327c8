//! Active health checks (`check`) and passive ones (`observe`).
//!
//! The backend's `check` table is a template for every server; a server's own `check` is
//! `false` (not checked), `true` (the backend's check, or a TCP check with defaults when the
//! backend has none, like HAProxy's bare `check`) or a table overriding single keys. The result
//! is resolved here into one complete [`Check`] per server, so the checker in the data path
//! never merges tables or applies defaults, and every mistake is reported with the path of the
//! key that caused it.
//!
//! Merging follows one rule: a key written in the server's table wins over the backend's, which
//! wins over the default. The check `type` is the server's, else the backend's, else `http` when
//! any HTTP key is written (the keys show the intent), else `tcp`. When a server sets its own
//! `type`, backend keys that type does not use (HTTP keys under `tcp`, `sni` under `http`) are
//! left behind rather than reported: the server said explicitly what it wants. Keys the server
//! writes itself must fit the type.

mod fields;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_servers;

use std::net::SocketAddr;
use std::time::Duration;

use self::fields::{CheckFields, KindName, Owner};
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{Check, CheckKind, Observe, ObserveOn, OnError, Server};
use crate::raw::{RawBackend, RawObserve, RawServerCheck};

/// HAProxy's `inter` default.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);
/// HAProxy's `rise` and `fall` defaults.
const DEFAULT_RISE: u32 = 2;
const DEFAULT_FALL: u32 = 3;

impl Checker<'_> {
    /// Sets `check` on each of `servers` (built from `raw.servers`, in the same order).
    pub(super) fn server_checks(
        &mut self,
        raw: &RawBackend,
        servers: &mut [Server],
        path: &KeyPath,
    ) {
        let base = raw
            .check
            .as_ref()
            .map(|table| self.check_fields(table, &path.key("check"), Owner::Backend));
        // The backend's check on its own, resolved once so that its mistakes are reported once;
        // servers that only follow it get a copy with their own address.
        let unknown = SocketAddr::from(([0, 0, 0, 0], 0));
        let template = base
            .as_ref()
            .map(|base| self.resolve_check(None, base, unknown));
        let base_port = base.as_ref().and_then(|base| base.port);
        let raw_servers = raw.servers.as_deref().unwrap_or_default();
        for (i, (raw_server, server)) in raw_servers.iter().zip(servers.iter_mut()).enumerate() {
            server.check = match (&raw_server.check, &template) {
                (Some(RawServerCheck::Enabled(false)), _) => None,
                (None | Some(RawServerCheck::Enabled(true)), Some(template)) => Some(Check {
                    address: with_port(server.address, base_port),
                    ..template.clone()
                }),
                (None, None) => None,
                (Some(RawServerCheck::Enabled(true)), None) => {
                    Some(self.resolve_check(None, &CheckFields::default(), server.address))
                }
                (Some(RawServerCheck::Table(table)), _) => {
                    let own_path = path.key("servers").index(i).key("check");
                    let own = self.check_fields(table, &own_path, Owner::Server);
                    Some(self.resolve_check(base.as_ref(), &own, server.address))
                }
            };
        }
    }

    /// The check described by `own` over `base` over the defaults, for a server at `server`.
    /// Only problems involving a key of `own` are reported: `base`'s were reported when it was
    /// resolved on its own.
    fn resolve_check(
        &mut self,
        base: Option<&CheckFields>,
        own: &CheckFields,
        server: SocketAddr,
    ) -> Check {
        let empty = CheckFields::default();
        let base = base.unwrap_or(&empty);
        let interval = own.interval.or(base.interval).unwrap_or(DEFAULT_INTERVAL);
        let timeout = own.timeout.or(base.timeout).unwrap_or(interval);
        if timeout > interval {
            let key = if own.timeout.is_some() {
                Some("timeout")
            } else {
                own.interval.is_some().then_some("interval")
            };
            if let Some(key) = key {
                self.issue(
                    &own.path.key(key),
                    format!(
                        "the check timeout ({}) is longer than the interval ({}): a check must \
                         end before the next one is due; lower `timeout` or raise `interval`",
                        humantime::format_duration(timeout),
                        humantime::format_duration(interval),
                    ),
                );
            }
        }
        Check {
            kind: self.check_kind(base, own),
            interval,
            fast_interval: own.fast_interval.or(base.fast_interval).unwrap_or(interval),
            down_interval: own.down_interval.or(base.down_interval).unwrap_or(interval),
            timeout,
            rise: own.rise.or(base.rise).unwrap_or(DEFAULT_RISE),
            fall: own.fall.or(base.fall).unwrap_or(DEFAULT_FALL),
            address: own
                .address
                .unwrap_or_else(|| with_port(server, own.port.or(base.port))),
        }
    }

    fn check_kind(&mut self, base: &CheckFields, own: &CheckFields) -> CheckKind {
        let own_http = own.http.keys();
        let kind = own.kind.or(base.kind).unwrap_or_else(|| {
            if own_http.is_empty() && base.http.keys().is_empty() {
                KindName::Tcp
            } else {
                KindName::Http
            }
        });
        let name = kind.as_str();
        if !kind.uses_http() {
            for key in own_http {
                self.issue(
                    &own.path.key(key),
                    format!(
                        "only applies with type = \"http\" or \"https\" (this check is \"{name}\")"
                    ),
                );
            }
        }
        if !kind.uses_tls() && own.sni.is_some() {
            self.issue(
                &own.path.key("sni"),
                format!("only applies with type = \"tls\" or \"https\" (this check is \"{name}\")"),
            );
        }
        let sni = || own.sni.clone().or(base.sni.clone());
        match kind {
            KindName::Tcp => CheckKind::Tcp,
            KindName::Http => CheckKind::Http(own.http.over(&base.http)),
            KindName::Tls => CheckKind::Tls {
                sni: sni(),
                http: None,
            },
            KindName::Https => CheckKind::Tls {
                sni: sni(),
                http: Some(own.http.over(&base.http)),
            },
        }
    }

    /// `observe`, which needs at least one server with an active check.
    pub(super) fn observe(
        &mut self,
        raw: Option<&RawObserve>,
        servers: &[Server],
        path: &KeyPath,
    ) -> Option<Observe> {
        let raw = raw?;
        let on_path = path.key("on");
        let on = match raw.on.as_deref() {
            Some("layer4") => ObserveOn::Layer4,
            Some("layer7") => ObserveOn::Layer7,
            Some(other) => {
                let message = format!("unknown value `{other}`; supported: `layer4`, `layer7`");
                self.issue(&on_path, message);
                ObserveOn::Layer4
            }
            None => {
                self.issue(
                    &on_path,
                    "missing key `on`: \"layer4\" (connection errors) or \"layer7\" (also 5xx \
                     and invalid responses)",
                );
                ObserveOn::Layer4
            }
        };
        let error_limit =
            self.int_in(&path.key("error_limit"), raw.error_limit, 1..=1000, 10) as u32;
        let on_error = match raw.on_error.as_deref() {
            None | Some("fail-check") => OnError::FailCheck,
            Some("fastinter") => OnError::FastInterval,
            Some("sudden-death") => OnError::SuddenDeath,
            Some("mark-down") => OnError::MarkDown,
            Some(other) => {
                self.issue(
                    &path.key("on_error"),
                    format!(
                        "unknown value `{other}`; supported: `fastinter`, `fail-check`, \
                         `sudden-death`, `mark-down`"
                    ),
                );
                OnError::FailCheck
            }
        };
        if !servers.is_empty() && servers.iter().all(|s| s.check.is_none()) {
            self.issue(
                path,
                "observe needs active checks (`check`) to bring servers back up; add `check` to \
                 the backend or to its servers",
            );
        }
        Some(Observe {
            on,
            error_limit,
            on_error,
        })
    }
}

/// `address` with its port replaced by `port`, if any.
fn with_port(mut address: SocketAddr, port: Option<u16>) -> SocketAddr {
    if let Some(port) = port {
        address.set_port(port);
    }
    address
}
