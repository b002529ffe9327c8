//! `server NAME ADDRESS [options]` and `default-server [options]`.
//!
//! A server starts from the `default-server` options in force when it is declared (the
//! defaults section's, then the backend's own `default-server` lines before it), and its own
//! options override them. The options are kept structured: `build.rs` turns them into the
//! server's TOML once the backend's `option httpchk` and `timeout check` are known.

use super::address;
use super::crt::with_base;
use super::proxy::Cx;
use super::sections::Line;
use super::settings::{ProxyCfg, ServerCfg, ServerParams, Src};
use super::tls::{self, At};
use super::units::{parse_time, parse_uint, Unit};

pub(crate) fn server(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let (Some(name), Some(spec)) = (line.word(1), line.word(2)) else {
        cx.error(line.no, "'server' needs a name and an address");
        return;
    };
    add(name, spec, None, &line.words[3..], line.no, p, cx);
}

/// `server-template PREFIX COUNT ADDRESS [options]`: slots filled by DNS.
pub(crate) fn server_template(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let (Some(prefix), Some(count), Some(spec)) = (line.word(1), line.word(2), line.word(3)) else {
        cx.error(
            line.no,
            "'server-template' needs a prefix, a count (10 or 1-10) and an address",
        );
        return;
    };
    add(
        prefix,
        spec,
        Some(count.to_owned()),
        &line.words[4..],
        line.no,
        p,
        cx,
    );
}

fn add(
    name: &str,
    spec: &str,
    count: Option<String>,
    options: &[String],
    no: usize,
    p: &mut ProxyCfg,
    cx: &mut Cx<'_>,
) {
    // An SRV name carries no port: the records give it.
    let address = if spec.starts_with('_') {
        Ok(spec.to_owned())
    } else {
        address::server_address(spec)
    };
    let address = match address {
        Ok(address) => address,
        Err(e) => {
            cx.error(no, e);
            return;
        }
    };
    let mut params = p.default_server.clone();
    apply(options, &mut params, no, cx);
    p.servers.push(ServerCfg {
        name: name.to_owned(),
        address,
        params,
        line: no,
        count,
    });
}

pub(crate) fn default_server(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let mut params = p.default_server.clone();
    apply(&line.words[1..], &mut params, line.no, cx);
    p.default_server = params;
}

/// Server options that take no argument.
fn flag(option: &str, s: &mut ServerParams) -> bool {
    match option {
        "check" => s.check = Some(true),
        "no-check" => s.check = Some(false),
        "backup" => s.backup = Some(true),
        "no-backup" => s.backup = Some(false),
        "disabled" => s.disabled = Some(true),
        "enabled" => s.disabled = Some(false),
        "ssl" => s.ssl = Some(true),
        "no-ssl" => s.ssl = Some(false),
        "check-ssl" => s.check_ssl = Some(true),
        "no-check-ssl" => s.check_ssl = Some(false),
        "send-proxy" => s.proxy_protocol = Some("v1"),
        "send-proxy-v2" => s.proxy_protocol = Some("v2"),
        "no-send-proxy" | "no-send-proxy-v2" => s.proxy_protocol = None,
        "no-ssl-reuse" => s.ssl_reuse = Some(false),
        "ssl-reuse" => s.ssl_reuse = Some(true),
        // Versions tern never uses: exact as written.
        "no-sslv3" | "no-tlsv10" | "no-tlsv11" => {}
        _ => return false,
    }
    true
}

/// Server options tern does not support yet, with how many arguments they take.
fn unsupported_arity(option: &str) -> Option<usize> {
    Some(match option {
        "agent-check"
        | "no-agent-check"
        | "check-send-proxy"
        | "send-proxy-v2-ssl"
        | "send-proxy-v2-ssl-cn"
        | "non-stick"
        | "allow-0rtt"
        | "no-tlsv12"
        | "no-tlsv13"
        | "force-sslv3"
        | "force-tlsv10"
        | "force-tlsv11"
        | "force-tlsv12"
        | "force-tlsv13"
        | "no-verifyhost"
        | "check-via-socks4"
        | "no-tls-tickets"
        | "tls-tickets" => 0,
        "minconn"
        | "crl-file"
        | "resolve-net"
        | "resolve-opts"
        | "pool-max-conn"
        | "pool-purge-delay"
        | "pool-low-conn"
        | "max-reuse"
        | "track"
        | "redir"
        | "source"
        | "namespace"
        | "verifyhost"
        | "ciphers"
        | "ciphersuites"
        | "curves"
        | "sigalgs"
        | "client-sigalgs"
        | "ssl-min-ver"
        | "ssl-max-ver"
        | "agent-port"
        | "agent-inter"
        | "agent-addr"
        | "agent-send"
        | "check-alpn"
        | "on-marked-down"
        | "on-marked-up"
        | "usesrc"
        | "hash-key"
        | "log-proto"
        | "log-bufsize"
        | "tcp-ut"
        | "check-pool-conn-name"
        | "pool-conn-name"
        | "sni-auto"
        | "shard"
        | "guid" => 1,
        _ => return None,
    })
}

