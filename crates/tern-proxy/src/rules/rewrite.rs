//! The actions that change a message rather than answer it: header edits (`set-header`,
//! `add-header`, `del-header`, `del-header -m`, `replace-header`, `replace-value`), start-line
//! edits (`set-method`, `set-path`, `set-query`, `set-uri`, `replace-path`, `replace-uri`,
//! `set-status`), all collected in a [`HeaderEdits`] that the rewrite applies while it copies
//! the head (no second pass, no change to the parsed head).
//!
//! The request line is edited on what earlier rules made of it (`set-path` then `set-query`
//! compose); conditions and samples still read the request as received (module docs of
//! [`crate::rules`]). A rewrite whose result cannot be sent (a method that is not a token, or
//! `HEAD` / `CONNECT`, which change how the response is framed; a target with a space or a
//! control byte, or empty) fails: the request is answered 500, as HAProxy does for a failed
//! rewrite in its default strict mode.

use tern_config::{HttpAction, LinePart, NamePattern, Piece, Regex, ValueFormat};
use tern_h1::{FieldValue, HeaderEdits};

use super::facts::Samples;

/// A rewrite produced something that cannot be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failed;

/// Appends `value` (text and samples of `facts`) to `out`.
pub(crate) fn format<F: Samples>(value: &ValueFormat, facts: &F, out: &mut FieldValue<'_>) {
    for piece in &value.pieces {
        match piece {
            Piece::Text(text) => out.push(text.as_bytes()),
            Piece::Fetch(fetch) => facts.sample(fetch, out),
        }
    }
}

/// `value` evaluated into a new buffer (rules that need the value whole before using it).
fn evaluated<F: Samples>(value: &ValueFormat, facts: &F) -> Vec<u8> {
    let mut out = Vec::new();
    format(value, facts, &mut FieldValue::detached(&mut out));
    out
}

/// Applies one action that changes the message.
pub(crate) fn apply<F: Samples>(
    action: &HttpAction,
    facts: &F,
    edits: &mut HeaderEdits,
) -> Result<(), Failed> {
    match action {
        HttpAction::SetHeader { name, value } => {
            format(value, facts, &mut edits.set(name.as_bytes()))
        }
        HttpAction::AddHeader { name, value } => {
            format(value, facts, &mut edits.add(name.as_bytes()))
        }
        HttpAction::DelHeader { name } => edits.delete(name.as_bytes()),
        HttpAction::DelHeaders { pattern } => delete_matching(pattern, facts, edits),
        HttpAction::ReplaceHeader {
            name,
            regex,
            with,
            each_value,
        } => replace_header(
            name,
            regex,
            &evaluated(with, facts),
            *each_value,
            facts,
            edits,
        ),
        HttpAction::SetLine { part, value } => {
            let value = evaluated(value, facts);
            return set_line(*part, &value, facts, edits);
        }
        HttpAction::ReplaceLine { part, regex, with } => {
            let with = evaluated(with, facts);
            return replace_line(*part, regex, &with, facts, edits);
        }
        HttpAction::SetLogLevel { severity } => facts.set_log_level(*severity),
        HttpAction::SetVar { name, value } => {
            let value = evaluated(value, facts);
            facts.set_var(name, &value);
        }
        HttpAction::SetStatus { status, reason } => {
            let reason = reason
                .as_deref()
                .unwrap_or_else(|| tern_h1::local::reason(*status));
            edits.line_mut().set_status(*status, reason.as_bytes());
        }
        // Answers, handled by the caller.
        HttpAction::Deny { .. }
        | HttpAction::Return { .. }
        | HttpAction::Redirect(_)
        | HttpAction::Auth { .. }
        | HttpAction::Track(_)
        | HttpAction::Tarpit { .. }
        | HttpAction::Reject
        | HttpAction::SilentDrop => {}
    }
    Ok(())
}

/// `del-header -m beg|end|sub|reg`: every field whose name matches.
fn delete_matching<F: Samples>(pattern: &NamePattern, facts: &F, edits: &mut HeaderEdits) {
    facts.each_field_name(&mut |name| {
        if pattern.matches(name) {
            edits.delete(name);
        }
    });
}

/// `replace-header` / `replace-value`: when some field `name` (or one of its values) matches,
/// every field `name` is written again, the matching ones (or values) replaced, in order.
fn replace_header<F: Samples>(
    name: &str,
    regex: &Regex,
    with: &[u8],
    each_value: bool,
    facts: &F,
    edits: &mut HeaderEdits,
) {
    let mut any = false;
    facts.each_field(name, &mut |v| {
        any |= if each_value {
            v.split(|&b| b == b',')
                .any(|x| regex.0.is_match(x.trim_ascii()))
        } else {
            regex.0.is_match(v)
        };
    });
    if !any {
        return;
    }
    edits.delete(name.as_bytes());
    let mut out = Vec::new();
    facts.each_field(name, &mut |v| {
        out.clear();
        if each_value {
            for (i, x) in v.split(|&b| b == b',').enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                let x = x.trim_ascii();
                if !regex.replace_whole(x, with, &mut out) {
                    out.extend_from_slice(x);
                }
            }
        } else if !regex.replace_whole(v, with, &mut out) {
            out.extend_from_slice(v);
        }
        edits.add(name.as_bytes()).push(&out);
    });
}

/// The target as rules made it so far (the request's own before any rule).
fn current_target<'a, F: Samples>(facts: &'a F, edits: &'a HeaderEdits) -> &'a [u8] {
    edits.line().target().unwrap_or_else(|| facts.target())
}

/// Splits a target at its `?`: the path, and the query with its `?` (or empty).
fn split_query(target: &[u8]) -> (&[u8], &[u8]) {
    let at = target
        .iter()
        .position(|&b| b == b'?')
        .unwrap_or(target.len());
    target.split_at(at)
}

fn set_line<F: Samples>(
    part: LinePart,
    value: &[u8],
    facts: &F,
    edits: &mut HeaderEdits,
) -> Result<(), Failed> {
    let (path, query) = split_query(current_target(facts, edits));
    let target = match part {
        LinePart::Method => return set_method(value, facts, edits),
        LinePart::Path => [value, query].concat(),
        // HAProxy writes the `?` even for an empty query.
        LinePart::Query => [path, b"?", value].concat(),
        LinePart::Uri => value.to_vec(),
    };
    set_target(&target, edits)
}

fn replace_line<F: Samples>(
    part: LinePart,
    regex: &Regex,
    with: &[u8],
    facts: &F,
    edits: &mut HeaderEdits,
) -> Result<(), Failed> {
    let current = current_target(facts, edits);
    let (subject, rest) = match part {
        LinePart::Path => split_query(current),
        _ => (current, &b""[..]),
    };
    let mut target = Vec::new();
    if !regex.replace_whole(subject, with, &mut target) {
        return Ok(());
    }
    target.extend_from_slice(rest);
    set_target(&target, edits)
}

fn set_method<F: Samples>(method: &[u8], facts: &F, edits: &mut HeaderEdits) -> Result<(), Failed> {
    let framing = |m: &[u8]| m.eq_ignore_ascii_case(b"HEAD") || m.eq_ignore_ascii_case(b"CONNECT");
    let token = !method.is_empty() && method.iter().all(|&b| is_token_byte(b));
    if !token || framing(method) || framing(facts.method()) {
        return Err(Failed);
    }
    edits.line_mut().set_method(method);
    Ok(())
}

fn set_target(target: &[u8], edits: &mut HeaderEdits) -> Result<(), Failed> {
    if target.is_empty() || target.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err(Failed);
    }
    edits.line_mut().set_target(target);
    Ok(())
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
