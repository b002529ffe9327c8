//! Header rules (`http_request`, `http_response`): HAProxy's `http-request` and `http-response`
//! actions tern supports, each with its condition.
//!
//! Rules run in order and every rule whose condition holds acts; `deny` and `return` answer
//! the request and end the evaluation. Header values are HAProxy log-format strings, parsed at
//! load time into literal pieces and sample fetches ([`ValueFormat`]), so the data path only
//! copies bytes.

use super::condition::{Condition, Fetch, Regex};
use super::counters::Track;
pub use super::rewrite::{LinePart, NamePattern, Redirect, RedirectTo, REDIRECT_CODES};

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
    /// Answer with `status`, `content_type` and `body` (HAProxy's `return`, the body given
    /// or read from a file at load time); requests only.
    Return {
        status: u16,
        content_type: Option<String>,
        body: Vec<u8>,
    },
    /// Remove every field `name`, then add `name: value` (`set-header`).
    SetHeader { name: String, value: ValueFormat },
    /// Add `name: value`, keeping existing fields (`add-header`).
    AddHeader { name: String, value: ValueFormat },
    /// Remove every field `name` (`del-header`).
    DelHeader { name: String },
    /// Remove every field whose name matches (`del-header NAME -m beg|end|sub|reg`).
    DelHeaders { pattern: NamePattern },
    /// Answer with a redirection (`redirect`, `http-request redirect`); requests only.
    Redirect(Box<Redirect>),
    /// Replace a part of the request line with `value` (`set-method`, `set-path`,
    /// `set-query`, `set-uri`); requests only.
    SetLine { part: LinePart, value: ValueFormat },
    /// When `regex` matches the part (`replace-path`: the path, `replace-uri`: the target),
    /// the part becomes `with`, whose `\N` are the regex's groups; requests only.
    ReplaceLine {
        part: LinePart,
        regex: Regex,
        with: ValueFormat,
    },
    /// Each field `name` (or, with `each_value`, each comma-separated value of it) that
    /// `regex` matches becomes `with`, whose `\N` are the regex's groups (`replace-header`,
    /// `replace-value`).
    ReplaceHeader {
        name: String,
        regex: Regex,
        with: ValueFormat,
        each_value: bool,
    },
    /// Answer the client with this status (and reason) instead of the server's
    /// (`http-response set-status`); responses only.
    SetStatus { status: u16, reason: Option<String> },
    /// Answer 401 with `WWW-Authenticate: Basic realm="R"` (HAProxy's `http-request auth
    /// [realm R]`; the realm defaults to the frontend's or backend's name); requests only.
    Auth { realm: String },
    /// Set variable `name` (`txn.x`, `sess.x`, ...) to `value` (`set-var`, `set-var-fmt`).
    SetVar { name: String, value: ValueFormat },
    /// The syslog severity of this request's access log line (0 `emerg` to 7 `debug`), or
    /// `None` for no line at all (`silent`) (`set-log-level`).
    SetLogLevel { severity: Option<u8> },
    /// Track the entry of a key in a counter table (`track-sc0|1|2 KEY [table T]`); requests
    /// only.
    Track(Track),
    /// Hold the request for the frontend's `timeouts.tarpit`, then answer tern's page of
    /// `status` and close (`tarpit [deny_status N]`); requests only.
    Tarpit { status: u16 },
    /// Close the connection at once without an answer (`reject`); requests only.
    Reject,
    /// Close the connection without an answer and with a reset, sending nothing more
    /// (`silent-drop`); requests only.
    SilentDrop,
}

/// A header value: literal text and samples, concatenated (a HAProxy log-format string
/// restricted to `%%` and `%[fetch]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValueFormat {
    pub pieces: Vec<Piece>,
}

/// One piece of a [`ValueFormat`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text copied as it is (no CR or LF: refused at load time).
    Text(String),
    /// A sample of the request or its connection (`%[src]`). For `Fetch::Header` the value is
    /// the last comma-separated value of the last such field, as HAProxy's `hdr()` gives in a
    /// log-format string; in `http_response` rules it reads the response's fields.
    Fetch(Fetch),
}

impl HttpAction {
    /// Every value the action formats (to know which samples rules read).
    pub fn values(&self) -> impl Iterator<Item = &ValueFormat> {
        let (one, two) = match self {
            HttpAction::SetHeader { value, .. }
            | HttpAction::AddHeader { value, .. }
            | HttpAction::SetLine { value, .. }
            | HttpAction::SetVar { value, .. } => (Some(value), None),
            HttpAction::ReplaceLine { with, .. } | HttpAction::ReplaceHeader { with, .. } => {
                (Some(with), None)
            }
            HttpAction::Redirect(r) => match &r.to {
                RedirectTo::Location(v) | RedirectTo::Prefix(v) | RedirectTo::Scheme(v) => {
                    (Some(v), None)
                }
            },
            _ => (None, None),
        };
        one.into_iter().chain(two)
    }
}

impl ValueFormat {
    /// A value of literal text only.
    pub fn text(text: &str) -> Self {
        Self {
            pieces: vec![Piece::Text(text.to_owned())],
        }
    }
}
