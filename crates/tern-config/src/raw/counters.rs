//! `[[table]]`: a counter table as written (checked in `validate/counters.rs`).

use serde::Deserialize;

use super::{RawDuration, RawSize};

/// `[[table]] name = "per_ip", type = "ip", size = "100k", expire = "30s",
/// store = ["conn_cur", "http_req_rate(10s)"]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTable {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub size: Option<RawSize>,
    pub expire: Option<RawDuration>,
    pub store: Option<Vec<String>>,
    /// The `[[peers]]` section the table's entries are shared with.
    pub peers: Option<String>,
}
