//! `unique-id-format`, `unique-id-header`, `log-format` and `capture request|response header`
//! → the frontend's `unique_id_format`, `unique_id_header`, `log_format` and
//! `capture_*_headers`.
//!
//! As in HAProxy, the formats take one argument (spaces escaped with `\` or the string
//! quoted), `defaults` may set them for the frontends after it, and `option httplog`,
//! `httpslog` or `tcplog` after a `log-format` replaces it with the standard line (tern's own
//! text line, whose layout follows `httplog`; `log-format` after the option wins). In a
//! backend they have no effect (a line follows its frontend's format); `capture` applies to
//! frontends only, not in `defaults` either. The formats themselves are checked by the TOML stage, whose
//! errors name these lines.

use super::proxy::Cx;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};
use super::toml_text::{inline, string};

/// Applies one of the keywords above.
pub(crate) fn logging(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let keyword = line.keyword();
    if keyword != "capture" && !cx.side(line, true) {
        return;
    }
    match keyword {
        "unique-id-format" => p.unique_id_format = format_arg(line, cx),
        "unique-id-header" => {
            p.unique_id_header = cx
                .arg(line, 1, "a header name")
                .map(|v| Src::new(v.to_owned(), line.no));
        }
        "log-format" => p.log_format = format_arg(line, cx),
        _ => capture(line, p, cx),
    }
}

/// The one argument of a format keyword.
fn format_arg(line: &Line, cx: &mut Cx<'_>) -> Option<Src<String>> {
    let text = cx.arg(line, 1, "a log-format string")?;
    if line.words.len() > 2 {
        cx.error(
            line.no,
            format!(
                "'{}' expects one argument: escape spaces with '\\' or quote the string",
                line.keyword()
            ),
        );
        return None;
    }
    Some(Src::new(text.to_owned(), line.no))
}

/// `capture request|response header NAME len N` (`capture cookie` is not supported yet).
fn capture(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let words: Vec<&str> = line.words.iter().map(String::as_str).collect();
    let (list, name, len) =
        match words.as_slice() {
            ["capture", side @ ("request" | "response"), "header", name, "len", len] => {
                let list = if *side == "request" {
                    &mut p.capture_request
                } else {
                    &mut p.capture_response
                };
                (list, *name, *len)
            }
            ["capture", "cookie", ..] => {
                return cx.unsupported_because(
                    line.no,
                    "capture cookie",
                    "tern captures header fields only",
                )
            }
            _ => return cx.error(
                line.no,
                "expected 'capture request header NAME len N' or 'capture response header NAME \
                 len N'",
            ),
        };
    if !cx.not_in_defaults(line) || !cx.side(line, true) {
        return;
    }
    let Ok(len) = len.parse::<u64>() else {
        return cx.error(line.no, format!("'len {len}': expected a number of bytes"));
    };
    let table = inline(&[("name", string(name)), ("len", len.to_string())]);
    list.push(Src::new(table, line.no));
}
