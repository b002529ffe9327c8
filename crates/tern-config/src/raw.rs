//! Serde structs that mirror the TOML file one to one.
//!
//! Every table is `deny_unknown_fields`, so a misspelt key is an error naming the accepted keys
//! instead of a setting silently ignored (a classic source of "my timeout does nothing"). Values
//! that need checking beyond their TOML type stay loose here — integers as `i64`, durations and
//! sizes as text-or-integer, most keys optional — so that the validation stage can report every
//! problem at once, with its key path, instead of serde stopping at the first one.
//!
//! Keys that take two shapes (a bind is an address string or a table; a certificate is one path
//! or a `{ cert, key }` table; a bind's `tls` is `false` or a table) get small hand-written
//! visitors rather than `#[serde(untagged)]`, whose "did not match any variant" errors say
//! nothing useful and lose the key path.
//!
//! The `[[backend]]` tables live in `raw/backend.rs`.

use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

mod access_log;
mod backend;
mod client_auth;
mod compression;
mod condition;
mod control;
mod counters;
mod http_rules;
mod peers;
mod resolvers;
mod tcp_request;
mod userlist;

pub(crate) use access_log::{RawAccessLog, RawSyslog};
pub(crate) use backend::*;
pub(crate) use client_auth::RawClientAuth;
pub(crate) use compression::RawCompression;
pub(crate) use condition::{RawAclDef, RawAcls, RawRoute};
pub(crate) use control::{RawControl, RawMode};
pub(crate) use counters::RawTable;
pub(crate) use http_rules::{RawErrorPage, RawErrorPages, RawHttpRule};
pub(crate) use peers::RawPeers;
pub(crate) use resolvers::{RawCount, RawResolvers};
pub(crate) use tcp_request::{RawConnectionRule, RawTcpRequest, RawTcpRule};
pub(crate) use userlist::{RawUser, RawUserlist};

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    #[serde(default)]
    pub global: RawGlobal,
    #[serde(default)]
    pub frontend: Vec<RawFrontend>,
    #[serde(default)]
    pub backend: Vec<RawBackend>,
    pub access_log: Option<RawAccessLog>,
    #[serde(default)]
    pub control: RawControl,
    #[serde(default)]
    pub userlist: Vec<RawUserlist>,
    #[serde(default)]
    pub table: Vec<RawTable>,
    #[serde(default)]
    pub resolvers: Vec<RawResolvers>,
    #[serde(default)]
    pub peers: Vec<RawPeers>,
}

/// `[global]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGlobal {
    pub workers: Option<i64>,
    pub cpus: Option<Vec<i64>>,
    pub maxconn: Option<i64>,
    pub grace: Option<RawDuration>,
    pub hard_stop_after: Option<RawDuration>,
    pub backlog: Option<i64>,
    pub max_tls_handshake_rate: Option<i64>,
    pub max_tls_handshakes_per_source: Option<i64>,
    pub profiling: Option<bool>,
    pub handshake_offload: Option<bool>,
    pub max_conn_rate: Option<i64>,
    pub max_sess_rate: Option<i64>,
    pub crypto_batch: Option<RawCryptoBatch>,
}

/// `global.crypto_batch`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCryptoBatch {
    pub enabled: Option<bool>,
    pub size: Option<i64>,
    pub deadline: Option<RawDuration>,
}

