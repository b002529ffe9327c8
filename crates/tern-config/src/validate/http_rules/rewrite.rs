//! Rewrite actions: `set-method`, `set-path`, `set-query`, `set-uri`, `replace-path`,
//! `replace-uri`, `replace-header`, `replace-value`, `del-header` with `match`, and
//! `set-status` on responses.
//!
//! What can be checked before any request is: the regex compiles (the `regex` crate's syntax:
//! no back-references or look-around), literal parts of a request-line value contain no
//! space or control character (they would break the request line), a literal method is a
//! token other than `HEAD` and `CONNECT` (which change how the response is framed), and a
//! new status keeps the response's framing (not 1xx, 204 or 304). Values built from samples
//! are checked again per request.

use super::{Checker, Side};
use crate::locate::KeyPath;
use crate::model::{HttpAction, LinePart, NamePattern, Piece, Regex, ValueFormat};
use crate::raw::RawHttpRule;
use crate::validate::condition::compile_regex;

impl Checker<'_> {
    /// `del-header NAME [-m str|beg|end|sub|reg]`.
    pub(super) fn del_header(
        &mut self,
        rule: &RawHttpRule,
        side: Side,
        at: &KeyPath,
    ) -> HttpAction {
        let method = rule.match_.as_deref().unwrap_or("str");
        if method == "str" {
            return HttpAction::DelHeader {
                name: self.header_name(rule.name.as_deref(), "del-header", side, at),
            };
        }
        let Some(name) = rule.name.as_deref().filter(|n| !n.is_empty()) else {
            self.issue(
                at,
                "missing key `name`: the header names `del-header` removes",
            );
            return HttpAction::DelHeaders {
                pattern: NamePattern::Begins(String::new()),
            };
        };
        let text = || name.to_owned();
        let pattern = match method {
            "beg" => NamePattern::Begins(text()),
            "end" => NamePattern::Ends(text()),
            "sub" => NamePattern::Contains(text()),
            "reg" => match compile_regex(name, true) {
                Ok(r) => NamePattern::Regex(r),
                Err(e) => {
                    self.issue(&at.key("name"), e);
                    NamePattern::Begins(text())
                }
            },
            other => {
                self.issue(
                    &at.key("match"),
                    format!("unknown match `{other}`: expected str, beg, end, sub or reg"),
                );
                NamePattern::Begins(text())
            }
        };
        HttpAction::DelHeaders { pattern }
    }

    /// `set-var(NAME)`: `name` the variable, `value` what it is set to.
    pub(super) fn set_var(&mut self, rule: &RawHttpRule, side: Side, at: &KeyPath) -> HttpAction {
        let name = match rule.name.as_deref().map(super::var_name) {
            Some(Ok(name)) => name,
            Some(Err(e)) => {
                self.issue(&at.key("name"), e);
                String::new()
            }
            None => {
                self.issue(
                    at,
                    "missing key `name`: the variable to set, e.g. \"txn.user\"",
                );
                String::new()
            }
        };
        let value = self.header_value(rule.value.as_deref(), side, at);
        HttpAction::SetVar { name, value }
    }

    /// `set-log-level LEVEL`: a syslog level name, or `silent`.
    pub(super) fn set_log_level(&mut self, rule: &RawHttpRule, at: &KeyPath) -> HttpAction {
        const LEVELS: [&str; 8] = [
            "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
        ];
        let level = rule.level.as_deref().unwrap_or_default();
        let severity = match LEVELS.iter().position(|l| *l == level) {
            Some(i) => u8::try_from(i).ok(),
            None if level == "silent" => None,
            None => {
                self.issue(
                    &at.key("level"),
                    format!(
                        "`{level}` is not a log level: one of {}, silent",
                        LEVELS.join(", ")
                    ),
                );
                Some(6)
            }
        };
        HttpAction::SetLogLevel { severity }
    }

    /// `set-status N [reason R]` on responses.
    pub(super) fn set_status(&mut self, rule: &RawHttpRule, at: &KeyPath) -> HttpAction {
        let status = match rule.status {
            None => {
                self.issue(at, "missing key `status`: the status to answer with");
                200
            }
            Some(s @ 200..=599) if s != 204 && s != 304 => s as u16,
            Some(s) => {
                self.issue(
                    &at.key("status"),
                    format!(
                        "{s} cannot be set: a status from 200 to 599 other than 204 and 304 \
                         (those change how the response is framed)"
                    ),
                );
                200
            }
        };
        let reason = rule.reason.clone();
        if reason
            .as_deref()
            .is_some_and(|r| r.chars().any(|c| c.is_control() && c != '\t'))
        {
            self.issue(
                &at.key("reason"),
                "a reason phrase has no control characters",
            );
        }
        HttpAction::SetStatus { status, reason }
    }

    /// The request-line and header rewrites.
    pub(super) fn rewrite(
        &mut self,
        rule: &RawHttpRule,
        action: &str,
        side: Side,
        at: &KeyPath,
    ) -> HttpAction {
        let part = match action {
            "set-method" => LinePart::Method,
            "set-path" | "replace-path" => LinePart::Path,
            "set-query" => LinePart::Query,
            _ => LinePart::Uri,
        };
        let value = self.header_value(rule.value.as_deref(), side, at);
        if action.starts_with("set-") {
            self.literal_line_part(&value, part, &at.key("value"));
            return HttpAction::SetLine { part, value };
        }
        let regex = self.rule_regex(rule.regex.as_deref(), action, at);
        if action == "replace-path" || action == "replace-uri" {
            self.literal_line_part(&value, part, &at.key("value"));
            return HttpAction::ReplaceLine {
                part,
                regex,
                with: value,
            };
        }
        HttpAction::ReplaceHeader {
            name: self.header_name(rule.name.as_deref(), action, side, at),
            regex,
            with: value,
            each_value: action == "replace-value",
        }
    }

    fn rule_regex(&mut self, raw: Option<&str>, action: &str, at: &KeyPath) -> Regex {
        let fallback = || Regex(regex::bytes::Regex::new("$^").expect("a valid constant regex"));
        let Some(text) = raw else {
            self.issue(at, format!("missing key `regex`: what `{action}` matches"));
            return fallback();
        };
        // HAProxy matches these case-sensitively.
        compile_regex(text, false).unwrap_or_else(|e| {
            self.issue(&at.key("regex"), e);
            fallback()
        })
    }

    /// Refuses literal text that cannot be in a request line.
    fn literal_line_part(&mut self, value: &ValueFormat, part: LinePart, at: &KeyPath) {
        let literal: String = value
            .pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Text(t) => Some(t.as_str()),
                Piece::Fetch(_) => None,
            })
            .collect();
        if part == LinePart::Method {
            let all_literal = value.pieces.iter().all(|p| matches!(p, Piece::Text(_)));
            if all_literal && (literal.is_empty() || !literal.bytes().all(super::is_token_byte)) {
                self.issue(at, format!("`{literal}` is not a method (an HTTP token)"));
            } else if literal.eq_ignore_ascii_case("HEAD")
                || literal.eq_ignore_ascii_case("CONNECT")
            {
                self.issue(
                    at,
                    format!("`{literal}` cannot be set: it changes how the response is framed"),
                );
            }
        } else if let Some(c) = literal
            .chars()
            .find(|c| c.is_whitespace() || c.is_control())
        {
            self.issue(
                at,
                format!("{c:?} cannot be in a request target (it would break the request line)"),
            );
        }
    }
}
