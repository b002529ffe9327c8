//! `redirect`, `http-request redirect` and the rewrite actions of `http-request` /
//! `http-response` (`set-method`, `set-path`, `set-query`, `set-uri`, `replace-path`,
//! `replace-uri`, `replace-header`, `replace-value`, `del-header -m`, `set-status`) as tern's
//! rule tables.
//!
//! The words are carried over as they are and checked by the TOML stage (regexes, codes,
//! cookies), so an error names the `.cfg` line. One difference of grammar: the old `redirect`
//! keyword takes static strings where `http-request redirect` takes log-format ones, so its `%`
//! are written `%%` for tern.

use super::proxy::Cx;
use super::sections::Line;
use super::toml_text::{string, Inline};

/// The rule table of a rewrite action (`words[2..]` its arguments) and the words left for
/// the condition; `None` inside when the line is wrong (reported); `None` outside when
/// `action` is not one of these.
pub(crate) fn action<'w>(
    line: &'w Line,
    action: &str,
    response: bool,
    cx: &mut Cx<'_>,
) -> Option<Option<(Inline, &'w [String])>> {
    if let Some(found) = set_var(line, action, cx) {
        return Some(found);
    }
    let words = &line.words;
    let mut t = Inline::new();
    t.set("action", string(action));
    let args: &[&'static str] = match (action, response) {
        ("set-method" | "set-path" | "set-query" | "set-uri", false) => &["value"],
        ("replace-path" | "replace-uri", false) => &["regex", "value"],
        ("replace-header" | "replace-value", _) => &["name", "regex", "value"],
        ("set-status", true) => return Some(set_status(line, t, cx)),
        ("set-log-level", _) => &["level"],
        ("redirect", false) => return Some(redirect(line, 2, false, cx)),
        _ => return None,
    };
    if words.len() < 2 + args.len() {
        cx.error(
            line.no,
            format!(
                "'{action}' needs {}",
                args.join(", ").replace("value", "a format")
            ),
        );
        return Some(None);
    }
    for (key, word) in args.iter().zip(&words[2..]) {
        t.set(key, string(word));
    }
    Some(Some((t, &words[2 + args.len()..])))
}

/// `del-header NAME -m METH`: the table with `match`, and the words left.
pub(crate) fn del_header_matching<'w>(
    line: &'w Line,
    t: &mut Inline,
    cx: &mut Cx<'_>,
) -> Option<&'w [String]> {
    let Some(method) = line.word(4) else {
        cx.error(
            line.no,
            "'del-header ... -m' needs a method (str, beg, end, sub, reg)",
        );
        return None;
    };
    t.set("match", string(method));
    Some(&line.words[5..])
}

/// `set-status N [reason R]`.
fn set_status<'w>(
    line: &'w Line,
    mut t: Inline,
    cx: &mut Cx<'_>,
) -> Option<(Inline, &'w [String])> {
    let Some(status) = line.word(2) else {
        cx.error(line.no, "'set-status' needs a status");
        return None;
    };
    let Ok(n) = status.parse::<u16>() else {
        cx.error(line.no, format!("invalid status '{status}'"));
        return None;
    };
    t.set("status", n.to_string());
    let mut rest = &line.words[3..];
    if rest.first().is_some_and(|w| w == "reason") {
        let Some(reason) = rest.get(1) else {
            cx.error(line.no, "'set-status ... reason' needs a reason");
            return None;
        };
        t.set("reason", string(reason));
        rest = &rest[2..];
    }
    Some((t, rest))
}

/// A redirect rule whose type is `words[at]`: the table and the words left. `legacy` for the
/// `redirect` keyword (static strings).
pub(crate) fn redirect<'w>(
    line: &'w Line,
    at: usize,
    legacy: bool,
    cx: &mut Cx<'_>,
) -> Option<(Inline, &'w [String])> {
    let words = &line.words;
    let (Some(kind), Some(target)) = (words.get(at), words.get(at + 1)) else {
        cx.error(
            line.no,
            "a redirect needs 'location', 'prefix' or 'scheme' and its value",
        );
        return None;
    };
    let key = match kind.as_str() {
        "location" => "location",
        "prefix" => "prefix",
        "scheme" => "scheme",
        other => {
            cx.error(
                line.no,
                format!("unknown redirect type '{other}' (expected location, prefix or scheme)"),
            );
            return None;
        }
    };
    let mut t = Inline::new();
    t.set("action", string("redirect"));
    let target = if legacy {
        target.replace('%', "%%")
    } else {
        target.clone()
    };
    t.set(key, string(&target));
    let mut i = at + 2;
    let mut cookie: Option<(&'static str, &String)> = None;
    while let Some(option) = words.get(i).map(String::as_str) {
        match option {
            "if" | "unless" => break,
            "drop-query" => {
                t.set("drop_query", "true".into());
            }
            "append-slash" => {
                t.set("append_slash", "true".into());
            }
            "code" | "set-cookie" | "clear-cookie" => {
                let Some(value) = words.get(i + 1) else {
                    cx.error(line.no, format!("'redirect ... {option}' needs a value"));
                    return None;
                };
                if option == "code" {
                    let Ok(code) = value.parse::<u16>() else {
                        cx.error(line.no, format!("invalid redirect code '{value}'"));
                        return None;
                    };
                    t.set("code", code.to_string());
                } else {
                    // HAProxy keeps the last cookie option.
                    let key = if option == "set-cookie" {
                        "set_cookie"
                    } else {
                        "clear_cookie"
                    };
                    cookie = Some((key, value));
                }
                i += 1;
            }
            other => {
                cx.error(
                    line.no,
                    format!(
                        "unknown redirect option '{other}' (expected code, drop-query, \
                         append-slash, set-cookie, clear-cookie, if or unless)"
                    ),
                );
                return None;
            }
        }
        i += 1;
    }
    if let Some((key, value)) = cookie {
        t.set(key, string(value));
    }
    Some((t, &words[i..]))
}

/// `set-var(NAME) EXPR` and `set-var-fmt(NAME) FMT` as `{ action = "set-var", name, value }`:
/// EXPR is one fetch (`%[fetch]` in tern's value), `str(TEXT)` or `int(N)`; converters are
/// not supported yet. `None` when `action` is neither.
fn set_var<'w>(
    line: &'w Line,
    action: &str,
    cx: &mut Cx<'_>,
) -> Option<Option<(Inline, &'w [String])>> {
    let (fmt, inner) = if let Some(rest) = action.strip_prefix("set-var-fmt(") {
        (true, rest)
    } else {
        (false, action.strip_prefix("set-var(")?)
    };
    let Some(name) = inner.strip_suffix(')') else {
        cx.error(line.no, format!("'{action}': expected set-var(SCOPE.NAME)"));
        return Some(None);
    };
    let Some(expr) = line.word(2) else {
        cx.error(line.no, format!("'{action}' needs an expression"));
        return Some(None);
    };
    let value = if fmt {
        expr.to_owned()
    } else if let Some(text) = expr.strip_prefix("str(").and_then(|e| e.strip_suffix(')')) {
        text.replace('%', "%%")
    } else if let Some(n) = expr.strip_prefix("int(").and_then(|e| e.strip_suffix(')')) {
        n.to_owned()
    } else if expr.contains(',') {
        cx.unsupported(line.no, &format!("{action} with a converter"));
        return Some(None);
    } else {
        format!("%[{expr}]")
    };
    let mut t = Inline::new();
    t.set("action", string("set-var"))
        .set("name", string(name))
        .set("value", string(&value));
    // HAProxy 2.6+ takes conditions only after the expression.
    Some(Some((t, &line.words[3..])))
}