/// One `[[frontend]]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFrontend {
    pub name: Option<String>,
    pub mode: Option<String>,
    pub bind: Option<Vec<RawBind>>,
    pub tls: Option<RawTls>,
    pub accept_proxy: Option<bool>,
    pub accept_proxy_from: Option<Vec<String>>,
    pub monitor_uri: Option<String>,
    pub default_backend: Option<String>,
    pub maxconn: Option<i64>,
    pub rate_limit_sessions: Option<i64>,
    pub x_forwarded_for: Option<bool>,
    pub x_forwarded_proto: Option<bool>,
    pub client_cert_headers: Option<bool>,
    pub connection_mode: Option<String>,
    pub acl: Option<RawAcls>,
    pub use_backend: Option<Vec<RawRoute>>,
    pub http_request: Option<Vec<RawHttpRule>>,
    pub http_response: Option<Vec<RawHttpRule>>,
    pub error_pages: Option<RawErrorPages>,
    pub compression: Option<RawCompression>,
    pub tcp_request: Option<RawTcpRequest>,
    pub unique_id_format: Option<String>,
    pub unique_id_header: Option<String>,
    pub capture_request_headers: Option<Vec<RawCapture>>,
    pub capture_response_headers: Option<Vec<RawCapture>>,
    pub log_format: Option<String>,
    #[serde(default)]
    pub timeouts: RawFrontendTimeouts,
    #[serde(default)]
    pub limits: RawLimits,
    #[serde(default)]
    pub http2: RawHttp2,
}

/// One of `capture_request_headers` / `capture_response_headers`: `{ name, len }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCapture {
    pub name: Option<String>,
    pub len: Option<i64>,
}

/// `frontend.http2`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHttp2 {
    pub cleartext: Option<bool>,
    pub max_concurrent_streams: Option<i64>,
    pub initial_window_size: Option<RawSize>,
    pub connection_window_size: Option<RawSize>,
    pub max_frame_size: Option<RawSize>,
    pub max_header_list_size: Option<RawSize>,
    pub max_concurrent_reset_streams: Option<i64>,
    pub max_pending_accept_reset_streams: Option<i64>,
    pub max_local_error_reset_streams: Option<i64>,
    pub max_client_resets: Option<i64>,
    pub websocket: Option<bool>,
    pub max_control_frames: Option<i64>,
}

/// `frontend.timeouts`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFrontendTimeouts {
    pub client: Option<RawDuration>,
    pub http_request: Option<RawDuration>,
    pub keep_alive: Option<RawDuration>,
    pub handshake: Option<RawDuration>,
    pub client_fin: Option<RawDuration>,
    pub tarpit: Option<RawDuration>,
}

/// `frontend.limits`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLimits {
    pub max_head_size: Option<RawSize>,
    pub max_headers: Option<i64>,
}

/// One item of `frontend.bind`: `"addr"` or `{ address = "addr", tls = ... }`.
#[derive(Debug)]
pub(crate) enum RawBind {
    Address(String),
    Table(RawBindTable),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBindTable {
    pub address: String,
    pub tls: Option<RawBindTls>,
    pub accept_proxy: Option<bool>,
    pub accept_proxy_from: Option<Vec<String>>,
}

/// A bind's own `tls`: `false` (plain HTTP) or its own settings table.
#[derive(Debug)]
pub(crate) enum RawBindTls {
    Enabled(bool),
    Settings(Box<RawTls>),
}

/// `tls = { certs = [...], ... }`, on a frontend or on one bind (validated in `validate/tls.rs`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTls {
    pub certs: Option<Vec<RawCert>>,
    pub cert_dir: Option<String>,
    pub strict_sni: Option<bool>,
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    pub ciphers: Option<Vec<String>>,
    pub suites: Option<Vec<String>>,
    pub groups: Option<Vec<String>>,
    pub sigalgs: Option<Vec<String>>,
    pub alpn: Option<Vec<String>>,
    pub prefer_server_ciphers: Option<bool>,
    pub resumption: Option<RawResumption>,
    pub client_auth: Option<RawClientAuth>,
    /// `"rustls"` (the default) or `"openssl"` (validated in `validate/tls_engine.rs`).
    pub engine: Option<String>,
    pub dh_param_file: Option<String>,
}

/// `tls.resumption`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResumption {
    pub tickets: Option<bool>,
    pub ticket_rotation: Option<RawDuration>,
    pub ticket_key_file: Option<String>,
    pub cache_size: Option<i64>,
}

/// One item of `tls.certs`: `"combined.pem"` or `{ cert = "...", key = "...", names, ocsp }`.
#[derive(Debug)]
pub(crate) enum RawCert {
    Combined(String),
    Split(RawCertPair),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCertPair {
    pub cert: String,
    /// Absent: `cert` holds the key too.
    pub key: Option<String>,
    pub names: Option<Vec<String>>,
    pub ocsp: Option<String>,
}

/// A TOML string or integer, kept as written for the validation stage to judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TextOrInt {
    Text(String),
    Int(i64),
}

