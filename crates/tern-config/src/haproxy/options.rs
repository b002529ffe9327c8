//! `option NAME [args]`, `no option NAME` and `http-reuse`.
//!
//! HAProxy's connection modes (`http-keep-alive`, `http-server-close`, `httpclose`) are tern's
//! `connection_mode`, one value per section; the last option wins, and `no option X` goes back
//! to keep-alive only when X is the current mode (HAProxy's rule, useful to cancel a mode set
//! in a defaults section). `build.rs` writes the frontend's value as is and a backend's
//! `httpclose` as `"server-close"`, which is what it does in HAProxy.
//! `redispatch` exists in tern but redispatches every retry, not only the last one.

use super::check;
use super::proxy::Cx;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};
use crate::model::ConnectionMode;

const LOGGING: &str =
    "HAProxy's logging is not converted; tern's access log is configured in [access_log]";

/// Options that do nothing in tern, with the reason.
fn no_effect_reason(name: &str) -> Option<&'static str> {
    Some(match name {
        "dontlognull"
        | "dontlog-normal"
        | "log-separate-errors"
        | "logasap"
        | "log-health-checks"
        | "http-ignore-probes" => LOGGING,
        "tcpka" | "clitcpka" | "srvtcpka" => "tern sets no TCP keep-alive probes",
        "splice-auto" | "splice-request" | "splice-response" => "a data-copy tuning of HAProxy",
        "http-use-htx" | "http-no-delay" | "independent-streams" | "socket-stats" | "contstats" => {
            "it concerns HAProxy's internals"
        }
        "disable-h2-upgrade" => "tern has no HTTP/2",
        "prefer-last-server" => "tern's connection pool picks idle server connections itself",
        _ => return None,
    })
}

/// Options HAProxy has that tern does not support yet.
const UNSUPPORTED: &[&str] = &[
    "forceclose",
    "http-tunnel",
    "http-pretend-keepalive",
    "abortonclose",
    "originalto",
    "persist",
    "nolinger",
    "transparent",
    "accept-invalid-http-request",
    "accept-invalid-http-response",
    "accept-unsafe-violations-in-http-request",
    "accept-unsafe-violations-in-http-response",
    "checkcache",
    "h1-case-adjust-bogus-client",
    "h1-case-adjust-bogus-server",
    "http-restrict-req-hdr-names",
    "forwarded",
    "ssl-hello-chk",
    "mysql-check",
    "pgsql-check",
    "redis-check",
    "smtpchk",
    "ldap-check",
    "spop-check",
    "external-check",
    "idle-close-on-response",
    "http_proxy",
    "http-drop-request-trailers",
    "http-drop-response-trailers",
];

