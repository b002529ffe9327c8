//! `{ action = "redirect", ... }`: HAProxy's `redirect` / `http-request redirect`.
//!
//! Exactly one of `location`, `prefix`, `scheme` (each a header value: text and `%[fetch]`),
//! `code` one of 301, 302, 303, 307, 308 (HAProxy's default 302), and the options
//! `drop_query`, `append_slash`, `set_cookie = "NAME[=VALUE]"` or `clear_cookie = "NAME"`.
//! The cookie becomes the `Set-Cookie` value HAProxy sends (`; path=/;`, plus `Max-Age=0;`
//! to clear).

use super::{Checker, Side};
use crate::locate::KeyPath;
use crate::model::{HttpAction, Redirect, RedirectTo, REDIRECT_CODES};
use crate::raw::RawHttpRule;

impl Checker<'_> {
    pub(super) fn redirect(&mut self, rule: &RawHttpRule, at: &KeyPath) -> HttpAction {
        let given: Vec<(&str, &String)> = [
            ("location", rule.location.as_ref()),
            ("prefix", rule.prefix.as_ref()),
            ("scheme", rule.scheme.as_ref()),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect();
        let (key, text) = match given.as_slice() {
            [one] => *one,
            [] => {
                self.issue(
                    at,
                    "a redirect needs one of `location`, `prefix` or `scheme`",
                );
                ("location", &String::new())
            }
            [_, second, ..] => {
                self.issue(
                    &at.key(second.0),
                    "give one of `location`, `prefix` or `scheme`, not several",
                );
                given[0]
            }
        };
        let value = self.value_at(text, Side::Request, &at.key(key));
        let to = match key {
            "prefix" => RedirectTo::Prefix(value),
            "scheme" => RedirectTo::Scheme(value),
            _ => RedirectTo::Location(value),
        };
        let code = match rule.code {
            None => 302,
            Some(c) => match u16::try_from(c) {
                Ok(c) if REDIRECT_CODES.contains(&c) => c,
                _ => {
                    self.issue(
                        &at.key("code"),
                        format!("{c} is not a redirect code: expected 301, 302, 303, 307 or 308"),
                    );
                    302
                }
            },
        };
        let cookie = self.redirect_cookie(rule, at);
        HttpAction::Redirect(Box::new(Redirect {
            to,
            code,
            drop_query: rule.drop_query.unwrap_or(false),
            append_slash: rule.append_slash.unwrap_or(false),
            cookie,
        }))
    }

    fn redirect_cookie(&mut self, rule: &RawHttpRule, at: &KeyPath) -> Option<String> {
        let (key, text, clear) = match (&rule.set_cookie, &rule.clear_cookie) {
            (None, None) => return None,
            (Some(_), Some(_)) => {
                self.issue(
                    &at.key("clear_cookie"),
                    "give `set_cookie` or `clear_cookie`, not both",
                );
                return None;
            }
            (Some(t), None) => ("set_cookie", t, false),
            (None, Some(t)) => ("clear_cookie", t, true),
        };
        let (name, value) = text.split_once('=').unwrap_or((text, ""));
        let name_ok = !name.is_empty() && name.bytes().all(super::is_token_byte);
        let value_ok = value
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b';' | b',' | b'"' | b'\\'));
        if !name_ok || !value_ok || (clear && !value.is_empty()) {
            let form = if clear { "NAME" } else { "NAME or NAME=VALUE" };
            self.issue(
                &at.key(key),
                format!(
                    "`{text}` is not a cookie: expected {form} (a token name, a value without \
                     spaces, `;`, `,`, quotes or backslashes)"
                ),
            );
            return None;
        }
        Some(if clear {
            format!("{text}; path=/; Max-Age=0;")
        } else {
            format!("{text}; path=/;")
        })
    }
}