/// A duration as written: should be a string with a unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawDuration(pub TextOrInt);

/// A size as written: integer bytes or a string with a `k`/`m` suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawSize(pub TextOrInt);

pub(crate) struct TextOrIntVisitor(pub &'static str);

impl Visitor<'_> for TextOrIntVisitor {
    type Value = TextOrInt;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(TextOrInt::Text(v.to_owned()))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(TextOrInt::Int(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(TextOrInt::Int)
            .map_err(|_| E::custom("integer out of range"))
    }
}

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextOrIntVisitor(
            "a duration string with a unit, like \"5s\"",
        ))
        .map(RawDuration)
    }
}

impl<'de> Deserialize<'de> for RawSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextOrIntVisitor(
            "a size: bytes (16384) or a string like \"16k\"",
        ))
        .map(RawSize)
    }
}

/// Visitor for "a string, or a table deserialized as `Tab`": `S` builds the value from the
/// string, `T` from the table.
struct StrOrTable<S, T, Tab, V> {
    expecting: &'static str,
    from_str: S,
    from_table: T,
    _types: std::marker::PhantomData<fn(Tab) -> V>,
}

impl<'de, S, T, Tab, V> Visitor<'de> for StrOrTable<S, T, Tab, V>
where
    S: FnOnce(String) -> V,
    T: FnOnce(Tab) -> V,
    Tab: Deserialize<'de>,
{
    type Value = V;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<V, E> {
        Ok((self.from_str)(v.to_owned()))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V, A::Error> {
        Tab::deserialize(MapAccessDeserializer::new(map)).map(self.from_table)
    }
}

fn str_or_table<S, T, Tab, V>(
    expecting: &'static str,
    from_str: S,
    from_table: T,
) -> StrOrTable<S, T, Tab, V> {
    StrOrTable {
        expecting,
        from_str,
        from_table,
        _types: std::marker::PhantomData,
    }
}

impl<'de> Deserialize<'de> for RawBind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(str_or_table(
            "an address string like \"127.0.0.1:8443\" or a table { address = \"...\", tls = ... }",
            RawBind::Address,
            RawBind::Table,
        ))
    }
}

impl<'de> Deserialize<'de> for RawCert {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(str_or_table(
            "a PEM file path (chain and key) or a table { cert = \"...\", key = \"...\", names = [...], ocsp = \"...\" }",
            RawCert::Combined,
            RawCert::Split,
        ))
    }
}

struct BindTlsVisitor;

impl<'de> Visitor<'de> for BindTlsVisitor {
    type Value = RawBindTls;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`false` (plain HTTP on this bind) or a table { certs = [...] }")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(RawBindTls::Enabled(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        RawTls::deserialize(MapAccessDeserializer::new(map))
            .map(|tls| RawBindTls::Settings(Box::new(tls)))
    }
}

impl<'de> Deserialize<'de> for RawBindTls {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BindTlsVisitor)
    }
}

/// The serde stage's failure: the first error, with its key path segments and source span.
#[derive(Debug)]
pub(crate) struct SerdeFailure {
    pub path: crate::locate::KeyPath,
    pub message: String,
    pub span: Option<std::ops::Range<usize>>,
}

/// Deserializes `text` into the raw structs, tracking the key path of the first error.
pub(crate) fn from_str(text: &str) -> Result<RawConfig, SerdeFailure> {
    let deserializer = toml::Deserializer::parse(text).map_err(|e| SerdeFailure {
        path: crate::locate::KeyPath::root(),
        message: e.message().to_owned(),
        span: e.span(),
    })?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let path = crate::locate::KeyPath::from_serde(e.path());
        let inner = e.into_inner();
        SerdeFailure {
            path,
            message: inner.message().to_owned(),
            span: inner.span(),
        }
    })
}
