//! ACLs and the rules that use them: `acl`, `use_backend`, `http-request`, `http-response`.
//!
//! tern's `acl`, `use_backend`, `http_request` and `http_response` keys take HAProxy's own
//! grammar as strings, so the words of an ACL or a condition are only joined back together
//! (quoted where a word needs it, see `toml_text::condition`); tern parses and checks them. Each
//! rule becomes one inline table on its own line.

use super::proxy::Cx;
use super::rewrite;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};
use super::toml_text::{condition, string, Inline};

pub(crate) fn rule(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    if !cx.not_in_defaults(line) {
        return;
    }
    match line.keyword() {
        "acl" => acl(line, p, cx),
        "use_backend" => {
            if cx.side(line, true) {
                use_backend(line, p, cx);
            }
        }
        "http-request" => {
            if let Some(rule) = http_request(line, cx) {
                p.http_request.push(Src::new(rule, line.no));
            }
        }
        // HAProxy runs `redirect` rules after every `http-request` rule, wherever written.
        "redirect" => {
            if let Some((mut t, rest)) = rewrite::redirect(line, 1, true, cx) {
                if let Some(rule) = finish(line, &mut t, rest, cx) {
                    p.redirects.push(Src::new(rule, line.no));
                }
            }
        }
        _ => {
            if let Some(rule) = http_response(line, cx) {
                p.http_response.push(Src::new(rule, line.no));
            }
        }
    }
}

fn acl(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let (Some(name), true) = (line.word(1), line.words.len() > 2) else {
        cx.error(line.no, "'acl' needs a name and a criterion");
        return;
    };
    p.acls.push(Src::new(
        (name.to_owned(), condition(&line.words[2..])),
        line.no,
    ));
}

/// `if COND` / `unless COND` at the end of a rule → the rule table's key and value.
pub(crate) fn cond(
    line: &Line,
    rest: &[String],
    cx: &mut Cx<'_>,
) -> Result<Option<(&'static str, String)>, ()> {
    let Some((first, words)) = rest.split_first() else {
        return Ok(None);
    };
    let key = match first.as_str() {
        "if" => "if",
        "unless" => "unless",
        other => {
            cx.error(
                line.no,
                format!("unexpected '{other}' (expected 'if' or 'unless' and a condition)"),
            );
            return Err(());
        }
    };
    if words.is_empty() {
        cx.error(line.no, format!("'{key}' needs a condition"));
        return Err(());
    }
    Ok(Some((key, condition(words))))
}

fn use_backend(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(backend) = cx.arg(line, 1, "a backend name") else {
        return;
    };
    if backend.contains("%[") {
        cx.unsupported_because(line.no, "use_backend %[...]", "the backend must be named");
        return;
    }
    let Ok(condition) = cond(line, &line.words[2..], cx) else {
        return;
    };
    let mut t = Inline::new();
    t.set("backend", string(backend));
    if let Some((key, text)) = condition {
        t.set(key, string(&text));
    }
    p.use_backend.push(Src::new(t.text(), line.no));
    p.route_targets.push(backend.to_owned());
}

/// The header actions common to `http-request` and `http-response`: the rule table, and the
/// words left for the condition. `None` when `action` is not one of them.
fn header_action<'w>(
    line: &'w Line,
    action: &str,
    response: bool,
    cx: &mut Cx<'_>,
) -> Option<Option<(Inline, &'w [String])>> {
    if let Some(found) = rewrite::action(line, action, response, cx) {
        return Some(found);
    }
    let words = &line.words;
    let mut t = Inline::new();
    t.set("action", string(action));
    match action {
        "set-header" | "add-header" => {
            let (Some(name), Some(value)) = (words.get(2), words.get(3)) else {
                cx.error(
                    line.no,
                    format!("'{action}' needs a header name and a value"),
                );
                return Some(None);
            };
            t.set("name", string(name)).set("value", string(value));
            Some(Some((t, &words[4..])))
        }
        "del-header" => {
            let Some(name) = words.get(2) else {
                cx.error(line.no, "'del-header' needs a header name");
                return Some(None);
            };
            t.set("name", string(name));
            if words.get(3).is_some_and(|w| w == "-m") {
                return Some(rewrite::del_header_matching(line, &mut t, cx).map(|rest| (t, rest)));
            }
            Some(Some((t, &words[3..])))
        }
        _ => None,
    }
}

