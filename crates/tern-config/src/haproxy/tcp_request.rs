//! `tcp-request inspect-delay` and `tcp-request content accept|reject [if|unless COND]`: what
//! a TLS passthrough frontend routed by SNI needs (`tcp_request` in tern's TOML).
//!
//! Only the content rules that accept or reject are translated, and of the connection rules
//! `accept`, `reject`, `silent-drop` and `track-sc0|1|2` (`tcp_request.connection`), and
//! `tcp-request connection expect-proxy layer4 if { src NET ... }` (or `if src NET ...`), which
//! becomes `accept_proxy_from` (the PROXY header required from those sources only). The other
//! `tcp-request` rulesets and actions (`session`, `set-var`, other conditions, ...) are errors
//! naming their line, never dropped: a rule that filtered traffic and silently vanished would
//! let through what the operator meant to refuse.

use super::proxy::Cx;
use super::rules::cond;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};
use super::toml_text::{string, Inline};
use super::units::Unit;

pub(crate) fn tcp_request(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    if !cx.not_in_defaults(line) {
        return;
    }
    if !cx.kind.has_frontend() {
        let why = "tern reads a connection's first bytes in frontends only";
        cx.unsupported_because(line.no, "tcp-request in a backend", why);
        return;
    }
    match line.word(1) {
        Some("inspect-delay") => {
            if let Some(ms) = cx.time_arg(line, 2, Unit::Ms) {
                p.inspect_delay = Some(Src::new(ms, line.no));
            }
        }
        Some("content") => content(line, p, cx),
        Some("connection") => connection(line, p, cx),
        Some(other) => cx.unsupported(line.no, &format!("tcp-request {other}")),
        None => cx.error(
            line.no,
            "'tcp-request' needs a ruleset (inspect-delay, content)",
        ),
    }
}

fn content(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(action) = cx.arg(line, 2, "an action") else {
        return;
    };
    if action != "accept" && action != "reject" {
        cx.unsupported(line.no, &format!("tcp-request content {action}"));
        return;
    }
    let Ok(condition) = cond(line, &line.words[3..], cx) else {
        return;
    };
    let mut t = Inline::new();
    t.set("action", string(action));
    if let Some((key, text)) = condition {
        t.set(key, string(&text));
    }
    p.tcp_content.push(Src::new(t.text(), line.no));
}

/// `tcp-request connection accept|reject|silent-drop|track-scN KEY [table T] [if|unless
/// COND]`, or `expect-proxy layer4 if { src NET ... }` (or `if src NET ...`).
fn connection(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(action) = line.word(2) else {
        cx.error(line.no, "'tcp-request connection' needs an action");
        return;
    };
    let mut t = Inline::new();
    t.set("action", string(action));
    let rest = match action {
        "expect-proxy" => return expect_proxy(line, p, cx),
        "accept" | "reject" | "silent-drop" => &line.words[3..],
        "track-sc0" | "track-sc1" | "track-sc2" => {
            match super::rules::track_args(line, 3, &mut t, cx) {
                Some(rest) => rest,
                None => return,
            }
        }
        other => {
            cx.unsupported(line.no, &format!("tcp-request connection {other}"));
            return;
        }
    };
    let Ok(condition) = cond(line, rest, cx) else {
        return;
    };
    if let Some((key, text)) = condition {
        t.set(key, string(&text));
    }
    p.tcp_connection.push(Src::new(t.text(), line.no));
}

fn expect_proxy(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let words: Vec<&str> = line.words[2..].iter().map(String::as_str).collect();
    let sources = match words.as_slice() {
        ["expect-proxy", "layer4", "if", "{", "src", nets @ .., "}"] => nets,
        ["expect-proxy", "layer4", "if", "src", nets @ ..] => nets,
        _ => {
            let what = "tcp-request connection other than `expect-proxy layer4 if { src NET ... }`";
            cx.unsupported(line.no, what);
            return;
        }
    };
    if sources.is_empty() || sources.iter().any(|s| s.starts_with('-')) {
        cx.unsupported(
            line.no,
            "tcp-request connection expect-proxy with these `src` flags",
        );
        return;
    }
    for source in sources {
        p.expect_proxy_from.push(Src::new(string(source), line.no));
    }
}
