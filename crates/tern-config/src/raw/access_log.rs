//! `[access_log]`, as written (checked in `validate/access_log.rs`).

use serde::Deserialize;

/// `[access_log]`: where request lines go and in which format.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAccessLog {
    pub target: Option<String>,
    pub format: Option<String>,
    pub buffer: Option<i64>,
    pub frontends: Option<Vec<String>>,
    pub syslog: Option<RawSyslog>,
}

/// `access_log.syslog = { framing, facility, tag }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSyslog {
    pub framing: Option<String>,
    pub facility: Option<String>,
    pub tag: Option<String>,
}