fn http_request(line: &Line, cx: &mut Cx<'_>) -> Option<String> {
    let action = cx.arg(line, 1, "an action")?;
    if let Some(found) = header_action(line, action, false, cx) {
        let (mut t, rest) = found?;
        return finish(line, &mut t, rest, cx);
    }
    let mut t = Inline::new();
    t.set("action", string(action));
    let rest = match action {
        "deny" | "tarpit" => deny_args(line, &mut t, cx)?,
        "return" => return_args(line, &mut t, cx)?,
        "auth" => auth_args(line, &mut t, cx)?,
        "reject" | "silent-drop" => &line.words[2..],
        "track-sc0" | "track-sc1" | "track-sc2" => track_args(line, 2, &mut t, cx)?,
        _ => {
            cx.unsupported(line.no, &format!("http-request {action}"));
            return None;
        }
    };
    finish(line, &mut t, rest, cx)
}

/// `return [status N] [content-type T] [string S | lf-string S | file F]`; the words left
/// after them.
fn return_args<'w>(line: &'w Line, t: &mut Inline, cx: &mut Cx<'_>) -> Option<&'w [String]> {
    let words = &line.words;
    let mut i = 2;
    while let Some(option) = words.get(i).map(String::as_str) {
        if option == "if" || option == "unless" {
            break;
        }
        let Some(value) = words.get(i + 1) else {
            cx.error(line.no, format!("'return ... {option}' needs a value"));
            return None;
        };
        match option {
            "status" => {
                t.set("status", number(value, line, cx)?);
            }
            "content-type" => {
                t.set("content_type", string(value));
            }
            "string" => {
                t.set("body", string(value));
            }
            "file" => {
                t.set("file", string(value));
            }
            "lf-string" if !value.contains('%') => {
                t.set("body", string(value));
            }
            _ => {
                cx.unsupported(line.no, &format!("http-request return ... {option}"));
                return None;
            }
        }
        i += 2;
    }
    Some(&words[i..])
}

/// `auth [realm R]`: the realm, and the words left.
fn auth_args<'w>(line: &'w Line, t: &mut Inline, cx: &mut Cx<'_>) -> Option<&'w [String]> {
    match &line.words[2..] {
        [realm, name, rest @ ..] if realm == "realm" => {
            t.set("realm", string(name));
            Some(rest)
        }
        [realm] if realm == "realm" => {
            cx.error(line.no, "'auth realm' needs a realm");
            None
        }
        words => Some(words),
    }
}

/// `track-scN KEY [table T]` with KEY at `words[at]`: the key and table, and the words left.
pub(crate) fn track_args<'w>(
    line: &'w Line,
    at: usize,
    t: &mut Inline,
    cx: &mut Cx<'_>,
) -> Option<&'w [String]> {
    let Some(key) = line.word(at) else {
        cx.error(
            line.no,
            format!("'{}' needs a key, e.g. src", line.words[at - 1]),
        );
        return None;
    };
    t.set("key", string(key));
    match &line.words[at + 1..] {
        [table, name, rest @ ..] if table == "table" => {
            t.set("table", string(name));
            Some(rest)
        }
        rest => Some(rest),
    }
}

/// `deny [deny_status N]`: the status, and the words left.
fn deny_args<'w>(line: &'w Line, t: &mut Inline, cx: &mut Cx<'_>) -> Option<&'w [String]> {
    let words = &line.words[2..];
    Some(match words {
        [status, code, rest @ ..] if status == "deny_status" || status == "status" => {
            t.set("status", number(code, line, cx)?);
            rest
        }
        _ => words,
    })
}

fn http_response(line: &Line, cx: &mut Cx<'_>) -> Option<String> {
    let action = cx.arg(line, 1, "an action")?;
    if action == "deny" || action == "return" {
        let mut t = Inline::new();
        t.set("action", string(action));
        let rest = if action == "deny" {
            deny_args(line, &mut t, cx)?
        } else {
            return_args(line, &mut t, cx)?
        };
        return finish(line, &mut t, rest, cx);
    }
    match header_action(line, action, true, cx) {
        Some(found) => {
            let (mut t, rest) = found?;
            finish(line, &mut t, rest, cx)
        }
        None => {
            cx.unsupported(line.no, &format!("http-response {action}"));
            None
        }
    }
}

/// Adds the condition (if any) and renders the rule.
fn finish(line: &Line, t: &mut Inline, rest: &[String], cx: &mut Cx<'_>) -> Option<String> {
    let condition = cond(line, rest, cx).ok()?;
    if let Some((key, text)) = condition {
        t.set(key, string(&text));
    }
    Some(t.text())
}

fn number(text: &str, line: &Line, cx: &mut Cx<'_>) -> Option<String> {
    match text.parse::<u16>() {
        Ok(n) => Some(n.to_string()),
        Err(_) => {
            cx.error(line.no, format!("invalid status '{text}'"));
            None
        }
    }
}
