//! The raw `[[backend]]` tables: servers, health checks, persistence and protection.
//!
//! Same rules as the rest of the raw stage: `deny_unknown_fields` everywhere, loose value types,
//! nearly every key optional so the validation stage can report all problems with their paths.
//! Three keys take several shapes and get hand-written visitors: a server's `check` (`true`,
//! `false` or a table of overrides), `tls` (the same shapes) and a check's `expect_status` (a
//! code, a class or a list).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::{RawDuration, TextOrInt, TextOrIntVisitor};

/// One `[[backend]]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBackend {
    pub name: Option<String>,
    pub mode: Option<String>,
    pub acl: Option<super::RawAcls>,
    pub http_request: Option<Vec<super::RawHttpRule>>,
    pub http_response: Option<Vec<super::RawHttpRule>>,
    pub error_pages: Option<super::RawErrorPages>,
    pub compression: Option<super::RawCompression>,
    pub balance: Option<String>,
    pub hash_type: Option<String>,
    pub hash_balance_factor: Option<i64>,
    pub ewma_decay: Option<RawDuration>,
    #[serde(default)]
    pub timeouts: RawBackendTimeouts,
    #[serde(default)]
    pub pool: RawPool,
    pub retries: Option<i64>,
    pub redispatch: Option<bool>,
    pub connection_mode: Option<String>,
    pub slowstart: Option<RawDuration>,
    pub queue: Option<RawQueue>,
    pub cookie: Option<RawCookie>,
    pub stick: Option<RawStick>,
    pub observe: Option<RawObserve>,
    pub check: Option<RawCheck>,
    /// TLS to every server, unless a server says otherwise.
    pub tls: Option<RawServerTls>,
    /// The HTTP version of every server, unless a server says otherwise.
    pub proto: Option<String>,
    pub servers: Option<Vec<RawServer>>,
}

/// `backend.timeouts`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBackendTimeouts {
    pub connect: Option<RawDuration>,
    pub server: Option<RawDuration>,
    pub tunnel: Option<RawDuration>,
    pub server_fin: Option<RawDuration>,
}

/// `backend.pool`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPool {
    pub max_idle_per_server: Option<i64>,
    pub idle_timeout: Option<RawDuration>,
}

/// `backend.queue`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQueue {
    pub max: Option<i64>,
    pub timeout: Option<RawDuration>,
}

/// `backend.cookie`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCookie {
    pub name: Option<String>,
    pub mode: Option<String>,
    pub indirect: Option<bool>,
    pub nocache: Option<bool>,
    pub postonly: Option<bool>,
    pub httponly: Option<bool>,
    pub secure: Option<bool>,
    pub domain: Option<String>,
    pub max_age: Option<RawDuration>,
    /// Server name → cookie value.
    pub values: Option<BTreeMap<String, String>>,
}

/// `backend.stick`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStick {
    pub on: Option<String>,
    pub size: Option<i64>,
    pub expire: Option<RawDuration>,
    /// The `[[peers]]` section the table's entries are shared with.
    pub peers: Option<String>,
}

/// `backend.observe`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawObserve {
    pub on: Option<String>,
    pub error_limit: Option<i64>,
    pub on_error: Option<String>,
}

/// A `check` table, on a backend (for every server) or on one server (overrides).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCheck {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub interval: Option<RawDuration>,
    pub fast_interval: Option<RawDuration>,
    pub down_interval: Option<RawDuration>,
    pub timeout: Option<RawDuration>,
    pub rise: Option<i64>,
    pub fall: Option<i64>,
    pub port: Option<i64>,
    pub address: Option<String>,
    pub sni: Option<String>,
    pub method: Option<String>,
    pub path: Option<String>,
    pub host: Option<String>,
    pub expect_status: Option<RawStatuses>,
    pub expect_body: Option<String>,
    /// `"h1"` or `"h2"` (HAProxy `check-proto h2`); default: the server's `proto`.
    pub proto: Option<String>,
}