/// Applies the options in `words` (after the address, or after `default-server`).
fn apply(words: &[String], s: &mut ServerParams, line: usize, cx: &mut Cx<'_>) {
    let mut i = 0;
    while i < words.len() {
        let option = words[i].as_str();
        if flag(option, s) {
            i += 1;
            continue;
        }
        if let Some(arity) = unsupported_arity(option) {
            cx.unsupported(line, option);
            i += 1 + arity;
            continue;
        }
        if option == "tfo" {
            cx.no_effect(line, option, "a TCP tuning tern does not apply");
            i += 1;
            continue;
        }
        if let Some(rest) = option.strip_prefix("set-proxy-v2-tlv-fmt") {
            match words.get(i + 1) {
                Some(format) => proxy_v2_tlv_fmt(rest, format, s, line, cx),
                None => cx.error(line, format!("server option '{option}' needs a format")),
            }
            i += 2;
            continue;
        }
        let Some(arg) = words.get(i + 1).map(String::as_str) else {
            if VALUED.contains(&option) {
                cx.error(line, format!("server option '{option}' needs an argument"));
            } else {
                cx.unknown(line, option);
            }
            return;
        };
        match valued(option, arg, s, line, cx) {
            Some(()) => i += 2,
            None => {
                cx.unknown(line, option);
                return;
            }
        }
    }
}

/// The options [`valued`] handles.
const VALUED: &[&str] = &[
    "inter",
    "fastinter",
    "downinter",
    "slowstart",
    "rise",
    "fall",
    "port",
    "weight",
    "maxconn",
    "maxqueue",
    "error-limit",
    "addr",
    "check-sni",
    "check-proto",
    "cookie",
    "verify",
    "ca-file",
    "crt",
    "sni",
    "alpn",
    "proto",
    "ws",
    "observe",
    "on-error",
    "init-addr",
    "id",
    "npn",
    "resolve-prefer",
    "proxy-v2-options",
    "resolvers",
];

