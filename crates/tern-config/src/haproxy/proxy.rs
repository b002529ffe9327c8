//! The keywords of `defaults`, `frontend`, `backend` and `listen` sections: which ones exist
//! where, and which file handles each.
//!
//! A keyword of the wrong side (`balance` in a frontend, `maxconn` in a backend) is accepted
//! with a warning, as HAProxy does ("ignored because the proxy has no backend capability").

use std::path::Path;

use super::diag::Diag;
use super::global::GlobalCfg;
use super::sections::{Kind, Line};
use super::settings::{ProxyCfg, Src};
use super::units::{parse_uint, Unit};
use super::{bind, check, options, persist, rules, server, stats, timeouts};

/// What a keyword handler needs besides the proxy's settings.
pub(crate) struct Cx<'a> {
    pub kind: Kind,
    /// `frontend web`, `defaults`, ...
    pub context: String,
    pub global: &'a GlobalCfg,
    pub diag: &'a mut Diag,
    /// The configuration file's directory (relative paths, crt directories, crt-lists).
    pub base_dir: &'a Path,
}

impl Cx<'_> {
    pub fn error(&mut self, line: usize, message: impl Into<String>) {
        self.diag.error(line, &self.context, message);
    }

    pub fn unsupported(&mut self, line: usize, what: &str) {
        self.diag.unsupported(line, &self.context, what);
    }

    pub fn unsupported_because(&mut self, line: usize, what: &str, why: &str) {
        self.diag
            .unsupported_because(line, &self.context, what, why);
    }

    pub fn no_effect(&mut self, line: usize, keyword: &str, why: &str) {
        self.diag.no_effect(line, &self.context, keyword, why);
    }

    pub fn approx(&mut self, line: usize, keyword: &str, what: &str) {
        self.diag.approx(line, &self.context, keyword, what);
    }

    /// The argument at `words[i]`, or an error naming the keyword.
    pub fn arg<'w>(&mut self, line: &'w Line, i: usize, what: &str) -> Option<&'w str> {
        let arg = line.word(i);
        if arg.is_none() {
            self.error(line.no, format!("'{}' needs {what}", line.keyword()));
        }
        arg
    }

    /// A non-negative integer argument at `words[i]`.
    pub fn uint_arg(&mut self, line: &Line, i: usize) -> Option<u64> {
        let text = self.arg(line, i, "a number")?;
        match parse_uint(text) {
            Ok(v) => Some(v),
            Err(e) => {
                self.error(line.no, format!("'{}': {e}", line.keyword()));
                None
            }
        }
    }

    /// A time argument at `words[i]`.
    pub fn time_arg(&mut self, line: &Line, i: usize, unit: Unit) -> Option<u64> {
        let text = self.arg(line, i, "a time")?;
        match super::units::parse_time(text, unit) {
            Ok(v) => Some(v),
            Err(e) => {
                self.error(line.no, format!("'{}': {e}", line.keyword()));
                None
            }
        }
    }

    /// Whether this section accepts the keyword for the side it serves; warns when not.
    pub fn side(&mut self, line: &Line, frontend: bool) -> bool {
        let ok = if frontend {
            self.kind.has_frontend()
        } else {
            self.kind.has_backend()
        };
        if !ok {
            let part = if frontend { "frontend" } else { "backend" };
            let why = format!("it only applies to a {part} (or a listen section)");
            self.no_effect(line.no, line.keyword(), &why);
        }
        ok
    }

    /// Refuses keywords of a proxy that tern cannot take from a defaults section.
    pub fn not_in_defaults(&mut self, line: &Line) -> bool {
        if self.kind == Kind::Defaults {
            let what = format!("{} in a defaults section", line.keyword());
            self.unsupported(line.no, &what);
            return false;
        }
        true
    }
}

/// Keywords HAProxy has in proxies that tern does not support yet.
const UNSUPPORTED: &[&str] = &[
    "backlog",
    "tcp-response",
    "tcp-check",
    "filter",
    "unique-id-format",
    "unique-id-header",
    "http-after-response",
    "use-server",
    "force-persist",
    "ignore-persist",
    "persist",
    "dispatch",
    "source",
    "monitor",
    "monitor-net",
    "errorloc",
    "errorloc302",
    "errorloc303",
    "external-check",
    "server-state-file-name",
    "load-server-state-from-file",
    "enabled",
    "disabled",
    "grace",
    "http-send-name-header",
    "max-keep-alive-queue",
    "max-session-srv-conns",
    "use-fcgi-app",
    "email-alert",
    "retry-on",
    "clitcpka-cnt",
    "clitcpka-idle",
    "clitcpka-intvl",
    "srvtcpka-cnt",
    "srvtcpka-idle",
    "srvtcpka-intvl",
];

