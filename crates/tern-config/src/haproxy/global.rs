//! The `global` section → `[global]`, `[control]`, and defaults for every TLS bind.

use super::cpu_map::{self, CpuMap};
use super::diag::Diag;
use super::sections::Line;
use super::settings::Src;
use super::tls::{self, At, TlsOpts};
use super::units::{parse_time, parse_uint, Unit};

/// What the `global` sections say, as far as tern uses it.
#[derive(Debug, Clone, Default)]
pub(crate) struct GlobalCfg {
    /// Line of the first `global` section.
    pub line: usize,
    /// The `http-errors` sections: name → (status, file) of each `errorfile`, with its line.
    pub http_errors: std::collections::HashMap<String, Vec<Src<(u16, String)>>>,
    pub nbthread: Option<Src<u64>>,
    pub nbproc: Option<Src<u64>>,
    pub cpu_maps: Vec<Src<CpuMap>>,
    pub maxconn: Option<Src<u64>>,
    pub hard_stop_after: Option<Src<u64>>,
    pub maxsslrate: Option<Src<u64>>,
    pub maxconnrate: Option<Src<u64>>,
    pub maxsessrate: Option<Src<u64>>,
    pub profiling: Option<Src<bool>>,
    pub crt_base: Option<String>,
    pub ca_base: Option<String>,
    /// `ssl-dh-param-file`: the DH parameters of binds on the OpenSSL engine (the only ones
    /// offering DHE).
    pub dh_param_file: Option<String>,
    /// `ssl-default-bind-*`: the starting point of every `ssl` bind.
    pub bind_tls: TlsOpts,
    /// `ssl-server-verify`: the default `verify` of servers with `ssl`.
    pub server_verify_none: bool,
    /// `tune.ssl.cachesize` (HAProxy's default: 20000 sessions).
    pub ssl_cache_size: Option<u64>,
    /// `tune.bufsize`, as the largest request head.
    pub max_head_size: Option<Src<u64>>,
    /// `tune.http.maxhdr`.
    pub max_headers: Option<Src<u64>>,
    /// `tune.comp.maxlevel`: the gzip level of every proxy's `compression`.
    pub comp_maxlevel: Option<Src<u64>>,
    /// `stats socket PATH [mode M]`.
    pub socket: Option<Src<String>>,
    pub socket_mode: Option<String>,
}

const CONTEXT: &str = "global";

/// Global keywords that do nothing in tern, with the reason.
fn no_effect_reason(keyword: &str) -> Option<&'static str> {
    Some(match keyword {
        "user" | "group" | "uid" | "gid" => {
            "tern runs as the user and group that start it (set them in the service manager)"
        }
        "daemon" => "tern runs in the foreground; let the service manager run it in the background",
        "master-worker" => {
            "tern is a single process; reloads (SIGHUP) and binary upgrades are built in"
        }
        "pidfile" => "tern writes no pid file; the service manager knows its pid",
        "chroot" => "tern does not chroot; run it under a service manager's sandboxing instead",
        "quiet" => "tern's output is set with --log-level",
        "log" | "log-tag" | "log-send-hostname" => {
            "HAProxy's log lines are not converted; tern's access log is configured in [access_log]"
        }
        "node" | "description" => "these only label HAProxy's stats page",
        "ulimit-n" => "set the file descriptor limit in the service manager (LimitNOFILE)",
        "spread-checks" => "tern has no setting for this",
        "insecure-fork-wanted"
        | "set-dumpable"
        | "expose-experimental-directives"
        | "zero-warning" => "this only concerns HAProxy's own process",
        "busy-polling" | "noepoll" | "nosplice" | "nogetaddrinfo" | "noreuseport"
        | "max-spread-checks" => "a tuning of HAProxy's internals",
        "tune.ssl.default-dh-param" => {
            "DHE runs on the OpenSSL engine with RFC 7919 ffdhe2048 (ssl-dh-param-file sets another)"
        }
        "tune.ssl.lifetime" => "tern's session lifetime follows its ticket key rotation",
        _ if keyword.starts_with("tune.") => "a tuning of HAProxy's internals",
        _ => return None,
    })
}

