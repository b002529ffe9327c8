//! Header rules (`http_request`, `http_response`): HAProxy's `http-request` and `http-response`
//! actions tern supports, each with its condition.
//!
//! Rules run in order and every rule whose condition holds acts; `deny` and `return` answer
//! the request and end the evaluation. Header values are HAProxy log-format strings, parsed at
//! load time into literal pieces and sample fetches ([`ValueFormat`]), so the data path only
//! copies bytes.

use super::condition::{Condition, Fetch};

/// The statuses a `deny` rule may answer with: those HAProxy has an error page for (tern's
/// pages are HAProxy's).
pub const DENY_STATUSES: &[u16] = &[
    200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504,
];

/// One rule of `http_request` or `http_response`.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRule {
    pub action: HttpAction,
    pub condition: Condition,
}

/// What a rule does when its condition holds.
#[derive(Debug, Clone, PartialEq)]
pub enum HttpAction {
    /// Answer with tern's error page of `status` (HAProxy's `deny [deny_status N]`); requests
    /// only.
    Deny { status: u16 },
    /// Answer with `status`, `content_type` and `body` (HAProxy's `return`); requests only.
    Return {
        status: u16,
        content_type: Option<String>,
        body: String,
    },
    /// Remove every field `name`, then add `name: value` (`set-header`).
    SetHeader { name: String, value: ValueFormat },
    /// Add `name: value`, keeping existing fields (`add-header`).
    AddHeader { name: String, value: ValueFormat },
    /// Remove every field `name` (`del-header`).
    DelHeader { name: String },
}

/// A header value: literal text and samples, concatenated (a HAProxy log-format string
/// restricted to `%%` and `%[fetch]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValueFormat {
    pub pieces: Vec<Piece>,
}

/// One piece of a [`ValueFormat`].
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Text copied as it is (no CR or LF: refused at load time).
    Text(String),
    /// A sample of the request or its connection (`%[src]`). For `Fetch::Header` the value is
    /// the last comma-separated value of the last such field, as HAProxy's `hdr()` gives in a
    /// log-format string; in `http_response` rules it reads the response's fields.
    Fetch(Fetch),
}

impl ValueFormat {
    /// A value of literal text only.
    pub fn text(text: &str) -> Self {
        Self {
            pieces: vec![Piece::Text(text.to_owned())],
        }
    }
}
