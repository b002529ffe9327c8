//! `http_request` and `http_response` rules of a frontend or backend.
//!
//! Every mistake is refused at load time with its key path: an unknown action, a key that does
//! not apply to the action (`status` on `set-header`), a status tern has no page for, a header
//! name that is not a token, a value with a line break, a `%` sequence tern does not expand.
//!
//! Rules may not touch the fields tern manages to keep a message readable one way only:
//! framing (`Content-Length`, `Transfer-Encoding`) and hop-by-hop fields (`Connection`,
//! `Keep-Alive`, `Proxy-Connection`, `TE`, `Upgrade`), and on requests `Expect` (tern answers
//! it). HAProxy lets a rule break framing; tern refuses. On requests `Host` may only be
//! replaced (`set-header`): deleting it, or adding a second one, makes a request servers must
//! refuse.
//!
//! Response rules run once the request head is gone from the buffer, so their conditions and
//! values may use only connection samples and the response's own fields (`hdr()` reads the
//! response there, as in HAProxy); `path`, `url`, `method` and the like are refused, as
//! HAProxy refuses them in `http-response` rules.

mod redirect;
mod rewrite;
pub(super) mod value;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_rewrite;

use super::condition::Acls;
use super::{is_token_byte, Checker};
use crate::locate::KeyPath;
use crate::model::{Fetch, HttpAction, HttpRule, Piece, ValueFormat, DENY_STATUSES};
use crate::raw::RawHttpRule;

/// Fields no rule may set, add or delete: tern writes or removes them itself.
const MANAGED: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "upgrade",
];

/// Which message a rule list acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Request,
    Response,
}

impl Side {
    fn key(self) -> &'static str {
        match self {
            Side::Request => "http_request",
            Side::Response => "http_response",
        }
    }
}