/// Global keywords HAProxy has and tern does not support yet.
const UNSUPPORTED: &[&str] = &[
    "maxsslconn",
    "maxpipes",
    "maxcomprate",
    "maxcompcpuusage",
    "maxzlibmem",
    "lua-load",
    "lua-load-per-thread",
    "lua-prepend-path",
    "setenv",
    "presetenv",
    "resetenv",
    "unsetenv",
    "server-state-file",
    "server-state-base",
    "h1-case-adjust",
    "h1-case-adjust-file",
    "ssl-engine",
    "ssl-mode-async",
    "ssl-load-extra-files",
    "ssl-default-bind-client-sigalgs",
    "external-check",
    "thread-groups",
    "thread-group",
    "numa-cpu-mapping",
    "cluster-secret",
    "grace",
    "issuers-chain-path",
    "httpclient.resolvers.id",
    "ocsp-update.mode",
    "mworker-max-reloads",
    "ssl-security-level",
];

/// Applies one line of a `global` section.
pub(crate) fn apply(line: &Line, g: &mut GlobalCfg, diag: &mut Diag) {
    let keyword = line.keyword();
    let args = &line.words[1..];
    let no = line.no;
    let at = At {
        line: no,
        context: CONTEXT,
    };
    let one = |diag: &mut Diag| -> Option<&String> {
        if args.len() != 1 {
            diag.error(
                no,
                CONTEXT,
                format!("'{keyword}' takes exactly one argument"),
            );
            return None;
        }
        args.first()
    };
    let uint = |diag: &mut Diag| -> Option<Src<u64>> {
        let arg = one(diag)?;
        match parse_uint(arg) {
            Ok(v) => Some(Src { v, line: no }),
            Err(e) => {
                diag.error(no, CONTEXT, format!("'{keyword}': {e}"));
                None
            }
        }
    };
    match keyword {
        "nbthread" => g.nbthread = uint(diag),
        "nbproc" => match uint(diag) {
            // One process is what tern is; its threads follow `nbthread`.
            Some(n) if n.v == 1 => diag.no_effect(no, CONTEXT, keyword, "tern is one process"),
            Some(n) => {
                let what = format!("tern runs {} worker threads in one process (workers = {})", n.v, n.v);
                diag.approx(no, CONTEXT, keyword, &what);
                g.nbproc = Some(n);
            }
            None => {}
        },
        "cpu-map" => match cpu_map::parse(args) {
            Ok(map) => g.cpu_maps.push(Src { v: map, line: no }),
            Err(e) => diag.error(no, CONTEXT, e),
        },
        "maxconn" => g.maxconn = uint(diag),
        "maxsslrate" => g.maxsslrate = uint(diag),
        "maxconnrate" => g.maxconnrate = uint(diag),
        "maxsessrate" => g.maxsessrate = uint(diag),
        "hard-stop-after" => {
            if let Some(arg) = one(diag) {
                match parse_time(arg, Unit::Ms) {
                    Ok(ms) => g.hard_stop_after = Some(Src { v: ms, line: no }),
                    Err(e) => diag.error(no, CONTEXT, format!("'{keyword}': {e}")),
                }
            }
        }
        "crt-base" => g.crt_base = one(diag).cloned(),
        "ssl-dh-param-file" => g.dh_param_file = one(diag).cloned(),
        "ca-base" => g.ca_base = one(diag).cloned(),
        "profiling.tasks" => profiling(args, no, g, diag),
        "default-path" => default_path(args, no, diag),
        "ssl-default-bind-ciphers" => {
            if let Some(arg) = one(diag) {
                tls::set_ciphers(&mut g.bind_tls, arg, &at, diag);
            }
        }
        "ssl-default-bind-ciphersuites" | "ssl-default-bind-curves" | "ssl-default-bind-sigalgs" => {
            if let Some(arg) = one(diag) {
                let option = match keyword {
                    "ssl-default-bind-ciphersuites" => "ciphersuites",
                    "ssl-default-bind-curves" => "curves",
                    _ => "sigalgs",
                };
                let words = [option.to_owned(), arg.clone()];
                tls::option(&words, &mut g.bind_tls, &at, diag);
            }
        }
        "ssl-default-bind-options" => bind_options(args, &at, g, diag),
        "ssl-default-server-ciphers"
        | "ssl-default-server-ciphersuites"
        | "ssl-default-server-options"
        | "ssl-default-server-curves"
        | "ssl-default-server-sigalgs" => diag.approx(
            no,
            CONTEXT,
            keyword,
            "tern's own TLS client settings are used towards servers (TLS 1.2 and 1.3, ECDHE with AES-GCM or ChaCha20)",
        ),
        "ssl-server-verify" => match one(diag).map(String::as_str) {
            Some("none") => g.server_verify_none = true,
            Some("required") => g.server_verify_none = false,
            Some(other) => diag.error(no, CONTEXT, format!("'ssl-server-verify': 'none' or 'required' expected, not '{other}'")),
            None => {}
        },
        "tune.bufsize" => {
            if let Some(size) = uint(diag) {
                let head = size.v.clamp(8 * 1024, 1024 * 1024);
                let what = format!(
                    "tern limits the request head instead of a buffer: limits.max_head_size = {head} on every frontend"
                );
                diag.approx(no, CONTEXT, keyword, &what);
                g.max_head_size = Some(Src { v: head, line: no });
            }
        }
        "tune.http.maxhdr" => {
            if let Some(n) = uint(diag) {
                if n.v > 1000 {
                    diag.approx(no, CONTEXT, keyword, "tern allows at most 1000 header fields: limits.max_headers = 1000");
                }
                g.max_headers = Some(Src { v: n.v.clamp(1, 1000), line: no });
            }
        }
        "tune.ssl.cachesize" => g.ssl_cache_size = uint(diag).map(|s| s.v),
        "tune.comp.maxlevel" => {
            if let Some(n) = uint(diag) {
                if !(1..=9).contains(&n.v) {
                    diag.error(no, CONTEXT, "'tune.comp.maxlevel' must be between 1 and 9");
                }
                g.comp_maxlevel = Some(n);
            }
        }
        "stats" => stats(args, no, g, diag),
        // Read with the peers sections (`peers.rs`).
        "localpeer" => {
            one(diag);
        }
        _ => {
            if let Some(reason) = no_effect_reason(keyword) {
                diag.no_effect(no, CONTEXT, keyword, reason);
            } else if UNSUPPORTED.contains(&keyword) {
                diag.unsupported(no, CONTEXT, keyword);
            } else {
                diag.unknown(no, CONTEXT, keyword);
            }
        }
    }
}

