//! `http_request = [...]` and `http_response = [...]`: header rules as written (checked in
//! `validate/http_rules.rs`).
//!
//! One table shape for every action, so that a key given to the wrong action (`status` on a
//! `set-header`) is reported by the validation stage with its path rather than as an unknown
//! field of some variant.

use serde::Deserialize;

/// One rule: `{ action = "set-header", name = "X-A", value = "1", if = "cond" }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHttpRule {
    pub action: Option<String>,
    pub status: Option<i64>,
    pub content_type: Option<String>,
    pub body: Option<String>,
    pub name: Option<String>,
    pub value: Option<String>,
    #[serde(rename = "if")]
    pub if_: Option<String>,
    pub unless: Option<String>,
}
