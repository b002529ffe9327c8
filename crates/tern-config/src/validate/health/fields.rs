//! One `check` table read on its own: every key checked for its type, range and form, nothing
//! defaulted yet.
//!
//! Defaults and the rules between keys (HTTP keys need an HTTP type, `timeout` within
//! `interval`) wait for the merge in `health.rs`, because a server's table may lean on the
//! backend's: `{ port = 9001 }` on a server is only meaningful next to the backend's `path`.
//! Reading each table once here also means a mistake in the backend's table is reported once,
//! not once per server that inherits it.

use std::net::SocketAddr;
use std::time::Duration;

use super::super::backend::resolve_server_address;
use super::super::{is_token_byte, Checker};
use crate::locate::KeyPath;
use crate::model::{HttpCheck, StatusRange};
use crate::raw::{RawCheck, RawStatuses, TextOrInt};

/// Statuses that pass when `expect_status` is not given: 2xx and 3xx, as HAProxy's `httpchk`.
const DEFAULT_EXPECT: StatusRange = StatusRange {
    low: 200,
    high: 399,
};

/// Accepted values of `type`, for error messages.
const KIND_NAMES: &str = "`tcp`, `http`, `tls`, `https`";

/// The `type` of a check as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KindName {
    Tcp,
    Http,
    Tls,
    Https,
}

impl KindName {
    pub(super) fn uses_http(self) -> bool {
        matches!(self, Self::Http | Self::Https)
    }

    pub(super) fn uses_tls(self) -> bool {
        matches!(self, Self::Tls | Self::Https)
    }

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Tcp => "tcp",
            Self::Http => "http",
            Self::Tls => "tls",
            Self::Https => "https",
        }
    }
}

/// Which table is being read: only a server's own table may name an `address`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Owner {
    Backend,
    Server,
}

/// The validated keys of one `check` table; `None` means "not written here".
#[derive(Debug, Clone, Default)]
pub(super) struct CheckFields {
    /// Path of the table, for issues found when tables are merged.
    pub path: KeyPath,
    pub kind: Option<KindName>,
    pub interval: Option<Duration>,
    pub fast_interval: Option<Duration>,
    pub down_interval: Option<Duration>,
    pub timeout: Option<Duration>,
    pub rise: Option<u32>,
    pub fall: Option<u32>,
    pub port: Option<u16>,
    pub address: Option<SocketAddr>,
    pub sni: Option<String>,
    pub http: HttpFields,
}

/// The HTTP keys of one `check` table.
#[derive(Debug, Clone, Default)]
pub(super) struct HttpFields {
    pub method: Option<String>,
    pub path: Option<String>,
    pub host: Option<String>,
    pub expect_status: Option<Vec<StatusRange>>,
    pub expect_body: Option<String>,
    /// `proto`: true for `"h2"`.
    pub h2: Option<bool>,
}

impl HttpFields {
    /// Names of the keys written in this table.
    pub(super) fn keys(&self) -> Vec<&'static str> {
        [
            ("method", self.method.is_some()),
            ("path", self.path.is_some()),
            ("host", self.host.is_some()),
            ("expect_status", self.expect_status.is_some()),
            ("expect_body", self.expect_body.is_some()),
            ("proto", self.h2.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
        .collect()
    }

    /// The HTTP check these keys describe, each key taken from `self`, else `base`, else its
    /// default.
    pub(super) fn over(&self, base: &HttpFields) -> HttpCheck {
        let pick = |own: &Option<String>, base: &Option<String>| own.clone().or(base.clone());
        HttpCheck {
            method: pick(&self.method, &base.method).unwrap_or_else(|| "GET".to_owned()),
            path: pick(&self.path, &base.path).unwrap_or_else(|| "/".to_owned()),
            host: pick(&self.host, &base.host),
            expect_status: self
                .expect_status
                .clone()
                .or(base.expect_status.clone())
                .unwrap_or_else(|| vec![DEFAULT_EXPECT]),
            expect_body: pick(&self.expect_body, &base.expect_body),
            h2: self.h2.or(base.h2).unwrap_or(false),
        }
    }
}

impl Checker<'_> {
    /// Reads one `check` table at `path`.
    pub(super) fn check_fields(
        &mut self,
        raw: &RawCheck,
        path: &KeyPath,
        owner: Owner,
    ) -> CheckFields {
        let int = |checker: &mut Self, key: &str, value, max| {
            checker
                .opt_int_in(&path.key(key), value, 1..=max)
                .map(|v| v as u32)
        };
        let rise = int(self, "rise", raw.rise, 1000);
        let fall = int(self, "fall", raw.fall, 1000);
        let port = int(self, "port", raw.port, 65_535).map(|p| p as u16);
        CheckFields {
            path: path.clone(),
            kind: raw.kind.as_deref().and_then(|k| self.kind(k, path)),
            interval: self.opt_duration(&path.key("interval"), raw.interval.as_ref()),
            fast_interval: self
                .opt_duration(&path.key("fast_interval"), raw.fast_interval.as_ref()),
            down_interval: self
                .opt_duration(&path.key("down_interval"), raw.down_interval.as_ref()),
            timeout: self.opt_duration(&path.key("timeout"), raw.timeout.as_ref()),
            rise,
            fall,
            port,
            address: self.check_address(raw, path, owner),
            sni: raw
                .sni
                .as_ref()
                .map(|sni| self.text(path, "sni", sni, sni_problem)),
            http: HttpFields {
                method: raw
                    .method
                    .as_ref()
                    .map(|m| self.text(path, "method", m, method_problem)),
                path: raw
                    .path
                    .as_ref()
                    .map(|p| self.text(path, "path", p, path_problem)),
                host: raw
                    .host
                    .as_ref()
                    .map(|h| self.text(path, "host", h, host_problem)),
                expect_status: raw
                    .expect_status
                    .as_ref()
                    .map(|s| self.statuses(s, &path.key("expect_status"))),
                expect_body: raw.expect_body.as_ref().map(|b| {
                    self.text(path, "expect_body", b, |b| {
                        b.is_empty().then(|| "must not be empty".to_owned())
                    })
                }),
                h2: raw.proto.as_deref().and_then(|p| self.check_proto(p, path)),
            },
        }
    }