fn profiling(args: &[String], no: usize, g: &mut GlobalCfg, diag: &mut Diag) {
    match args.first().map(String::as_str) {
        Some("on") => g.profiling = Some(Src { v: true, line: no }),
        Some("off") => g.profiling = Some(Src { v: false, line: no }),
        Some("auto") => {
            diag.approx(
                no,
                CONTEXT,
                "profiling.tasks",
                "tern has no automatic mode: profiling stays off until `set profiling on`",
            );
            g.profiling = Some(Src { v: false, line: no });
        }
        _ => diag.error(no, CONTEXT, "'profiling.tasks' takes 'on', 'off' or 'auto'"),
    }
}

fn default_path(args: &[String], no: usize, diag: &mut Diag) {
    match args.first().map(String::as_str) {
        // What tern always does.
        Some("config") => {}
        Some(_) => diag.approx(
            no,
            CONTEXT,
            "default-path",
            "tern resolves relative paths against the configuration file's directory ('default-path config')",
        ),
        None => diag.error(no, CONTEXT, "'default-path' needs an argument"),
    }
}

fn bind_options(args: &[String], at: &At<'_>, g: &mut GlobalCfg, diag: &mut Diag) {
    let mut i = 0;
    while i < args.len() {
        match tls::option(&args[i..], &mut g.bind_tls, at, diag) {
            Some(used) => i += used,
            None => {
                diag.error(
                    at.line,
                    at.context,
                    format!("unknown option '{}' in 'ssl-default-bind-options'", args[i]),
                );
                i += 1;
            }
        }
    }
}