impl Checker<'_> {
    /// The rules of `http_request` or `http_response` (`side`), at `path`.
    pub(super) fn http_rules(
        &mut self,
        raw: Option<&[RawHttpRule]>,
        acls: &Acls,
        side: Side,
        path: &KeyPath,
    ) -> Vec<HttpRule> {
        let mut rules = Vec::new();
        for (i, rule) in raw.unwrap_or_default().iter().enumerate() {
            let at = path.index(i);
            let condition =
                self.rule_condition(acls, rule.if_.as_deref(), rule.unless.as_deref(), &at);
            if side == Side::Response {
                let key = if rule.if_.is_some() { "if" } else { "unless" };
                self.response_samples(condition.fetches(), &at.key(key));
            }
            if let Some(action) = self.http_action(rule, side, &at) {
                rules.push(HttpRule { action, condition });
            }
        }
        rules
    }

    fn http_action(&mut self, rule: &RawHttpRule, side: Side, at: &KeyPath) -> Option<HttpAction> {
        let Some(action) = rule.action.as_deref() else {
            self.issue(
                at,
                format!("missing key `action`: one of {}", known_actions(side)),
            );
            return None;
        };
        let Some(allowed) = keys_of(action) else {
            self.issue(
                &at.key("action"),
                format!(
                    "unknown action `{action}`: expected one of {}",
                    known_actions(side)
                ),
            );
            return None;
        };
        if !applies_to(action, side) {
            let (here, there) = match side {
                Side::Request => ("http_request", "http_response"),
                Side::Response => ("http_response", "http_request"),
            };
            let why = if action == "return" {
                "is not supported yet"
            } else {
                "is not supported"
            };
            self.issue(
                &at.key("action"),
                format!("`{action}` in {here} {why}: use it in {there}"),
            );
            return None;
        }
        self.keys_apply(rule, action, allowed, at);
        Some(match action {
            "deny" => HttpAction::Deny {
                status: self.deny_status(rule.status, side, at),
            },
            "return" => self.return_action(rule, at),
            "del-header" => self.del_header(rule, side, at),
            "set-header" | "add-header" => {
                let name = self.header_name(rule.name.as_deref(), action, side, at);
                let value = self.header_value(rule.value.as_deref(), side, at);
                if action == "set-header" {
                    HttpAction::SetHeader { name, value }
                } else {
                    HttpAction::AddHeader { name, value }
                }
            }
            "redirect" => self.redirect(rule, at),
            "set-var" => self.set_var(rule, side, at),
            "set-log-level" => self.set_log_level(rule, at),
            "set-status" => self.set_status(rule, at),
            "auth" => self.auth_action(rule, at),
            "track-sc0" | "track-sc1" | "track-sc2" => HttpAction::Track(self.track(
                action,
                rule.key.as_deref(),
                rule.table.as_deref(),
                at,
            )?),
            // HAProxy's tarpit answers 500 unless told otherwise.
            "tarpit" => HttpAction::Tarpit {
                status: match rule.status {
                    None => 500,
                    status => self.deny_status(status, side, at),
                },
            },
            "reject" => HttpAction::Reject,
            "silent-drop" => HttpAction::SilentDrop,
            _ => self.rewrite(rule, action, side, at),
        })
    }

    /// `auth [realm R]`: the realm, or empty for the proxy's name (filled in once known).
    fn auth_action(&mut self, rule: &RawHttpRule, at: &KeyPath) -> HttpAction {
        let realm = rule.realm.clone().unwrap_or_default();
        if rule.realm.is_some() && (realm.is_empty() || !super::control::valid_realm(&realm)) {
            self.issue(&at.key("realm"), super::control::REALM_CHARS);
        }
        HttpAction::Auth { realm }
    }

    /// Reports each key of `rule` that `action` does not take.
    fn keys_apply(&mut self, rule: &RawHttpRule, action: &str, allowed: &[&str], at: &KeyPath) {
        let given = [
            ("status", rule.status.is_some()),
            ("content_type", rule.content_type.is_some()),
            ("body", rule.body.is_some()),
            ("file", rule.file.is_some()),
            ("name", rule.name.is_some()),
            ("value", rule.value.is_some()),
            ("regex", rule.regex.is_some()),
            ("match", rule.match_.is_some()),
            ("reason", rule.reason.is_some()),
            ("level", rule.level.is_some()),
            ("location", rule.location.is_some()),
            ("prefix", rule.prefix.is_some()),
            ("scheme", rule.scheme.is_some()),
            ("code", rule.code.is_some()),
            ("drop_query", rule.drop_query.is_some()),
            ("append_slash", rule.append_slash.is_some()),
            ("set_cookie", rule.set_cookie.is_some()),
            ("clear_cookie", rule.clear_cookie.is_some()),
            ("realm", rule.realm.is_some()),
            ("key", rule.key.is_some()),
            ("table", rule.table.is_some()),
        ];
        for (key, _) in given.iter().filter(|(k, set)| *set && !allowed.contains(k)) {
            self.issue(
                &at.key(key),
                format!("`{key}` does not apply to action `{action}`"),
            );
        }
    }

    /// HAProxy's defaults: 403 for a request, 502 for a response.
    fn deny_status(&mut self, raw: Option<i64>, side: Side, at: &KeyPath) -> u16 {
        let Some(status) = raw else {
            return match side {
                Side::Request => 403,
                Side::Response => 502,
            };
        };
        match u16::try_from(status) {
            Ok(s) if DENY_STATUSES.contains(&s) => s,
            _ => {
                let list: Vec<String> = DENY_STATUSES.iter().map(u16::to_string).collect();
                self.issue(
                    &at.key("status"),
                    format!(
                        "{status} has no error page: deny answers one of {}",
                        list.join(", ")
                    ),
                );
                403
            }
        }
    }

    fn return_action(&mut self, rule: &RawHttpRule, at: &KeyPath) -> HttpAction {
        let status = match rule.status {
            None => 200,
            Some(s @ 200..=599) => s as u16,
            Some(s) => {
                self.issue(
                    &at.key("status"),
                    format!("{s} is out of range: return answers a status from 200 to 599"),
                );
                200
            }
        };
        let body = self
            .page_body(rule.body.as_deref(), rule.file.as_deref(), at)
            .unwrap_or_default();
        let content_type = rule.content_type.clone();
        if let Some(t) = &content_type {
            if t.is_empty() || t.chars().any(|c| c.is_control()) {
                self.issue(
                    &at.key("content_type"),
                    "must be a media type without control characters, e.g. \"text/plain\"",
                );
            } else if body.is_empty() {
                self.issue(
                    &at.key("content_type"),
                    "a content type without a `body` describes nothing (HAProxy ignores it); \
                     remove it or give a body",
                );
            }
        } else if !body.is_empty() {
            self.issue(
                &at.key("body"),
                "a body needs its `content_type`, e.g. content_type = \"text/plain\" (as in HAProxy)",
            );
        }
        if (status == 204 || status == 304) && !body.is_empty() {
            self.issue(&at.key("body"), format!("a {status} response has no body"));
        }
        HttpAction::Return {
            status,
            content_type,
            body,
        }
    }

    pub(super) fn header_name(
        &mut self,
        raw: Option<&str>,
        action: &str,
        side: Side,
        at: &KeyPath,
    ) -> String {
        let Some(name) = raw else {
            self.issue(
                at,
                format!("missing key `name`: the header `{action}` acts on"),
            );
            return String::new();
        };
        let at = at.key("name");
        let lower = name.to_ascii_lowercase();
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            self.issue(
                &at,
                format!("`{name}` is not a header name (an HTTP token)"),
            );
        } else if MANAGED.contains(&lower.as_str()) || (side == Side::Request && lower == "expect")
        {
            self.issue(
                &at,
                format!(
                    "`{name}` is managed by tern (framing and hop-by-hop fields): rules may not \
                     change it"
                ),
            );
        } else if side == Side::Request
            && lower == "host"
            && !matches!(action, "set-header" | "replace-header" | "replace-value")
        {
            self.issue(
                &at,
                "`Host` may only be replaced (set-header): a request without Host or with two is \
                 refused by servers",
            );
        }
        name.to_owned()
    }

    pub(super) fn header_value(
        &mut self,
        raw: Option<&str>,
        side: Side,
        rule: &KeyPath,
    ) -> ValueFormat {
        let Some(text) = raw else {
            self.issue(rule, "missing key `value` (use \"\" for an empty value)");
            return ValueFormat::default();
        };
        self.value_at(text, side, &rule.key("value"))
    }

    /// A header value (text and `%[fetch]`) given at `at`.
    pub(super) fn value_at(&mut self, text: &str, side: Side, at: &KeyPath) -> ValueFormat {
        match value::parse(text) {
            Ok(format) => {
                if side == Side::Response {
                    let fetches = format.pieces.iter().filter_map(|p| match p {
                        Piece::Fetch(f) => Some(f),
                        Piece::Text(_) => None,
                    });
                    self.response_samples(fetches, at);
                }
                format
            }
            Err(e) => {
                self.issue(at, e);
                ValueFormat::default()
            }
        }
    }

    /// Reports samples a response rule cannot read (the request head is gone by then).
    fn response_samples<'f>(&mut self, fetches: impl Iterator<Item = &'f Fetch>, at: &KeyPath) {
        let mut refused: Vec<&str> = Vec::new();
        for f in fetches {
            let name = match f {
                Fetch::Method => "method",
                Fetch::Url => "url",
                Fetch::Path => "path",
                Fetch::Query => "query",
                Fetch::Version => "req.ver",
                Fetch::HttpAuth(_) => "http_auth",
                Fetch::HttpAuthGroup(_) => "http_auth_group",
                _ => continue,
            };
            if !refused.contains(&name) {
                refused.push(name);
            }
        }
        if !refused.is_empty() {
            self.issue(
                at,
                format!(
                    "{} cannot be used in {}: only the connection (src, dst_port, ssl_fc, \
                     ssl_fc_sni) and the response's headers (hdr) are known there",
                    refused.join(", "),
                    Side::Response.key()
                ),
            );
        }
    }
}