/// Applies an option that takes one argument; `None` when `option` is not one.
fn valued(
    option: &str,
    arg: &str,
    s: &mut ServerParams,
    line: usize,
    cx: &mut Cx<'_>,
) -> Option<()> {
    let time = |slot: &mut Option<u64>, cx: &mut Cx<'_>| match parse_time(arg, Unit::Ms) {
        Ok(ms) => *slot = Some(ms),
        Err(e) => cx.error(line, format!("'{option}': {e}")),
    };
    match option {
        "inter" => time(&mut s.inter, cx),
        "fastinter" => time(&mut s.fastinter, cx),
        "downinter" => time(&mut s.downinter, cx),
        "slowstart" => time(&mut s.slowstart, cx),
        "rise" | "fall" | "port" | "weight" | "maxconn" | "maxqueue" | "error-limit" => {
            let Ok(n) = parse_uint(arg) else {
                cx.error(line, format!("'{option}': invalid number '{arg}'"));
                return Some(());
            };
            let slot = match option {
                "rise" => &mut s.rise,
                "fall" => &mut s.fall,
                "port" => &mut s.port,
                "weight" => &mut s.weight,
                "maxconn" => &mut s.maxconn,
                "maxqueue" => &mut s.maxqueue,
                _ => &mut s.error_limit,
            };
            *slot = Some(n);
        }
        "addr" => s.addr = Some(arg.to_owned()),
        "check-sni" => s.check_sni = Some(arg.to_owned()),
        "check-proto" => match arg {
            "h1" | "h2" => s.check_proto = Some(arg.to_owned()),
            other => cx.error(
                line,
                format!("'check-proto {other}' is not supported (checks speak h1 or h2)"),
            ),
        },
        "cookie" => s.cookie = Some(arg.to_owned()),
        "verify" => match arg {
            "none" => s.verify_none = Some(true),
            "required" => s.verify_none = Some(false),
            _ => cx.error(line, format!("'verify {arg}': none or required expected")),
        },
        "ca-file" => s.ca_file = Some(with_base(cx.global.ca_base.as_deref(), arg)),
        "crt" => s.crt = Some(with_base(cx.global.crt_base.as_deref(), arg)),
        "sni" => sni(arg, s, line, cx),
        "alpn" => {
            let context = cx.context.clone();
            let at = At {
                line,
                context: &context,
            };
            s.alpn = Some(tls::alpn(arg, &at, cx.diag));
        }
        "ws" => match arg {
            "auto" | "h1" | "h2" => s.ws = Some(arg.to_owned()),
            _ => cx.error(line, format!("'ws {arg}': auto, h1 or h2 expected")),
        },
        "proto" => match arg {
            "h1" | "h2" => s.proto = Some(arg.to_owned()),
            _ => cx.unsupported_because(
                line,
                &format!("proto {arg}"),
                "tern speaks h1 and h2 to servers",
            ),
        },
        "observe" => match arg {
            "layer4" | "layer7" => s.observe = Some(arg.to_owned()),
            "none" => s.observe = None,
            _ => cx.error(line, format!("'observe {arg}': layer4 or layer7 expected")),
        },
        "on-error" => match arg {
            "fastinter" | "fail-check" | "sudden-death" | "mark-down" => {
                s.on_error = Some(arg.to_owned())
            }
            _ => cx.error(
                line,
                format!(
                    "'on-error {arg}': fastinter, fail-check, sudden-death or mark-down expected"
                ),
            ),
        },
        "init-addr" => {
            let methods = arg.split(',').filter(|m| !m.is_empty());
            s.init_addr = Some(Src::new(methods.map(str::to_owned).collect(), line));
        }
        "resolvers" => s.resolvers = Some(arg.to_owned()),
        "proxy-v2-options" => proxy_v2_options(arg, s, line, cx),
        "id" => cx.no_effect(line, option, "it only labels the server in HAProxy's stats"),
        "npn" => cx.no_effect(line, option, "tern does not negotiate NPN"),
        "resolve-prefer" => match arg {
            "ipv4" | "ipv6" => s.resolve_prefer = Some(arg.to_owned()),
            _ => cx.error(
                line,
                format!("'resolve-prefer {arg}': ipv4 or ipv6 expected"),
            ),
        },
        _ => return None,
    }
    Some(())
}

/// `sni EXPR`: a constant (`str(NAME)`) or the request's Host header.
fn sni(expr: &str, s: &mut ServerParams, line: usize, cx: &mut Cx<'_>) {
    if let Some(name) = expr.strip_prefix("str(").and_then(|r| r.strip_suffix(')')) {
        s.sni = Some(name.to_owned());
    } else if matches!(
        expr.to_ascii_lowercase().as_str(),
        "req.hdr(host)"
            | "hdr(host)"
            | "req.hdr(host,1)"
            | "hdr(host,1)"
            | "req.hdr(host),host_only"
            | "req.host"
    ) {
        s.sni = Some("host".to_owned());
    } else {
        cx.unsupported_because(
            line,
            &format!("sni {expr}"),
            "tern sends a fixed name (str(NAME)) or the request's Host (req.hdr(host))",
        );
    }
}

/// `proxy-v2-options LIST`: `crc32c` is tern's `proxy_v2_crc32c`; the TLVs of the client's
/// TLS are what tern sends whenever it terminated that TLS; the rest is not sent yet.
fn proxy_v2_options(list: &str, s: &mut ServerParams, line: usize, cx: &mut Cx<'_>) {
    for option in list.split(',') {
        match option {
            "crc32c" => s.proxy_v2_crc32c = Some(line),
            // Sent by tern whenever it terminated the client's TLS.
            "ssl" | "ssl-cipher" | "authority" => {}
            other => cx.unsupported_because(
                line,
                &format!("proxy-v2-options {other}"),
                "tern's PROXY v2 headers carry crc32c and the TLVs of ssl, ssl-cipher and authority",
            ),
        }
    }
}

/// `set-proxy-v2-tlv-fmt(<id>) <fmt>` (HAProxy 2.9+): tern's `proxy_v2_tlvs`, whose `tern
/// check` judges the format and the type (`rest` is what follows the keyword: `(<id>)`).
fn proxy_v2_tlv_fmt(rest: &str, format: &str, s: &mut ServerParams, line: usize, cx: &mut Cx<'_>) {
    let id = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| "expects set-proxy-v2-tlv-fmt(<TLV ID>) <format>".to_owned())
        .and_then(crate::validate::tlv_id);
    match id {
        Ok(id) => s.proxy_v2_tlvs.push((id, format.to_owned(), line)),
        Err(e) => cx.error(line, format!("'set-proxy-v2-tlv-fmt{rest}': {e}")),
    }
}
