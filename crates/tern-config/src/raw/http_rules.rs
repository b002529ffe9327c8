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
    /// `return`: the body read from this file.
    pub file: Option<String>,
    pub name: Option<String>,
    pub value: Option<String>,
    /// `replace-*`: the regex; `del-header`: the name pattern with `match = "reg"`.
    pub regex: Option<String>,
    /// `del-header`: how `name` is matched (`str`, `beg`, `end`, `sub`, `reg`).
    #[serde(rename = "match")]
    pub match_: Option<String>,
    /// `set-status`: the reason phrase.
    pub reason: Option<String>,
    /// `set-log-level`: a syslog level or `silent`.
    pub level: Option<String>,
    /// `redirect`: one of `location`, `prefix`, `scheme`, and its options.
    pub location: Option<String>,
    pub prefix: Option<String>,
    pub scheme: Option<String>,
    pub code: Option<i64>,
    pub drop_query: Option<bool>,
    pub append_slash: Option<bool>,
    pub set_cookie: Option<String>,
    pub clear_cookie: Option<String>,
    /// `auth`: the realm of the challenge (default: the frontend's or backend's name).
    pub realm: Option<String>,
    /// `track-sc0|1|2`: the sample whose entry is tracked, and the table (default: the one
    /// named like this frontend or backend).
    pub key: Option<String>,
    pub table: Option<String>,
    #[serde(rename = "if")]
    pub if_: Option<String>,
    pub unless: Option<String>,
}

/// `error_pages = { 503 = { errorfile = "..." }, 429 = { content_type = "...", body = "..." } }`:
/// one page, as written (checked and loaded in `validate/error_pages.rs`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawErrorPage {
    /// A whole HTTP response in a file (HAProxy's `errorfile`).
    pub errorfile: Option<String>,
    /// Or a page made of a content type and a body (HAProxy's `http-error`).
    pub content_type: Option<String>,
    pub body: Option<String>,
    pub file: Option<String>,
}

/// The `error_pages` table: status (as a key) → page.
pub(crate) type RawErrorPages = std::collections::BTreeMap<String, RawErrorPage>;