/// One item of `backend.servers`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    pub name: Option<String>,
    pub address: Option<String>,
    pub weight: Option<i64>,
    pub backup: Option<bool>,
    pub maxconn: Option<i64>,
    pub check: Option<RawServerCheck>,
    pub tls: Option<RawServerTls>,
    /// Starts in maintenance (HAProxy `disabled`).
    pub disabled: Option<bool>,
    /// `"v1"` or `"v2"`: a PROXY protocol header opens every connection (HAProxy `send-proxy`).
    pub proxy_protocol: Option<String>,
    /// A CRC32C TLV in each v2 header (HAProxy `proxy-v2-options crc32c`).
    pub proxy_v2_crc32c: Option<bool>,
    /// TLVs formatted per connection in each v2 header (HAProxy `set-proxy-v2-tlv-fmt`).
    pub proxy_v2_tlvs: Option<Vec<RawProxyV2Tlv>>,
    /// `"h1"` (the default) or `"h2"` (HAProxy `proto h2`).
    pub proto: Option<String>,
    /// The `[[resolvers]]` that finds the address by DNS (HAProxy `resolvers`).
    pub resolvers: Option<String>,
    /// `"ipv4"` or `"ipv6"` (HAProxy `resolve-prefer`).
    pub resolve_prefer: Option<String>,
    /// Where the first address comes from: `"last"`, `"libc"`, `"none"` or an IP address, in
    /// order (HAProxy `init-addr`).
    pub init_addr: Option<Vec<String>>,
    /// Makes this item a template of that many slots (HAProxy `server-template`): `name` is
    /// the prefix of the slots' names.
    pub count: Option<super::RawCount>,
    /// `"auto"` (the default), `"h1"` or `"h2"`: the protocol of WebSockets (HAProxy `ws`).
    pub ws: Option<String>,
}

/// One of a server's `proxy_v2_tlvs`: `{ id = 0xE1, format = "%[fc_pp_tlv(0xE1)]" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProxyV2Tlv {
    /// The TLV's type: a number, or a name HAProxy's `fc_pp_tlv` knows (`"UNIQUE_ID"`).
    pub id: Option<RawTlvId>,
    pub format: Option<String>,
}

/// A TLV type as written: an integer, or a string (a name, or a number in text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawTlvId(pub TextOrInt);

impl<'de> Deserialize<'de> for RawTlvId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextOrIntVisitor(
            "a TLV type: a number (0xE1) or a name (\"UNIQUE_ID\")",
        ))
        .map(RawTlvId)
    }
}

/// `tls` of a server or backend: `true`/`false`, or a table of settings.
#[derive(Debug)]
pub(crate) enum RawServerTls {
    Enabled(bool),
    Table(Box<RawTlsClient>),
}

/// A `tls` table of a server or backend (TLS from tern to servers).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTlsClient {
    pub verify: Option<String>,
    pub ca: Option<String>,
    pub sni: Option<String>,
    pub alpn: Option<Vec<String>>,
    pub cert: Option<String>,
    pub session_reuse: Option<bool>,
}

struct ServerTlsVisitor;

impl<'de> Visitor<'de> for ServerTlsVisitor {
    type Value = RawServerTls;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`true`, `false` or a table of TLS settings { verify = \"none\", ... }")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(RawServerTls::Enabled(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        RawTlsClient::deserialize(MapAccessDeserializer::new(map))
            .map(|table| RawServerTls::Table(Box::new(table)))
    }
}

impl<'de> Deserialize<'de> for RawServerTls {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ServerTlsVisitor)
    }
}

/// A server's `check`: `true`/`false`, or a table overriding the backend's check.
#[derive(Debug)]
pub(crate) enum RawServerCheck {
    Enabled(bool),
    Table(Box<RawCheck>),
}

/// `expect_status` as written: one item, or a list of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RawStatuses {
    One(TextOrInt),
    List(Vec<TextOrInt>),
}

struct ServerCheckVisitor;

impl<'de> Visitor<'de> for ServerCheckVisitor {
    type Value = RawServerCheck;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`true`, `false` or a table of check settings { port = 9000, ... }")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(RawServerCheck::Enabled(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        RawCheck::deserialize(MapAccessDeserializer::new(map))
            .map(|table| RawServerCheck::Table(Box::new(table)))
    }
}

impl<'de> Deserialize<'de> for RawServerCheck {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ServerCheckVisitor)
    }
}

const STATUS_EXPECTING: &str = "a status code (200), a class (\"2xx\") or a list of them";

/// One element of an `expect_status` list.
struct RawStatus(TextOrInt);

impl<'de> Deserialize<'de> for RawStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextOrIntVisitor(STATUS_EXPECTING))
            .map(RawStatus)
    }
}

struct StatusesVisitor;

impl<'de> Visitor<'de> for StatusesVisitor {
    type Value = RawStatuses;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(STATUS_EXPECTING)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        TextOrIntVisitor(STATUS_EXPECTING)
            .visit_str(v)
            .map(RawStatuses::One)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(RawStatuses::One(TextOrInt::Int(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        TextOrIntVisitor(STATUS_EXPECTING)
            .visit_u64(v)
            .map(RawStatuses::One)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        // Bounded by the input: the deserializer yields each written element once.
        while let Some(RawStatus(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(RawStatuses::List(items))
    }
}

impl<'de> Deserialize<'de> for RawStatuses {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StatusesVisitor)
    }
}