/// `option ...` (`enable`) or `no option ...`; `words` starts at the option's name.
pub(crate) fn option(
    line: &Line,
    words: &[String],
    enable: bool,
    p: &mut ProxyCfg,
    cx: &mut Cx<'_>,
) {
    let Some(name) = words.first().map(String::as_str) else {
        cx.error(line.no, "'option' needs a name");
        return;
    };
    let args = &words[1..];
    let keyword = format!("option {name}");
    let set = |v: bool| Some(Src::new(v, line.no));
    match name {
        "forwardfor" => {
            if enable {
                forwardfor(args, line, cx);
            }
            p.forwardfor = set(enable);
        }
        "http-keep-alive" | "http-server-close" | "httpclose" => {
            connection_mode(line, name, args, enable, p, cx);
        }
        "redispatch" => {
            // `option redispatch 1` redispatches every retry, as tern does; the default (-1)
            // only the last one.
            let every = args.first().is_some_and(|a| a == "1");
            if enable && !every && cx.side(line, false) {
                cx.approx(
                    line.no,
                    &keyword,
                    "tern sends every retry to another server ('option redispatch 1'), not only the last one",
                );
            }
            p.redispatch = set(enable);
        }
        "allbackups" => p.allbackups = set(enable),
        "h2-workaround-bogus-websocket-clients" => {
            // HAProxy's way to stop announcing RFC 8441 to clients that mishandle it.
            if cx.side(line, true) {
                p.h2_websocket = set(!enable);
            }
        }
        "httpchk" => {
            if enable {
                if cx.side(line, false) {
                    check::httpchk(line, args, p, cx);
                }
            } else {
                p.httpchk = None;
            }
        }
        "tcp-check" => {
            // Without tcp-check rules this is a plain connect check: what `check` does.
            if enable {
                p.httpchk = None;
            }
        }
        "httplog" | "httpslog" | "tcplog" => {
            // HAProxy: the option replaces an earlier `log-format` (tern's own line then).
            if enable {
                p.log_format = None;
            }
            cx.no_effect(line.no, &keyword, LOGGING);
        }
        "http-buffer-request" => cx.approx(
            line.no,
            &keyword,
            "tern streams the request body to the server as it arrives instead of waiting for it",
        ),
        _ => {
            if let Some(reason) = no_effect_reason(name) {
                cx.no_effect(line.no, &keyword, reason);
            } else if UNSUPPORTED.contains(&name) {
                cx.unsupported(line.no, &keyword);
            } else {
                cx.error(line.no, format!("unknown option '{name}'"));
            }
        }
    }
}

/// `[no] option http-keep-alive|http-server-close|httpclose` (no arguments).
fn connection_mode(
    line: &Line,
    name: &str,
    args: &[String],
    enable: bool,
    p: &mut ProxyCfg,
    cx: &mut Cx<'_>,
) {
    if let Some(extra) = args.first() {
        cx.error(
            line.no,
            format!("'option {name}' takes no argument, got '{extra}'"),
        );
        return;
    }
    let mode = match name {
        "http-server-close" => ConnectionMode::ServerClose,
        "httpclose" => ConnectionMode::Close,
        _ => ConnectionMode::KeepAlive,
    };
    let current = p
        .conn_mode
        .as_ref()
        .map_or(ConnectionMode::KeepAlive, |m| m.v);
    if enable {
        p.conn_mode = Some(Src::new(mode, line.no));
    } else if current == mode {
        p.conn_mode = Some(Src::new(ConnectionMode::KeepAlive, line.no));
    }
}

/// `option forwardfor [except NETWORK] [header NAME] [if-none]`.
fn forwardfor(args: &[String], line: &Line, cx: &mut Cx<'_>) {
    let mut i = 0;
    while i < args.len() {
        match (args[i].as_str(), args.get(i + 1)) {
            ("except", Some(net)) => {
                let what = format!("tern adds X-Forwarded-For for every client, {net} included");
                cx.approx(line.no, "option forwardfor except", &what);
                i += 2;
            }
            ("header", Some(name)) => {
                let what = format!("option forwardfor header {name}");
                cx.unsupported_because(line.no, &what, "tern always uses X-Forwarded-For");
                i += 2;
            }
            ("if-none", _) => {
                cx.approx(
                    line.no,
                    "option forwardfor if-none",
                    "tern appends the client's address even when the request already has X-Forwarded-For",
                );
                i += 1;
            }
            (other, _) => {
                cx.error(
                    line.no,
                    format!("'option forwardfor': unexpected '{other}'"),
                );
                return;
            }
        }
    }
}

/// `http-reuse never|safe|aggressive|always`.
pub(crate) fn http_reuse(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    if !cx.side(line, false) {
        return;
    }
    match line.word(1) {
        Some("never") => p.reuse_never = Some(Src::new(true, line.no)),
        Some("safe" | "aggressive" | "always") => p.reuse_never = Some(Src::new(false, line.no)),
        Some(other) => cx.error(
            line.no,
            format!("'http-reuse {other}': never, safe, aggressive or always expected"),
        ),
        None => cx.error(
            line.no,
            "'http-reuse' needs never, safe, aggressive or always",
        ),
    }
}