/// Applies one line of a proxy section to `p`.
pub(crate) fn apply(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let keyword = line.keyword();
    match keyword {
        "mode" => mode(line, p, cx),
        "bind" => {
            if cx.kind == Kind::Defaults || !cx.side(line, true) {
                if cx.kind == Kind::Defaults {
                    cx.error(line.no, "'bind' is not allowed in a defaults section");
                }
                return;
            }
            bind::bind(line, p, cx);
        }
        "server" => {
            if cx.kind == Kind::Defaults {
                cx.error(line.no, "'server' is not allowed in a defaults section");
            } else if cx.side(line, false) {
                server::server(line, p, cx);
            }
        }
        "server-template" => {
            if cx.kind == Kind::Defaults {
                cx.error(
                    line.no,
                    "'server-template' is not allowed in a defaults section",
                );
            } else if cx.side(line, false) {
                server::server_template(line, p, cx);
            }
        }
        "default-server" => {
            if cx.side(line, false) {
                server::default_server(line, p, cx);
            }
        }
        "timeout" => timeouts::timeout(line, p, cx),
        "maxconn" => {
            if cx.side(line, true) {
                p.maxconn = cx.uint_arg(line, 1).map(|v| Src::new(v, line.no));
            }
        }
        "rate-limit" => {
            if cx.side(line, true) {
                if line.word(1) == Some("sessions") {
                    p.rate_limit = cx.uint_arg(line, 2).map(|v| Src::new(v, line.no));
                } else {
                    cx.error(
                        line.no,
                        "'rate-limit' needs 'sessions' and a rate per second",
                    );
                }
            }
        }
        "monitor-uri" => {
            if cx.side(line, true) {
                p.monitor_uri = cx
                    .arg(line, 1, "a path")
                    .map(|v| Src::new(v.to_owned(), line.no));
            }
        }
        "default_backend" => {
            if cx.side(line, true) {
                p.default_backend = cx
                    .arg(line, 1, "a backend name")
                    .map(|v| Src::new(v.to_owned(), line.no));
            }
        }
        "use_backend" | "acl" | "http-request" | "http-response" | "redirect" => {
            rules::rule(line, p, cx)
        }
        "tcp-request" => super::tcp_request::tcp_request(line, p, cx),
        "balance" | "hash-type" | "hash-balance-factor" => {
            if cx.side(line, false) {
                super::balance::balance(line, p, cx);
            }
        }
        "retries" => {
            if cx.side(line, false) {
                p.retries = cx.uint_arg(line, 1).map(|v| Src::new(v, line.no));
            }
        }
        "option" => options::option(line, &line.words[1..], true, p, cx),
        "no" if line.word(1) == Some("option") => {
            options::option(line, &line.words[2..], false, p, cx)
        }
        "http-check" => {
            if cx.side(line, false) {
                check::http_check(line, p, cx);
            }
        }
        "http-reuse" => options::http_reuse(line, p, cx),
        "cookie" => {
            if cx.side(line, false) {
                persist::cookie(line, p, cx);
            }
        }
        "stick-table" => persist::stick_table(line, p, cx),
        "stick" => {
            if cx.side(line, false) {
                persist::stick(line, p, cx);
            }
        }
        "stats" => stats::stats(line, p, cx),
        "unique-id-format" | "unique-id-header" | "log-format" | "capture" => {
            super::logging::logging(line, p, cx)
        }
        "log" | "log-format-sd" | "error-log-format" | "log-tag" | "declare" => cx.no_effect(
            line.no,
            keyword,
            "HAProxy's logging is not converted; tern's access log is configured in [access_log]",
        ),
        "errorfile" | "errorfiles" | "http-error" => super::error_pages::error_page(line, p, cx),
        "compression" => super::compression::compression(line, p, cx),
        "description" | "id" => cx.no_effect(
            line.no,
            keyword,
            "it only labels the proxy in HAProxy's stats",
        ),
        "bind-process" => cx.no_effect(line.no, keyword, "every tern worker serves every bind"),
        "fullconn" => cx.no_effect(
            line.no,
            keyword,
            "it only matters with servers' 'minconn', which tern does not have",
        ),
        _ if UNSUPPORTED.contains(&keyword) => cx.unsupported(line.no, keyword),
        _ => cx.unknown(line.no, keyword),
    }
}

impl Cx<'_> {
    pub fn unknown(&mut self, line: usize, keyword: &str) {
        self.diag.unknown(line, &self.context, keyword);
    }
}

fn mode(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    match line.word(1) {
        Some(mode @ ("http" | "tcp" | "health" | "log" | "spop")) => {
            p.mode = Some(Src::new(mode.to_owned(), line.no))
        }
        Some(other) => cx.error(line.no, format!("unknown mode '{other}' (http or tcp)")),
        None => cx.error(line.no, "'mode' needs http or tcp"),
    }
}
