//! `[[resolvers]]` and a server's DNS keys, as written (checked in `validate/resolvers.rs`).

use serde::de::Deserializer;
use serde::Deserialize;

use super::{RawDuration, RawSize, TextOrInt, TextOrIntVisitor};

/// One `[[resolvers]]` (HAProxy's `resolvers` section).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResolvers {
    pub name: Option<String>,
    /// `"ip:port"` (`"ip"` alone means port 53).
    pub nameservers: Option<Vec<String>>,
    pub parse_resolv_conf: Option<bool>,
    pub resolve_retries: Option<i64>,
    pub accepted_payload_size: Option<RawSize>,
    #[serde(default)]
    pub timeouts: RawResolverTimeouts,
    #[serde(default)]
    pub hold: RawHold,
}

/// `resolvers.timeouts` (HAProxy `timeout resolve|retry`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResolverTimeouts {
    pub resolve: Option<RawDuration>,
    pub retry: Option<RawDuration>,
}

/// `resolvers.hold` (HAProxy `hold <status> <period>`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHold {
    pub valid: Option<RawDuration>,
    pub nx: Option<RawDuration>,
    pub timeout: Option<RawDuration>,
    pub refused: Option<RawDuration>,
    pub other: Option<RawDuration>,
    pub obsolete: Option<RawDuration>,
}

/// A server template's `count`: `10` (slots 1 to 10) or `"1-10"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawCount(pub TextOrInt);

impl<'de> Deserialize<'de> for RawCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextOrIntVisitor(
            "a slot count (10) or a range of slot numbers (\"1-10\")",
        ))
        .map(RawCount)
    }
}