/// `stats socket PATH [params]`, `stats timeout`, `stats maxconn`.
fn stats(args: &[String], no: usize, g: &mut GlobalCfg, diag: &mut Diag) {
    match args.first().map(String::as_str) {
        Some("socket") => stats_socket(&args[1..], no, g, diag),
        Some(sub @ ("timeout" | "maxconn" | "bind-process")) => diag.no_effect(
            no,
            CONTEXT,
            &format!("stats {sub}"),
            "tern's control socket has no such setting",
        ),
        Some(other) => diag.unknown(no, CONTEXT, &format!("stats {other}")),
        None => diag.error(
            no,
            CONTEXT,
            "'stats' needs a sub-keyword (socket, timeout, ...)",
        ),
    }
}

fn stats_socket(args: &[String], no: usize, g: &mut GlobalCfg, diag: &mut Diag) {
    let Some(address) = args.first() else {
        diag.error(no, CONTEXT, "'stats socket' needs a path");
        return;
    };
    let path = address.strip_prefix("unix@").unwrap_or(address);
    let tcp = [
        "ipv4@",
        "ipv6@",
        "tcp@",
        "tcp4@",
        "tcp6@",
        "fd@",
        "abns@",
        "sockpair@",
    ]
    .iter()
    .any(|p| path.starts_with(p))
        || (path.contains(':') && !path.contains('/'));
    if tcp {
        diag.unsupported_because(
            no,
            CONTEXT,
            "stats socket",
            "tern's control socket is a Unix socket; a 'listen' section with 'stats enable' gives the HTTP listener",
        );
        return;
    }
    if g.socket.is_some() {
        diag.unsupported_because(no, CONTEXT, "stats socket", "tern has one control socket");
        return;
    }
    g.socket = Some(Src {
        v: path.to_owned(),
        line: no,
    });
    let mut level_admin = false;
    let mut i = 1;
    while i < args.len() {
        let option = args[i].as_str();
        let takes_value = matches!(
            option,
            "mode"
                | "level"
                | "expose-fd"
                | "user"
                | "group"
                | "uid"
                | "gid"
                | "process"
                | "thread"
                | "name"
                | "id"
                | "severity-output"
        );
        if !takes_value {
            diag.unsupported(no, CONTEXT, option);
            i += 1;
            continue;
        }
        let Some(value) = args.get(i + 1) else {
            diag.error(
                no,
                CONTEXT,
                format!("'stats socket': '{option}' needs an argument"),
            );
            break;
        };
        match option {
            "mode" => g.socket_mode = Some(octal_mode(value)),
            "level" => level_admin = value == "admin",
            "expose-fd" => diag.no_effect(
                no,
                CONTEXT,
                "expose-fd",
                "tern hands its listening sockets over by itself in a binary upgrade",
            ),
            "user" | "group" | "uid" | "gid" => diag.approx(
                no,
                CONTEXT,
                option,
                "the socket is owned by the user and group tern runs as",
            ),
            _ => diag.no_effect(
                no,
                CONTEXT,
                option,
                "tern has one control socket for the whole process",
            ),
        }
        i += 2;
    }
    if !level_admin {
        diag.approx(
            no,
            CONTEXT,
            "stats socket",
            "tern's control socket accepts every command, like HAProxy's 'level admin' (restrict it with 'mode')",
        );
    }
}

/// `660` → `"0660"`: HAProxy's mode is octal digits.
fn octal_mode(mode: &str) -> String {
    if mode.len() < 4 && !mode.starts_with('0') {
        format!("0{mode}")
    } else {
        mode.to_owned()
    }
}

#[cfg(test)]
mod tests;