    /// `proto`: `"h1"` or `"h2"` (true).
    fn check_proto(&mut self, text: &str, path: &KeyPath) -> Option<bool> {
        match text {
            "h1" => Some(false),
            "h2" => Some(true),
            other => {
                self.issue(
                    &path.key("proto"),
                    format!("unknown check protocol `{other}`; supported: `h1`, `h2`"),
                );
                None
            }
        }
    }

    fn kind(&mut self, text: &str, path: &KeyPath) -> Option<KindName> {
        let kind = match text {
            "tcp" => KindName::Tcp,
            "http" => KindName::Http,
            "tls" => KindName::Tls,
            "https" => KindName::Https,
            other => {
                self.issue(
                    &path.key("type"),
                    format!("unknown check type `{other}`; supported: {KIND_NAMES}"),
                );
                return None;
            }
        };
        Some(kind)
    }

    /// `address`: only on a server's own table, and not together with `port`.
    fn check_address(
        &mut self,
        raw: &RawCheck,
        path: &KeyPath,
        owner: Owner,
    ) -> Option<SocketAddr> {
        let text = raw.address.as_deref()?;
        let address_path = path.key("address");
        if owner == Owner::Backend {
            self.issue(
                &address_path,
                "only accepted in a server's own `check` table: here it would send every \
                 server's check to one place; use `port` on the backend, or `address` per server",
            );
            return None;
        }
        if raw.port.is_some() {
            self.issue(
                &path.key("port"),
                "`address` already gives the port of checks; remove `port` or put it in `address`",
            );
        }
        resolve_server_address(text)
            .map_err(|message| self.issue(&address_path, message))
            .ok()
    }

    /// A string key checked by `problem` (which returns what is wrong with it, if anything);
    /// kept as written either way so its presence still counts when tables are merged.
    fn text(
        &mut self,
        table: &KeyPath,
        key: &str,
        value: &str,
        problem: impl FnOnce(&str) -> Option<String>,
    ) -> String {
        if let Some(message) = problem(value) {
            self.issue(&table.key(key), message);
        }
        value.to_owned()
    }

    fn statuses(&mut self, raw: &RawStatuses, path: &KeyPath) -> Vec<StatusRange> {
        match raw {
            RawStatuses::One(item) => vec![parse_status(item)
                .map_err(|message| self.issue(path, message))
                .unwrap_or(DEFAULT_EXPECT)],
            RawStatuses::List(items) => {
                if items.is_empty() {
                    self.issue(
                        path,
                        "must list at least one status (or leave `expect_status` out)",
                    );
                }
                let mut ranges = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match parse_status(item) {
                        Ok(range) => ranges.push(range),
                        Err(message) => self.issue(&path.index(i), message),
                    }
                }
                ranges
            }
        }
    }
}

/// One `expect_status` item: a code from 100 to 599, or a class from `"2xx"` to `"5xx"`.
pub(super) fn parse_status(item: &TextOrInt) -> Result<StatusRange, String> {
    match item {
        TextOrInt::Int(code @ 100..=599) => {
            let code = *code as u16;
            Ok(StatusRange {
                low: code,
                high: code,
            })
        }
        TextOrInt::Int(code) => Err(format!(
            "{code} is not an HTTP status: write a code from 100 to 599 or a class like \"2xx\""
        )),
        TextOrInt::Text(text) => match text.as_bytes() {
            [digit @ b'2'..=b'5', b'x' | b'X', b'x' | b'X'] => {
                let low = u16::from(digit - b'0') * 100;
                Ok(StatusRange {
                    low,
                    high: low + 99,
                })
            }
            _ => Err(format!(
                "`{text}` is not a status class: write \"2xx\", \"3xx\", \"4xx\" or \"5xx\", \
                 or a code like 200 (a number, not a string)"
            )),
        },
    }
}

fn method_problem(method: &str) -> Option<String> {
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Some(format!(
            "`{method}` is not an HTTP method (a token such as GET or HEAD)"
        ));
    }
    None
}

fn path_problem(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return Some(format!("`{path}` must start with `/`"));
    }
    if path.bytes().any(|b| !b.is_ascii_graphic()) {
        return Some(format!(
            "`{}` contains a space or control character; percent-encode it",
            path.escape_debug()
        ));
    }
    None
}

fn host_problem(host: &str) -> Option<String> {
    if host.is_empty() {
        return Some("must not be empty (leave `host` out to send the check address)".to_owned());
    }
    if host.bytes().any(|b| !b.is_ascii_graphic()) {
        return Some(format!(
            "`{}` contains a space or control character",
            host.escape_debug()
        ));
    }
    None
}

/// A DNS name: dot-separated labels of letters, digits and `-`.
fn sni_problem(sni: &str) -> Option<String> {
    let valid = !sni.is_empty()
        && sni.len() <= 253
        && sni.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    (!valid).then(|| {
        format!(
            "`{}` is not a DNS name (letters, digits, `-` and dots, e.g. \"app.example\")",
            sni.escape_debug()
        )
    })
}