/// The keys each action takes; `None` for an action tern does not know.
fn keys_of(action: &str) -> Option<&'static [&'static str]> {
    Some(match action {
        "deny" => &["status"],
        "return" => &["status", "content_type", "body", "file"],
        "set-header" | "add-header" => &["name", "value"],
        "del-header" => &["name", "match"],
        "redirect" => &[
            "location",
            "prefix",
            "scheme",
            "code",
            "drop_query",
            "append_slash",
            "set_cookie",
            "clear_cookie",
        ],
        "set-method" | "set-path" | "set-query" | "set-uri" => &["value"],
        "replace-path" | "replace-uri" => &["regex", "value"],
        "replace-header" | "replace-value" => &["name", "regex", "value"],
        "set-status" => &["status", "reason"],
        "set-var" => &["name", "value"],
        "set-log-level" => &["level"],
        "auth" => &["realm"],
        "track-sc0" | "track-sc1" | "track-sc2" => &["key", "table"],
        "tarpit" => &["status"],
        "reject" | "silent-drop" => &[],
        _ => return None,
    })
}

/// Whether `action` may be used on `side`.
fn applies_to(action: &str, side: Side) -> bool {
    match action {
        "set-header" | "add-header" | "del-header" | "replace-header" | "replace-value"
        | "deny" | "return" | "set-var" | "set-log-level" => true,
        "set-status" => side == Side::Response,
        _ => side == Side::Request,
    }
}

fn known_actions(side: Side) -> &'static str {
    match side {
        Side::Request => {
            "deny, return, redirect, auth, set-header, add-header, del-header, replace-header, \
             replace-value, set-method, set-path, set-query, set-uri, replace-path, replace-uri, \
             set-var, set-log-level, track-sc0, track-sc1, track-sc2, tarpit, reject, silent-drop"
        }
        Side::Response => {
            "deny, return, set-header, add-header, del-header, replace-header, replace-value, \
             set-status, set-var, set-log-level"
        }
    }
}

/// Whether `text` is a non-empty HTTP token (a field name).
pub(super) fn is_token_text(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(is_token_byte)
}

/// A variable's name as HAProxy writes it, `SCOPE.NAME` with SCOPE one of `txn`, `req`, `res`
/// (one request and its response) or `sess` (the client connection); `proc` (shared by the
/// whole process) is not supported.
pub(crate) fn var_name(text: &str) -> Result<String, String> {
    let (scope, name) = text.split_once('.').unwrap_or(("", text));
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    match scope {
        "txn" | "req" | "res" | "sess" if name_ok => Ok(text.to_owned()),
        "proc" => Err(format!(
            "`{text}`: proc variables (shared by every worker) are not supported yet"
        )),
        _ => Err(format!(
            "`{text}` is not a variable name: SCOPE.NAME, SCOPE one of txn, req, res, sess, \
             NAME letters, digits, `_` and `.`"
        )),
    }
}
