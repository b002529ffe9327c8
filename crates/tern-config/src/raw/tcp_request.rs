//! `frontend.tcp_request`: HAProxy's `tcp-request inspect-delay` and `tcp-request content`, as
//! written (checked in `validate/tcp_request.rs`).

use serde::Deserialize;

use super::RawDuration;

/// `frontend.tcp_request = { inspect_delay = "5s", content = [ ... ] }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTcpRequest {
    pub inspect_delay: Option<RawDuration>,
    pub content: Option<Vec<RawTcpRule>>,
    pub connection: Option<Vec<RawConnectionRule>>,
}

/// One connection rule: `{ action = "track-sc0", key = "src", table = "per_ip" }`,
/// `{ action = "reject", if = "{ sc0_conn_cur gt 10 }" }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConnectionRule {
    pub action: Option<String>,
    pub key: Option<String>,
    pub table: Option<String>,
    #[serde(rename = "if")]
    pub if_: Option<String>,
    pub unless: Option<String>,
}

/// One content rule: `{ action = "accept", if = "{ req.ssl_hello_type 1 }" }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTcpRule {
    pub action: Option<String>,
    #[serde(rename = "if")]
    pub if_: Option<String>,
    pub unless: Option<String>,
}
