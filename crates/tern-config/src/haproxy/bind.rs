//! `bind ADDRESS[,ADDRESS...] [options]` → `frontend.bind` items.
//!
//! Each address becomes one item; a TLS bind carries its whole `tls` table (certificates, the
//! `ssl-default-bind-*` settings it inherits, its own options), written on the bind's line so
//! that a problem in it is reported there. HAProxy's defaults that differ from tern's are
//! written out: no ALPN unless `alpn` is given (`alpn = []`), and a session cache of
//! `tune.ssl.cachesize` sessions (20000 by default) for TLS 1.2 session IDs.

use super::address;
use super::crt::{with_base, Certs};
use super::proxy::Cx;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};
use super::tls::{self, At, TlsOpts};
use super::toml_text::{string, strings, Inline};

/// HAProxy's default `tune.ssl.cachesize`.
const HAPROXY_SSL_CACHE: u64 = 20_000;

/// Options of one bind line, as read.
#[derive(Debug, Default)]
struct BindOpts {
    ssl: bool,
    certs: Certs,
    /// Whether a `crt` or `crt-list` was given at all.
    any_crt: bool,
    tls: TlsOpts,
    alpn: Option<Vec<String>>,
    verify: Option<String>,
    ca_file: Option<String>,
    crl_file: Option<String>,
    /// Options that need `ssl`, for the warning when it is missing.
    tls_only: Vec<String>,
    /// `proto NAME`: the protocol forced on the bind's connections.
    proto: Option<String>,
    /// `accept-proxy`: connections start with a PROXY protocol header.
    accept_proxy: bool,
}

/// Bind options that take no argument and do nothing in tern, with the reason.
fn no_effect_flag(option: &str) -> Option<&'static str> {
    Some(match option {
        "tfo" | "defer-accept" => "a TCP tuning tern does not apply",
        "no-ca-names" => "tern sends no CA names",
        _ => return None,
    })
}

/// Bind options that take one argument and do nothing in tern, with the reason.
fn no_effect_valued(option: &str) -> Option<&'static str> {
    Some(match option {
        "name" | "id" => "it only labels the bind in HAProxy's stats",
        "process" | "thread" => "every tern worker listens on every bind",
        "npn" => "tern does not negotiate NPN (ALPN only)",
        "nice" => "tern does not prioritise binds",
        _ => return None,
    })
}

/// Bind options tern does not support yet, with how many arguments they take.
fn unsupported_arity(option: &str) -> Option<usize> {
    Some(match option {
        "accept-netscaler-cip"
        | "transparent"
        | "v4v6"
        | "v6only"
        | "allow-0rtt"
        | "generate-certificates"
        | "no-alpn"
        | "quic-force-retry" => 0,
        "interface" | "mss" | "namespace" | "backlog" | "maxconn" | "crt-ignore-err"
        | "ca-ignore-err" | "ca-sign-file" | "ca-sign-pass" | "ca-verify-file"
        | "client-sigalgs" | "level" | "severity-output" | "expose-fd" | "mode" | "user"
        | "group" | "uid" | "gid" | "tcp-ut" | "ocsp-update" | "ssl-verifyhost" | "guid-prefix"
        | "idle-ping" => 1,
        _ => return None,
    })
}

pub(crate) fn bind(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(spec) = cx.arg(line, 1, "an address") else {
        return;
    };
    let addresses = match address::bind_addresses(spec) {
        Ok(addresses) => addresses,
        Err(e) => {
            cx.error(line.no, e);
            return;
        }
    };
    let Some(opts) = options(line, cx) else {
        return;
    };
    let tls = if opts.ssl {
        tls_table(&opts, line.no, cx)
    } else {
        None
    };
    if !opts.ssl && !opts.tls_only.is_empty() {
        let why = format!("{} without 'ssl' on the bind", opts.tls_only.join(", "));
        cx.no_effect(line.no, &opts.tls_only[0], &why);
    }
    if opts.ssl && tls.is_none() {
        return;
    }
    proto(&opts, line.no, p, cx);
    p.tls_binds |= tls.is_some();
    for address in addresses {
        p.first_bind_address.get_or_insert_with(|| address.clone());
        let proxy = if opts.accept_proxy {
            ", accept_proxy = true"
        } else {
            ""
        };
        let item = match &tls {
            Some(tls) => format!("{{ address = {}{proxy}, tls = {tls} }}", string(&address)),
            None if opts.accept_proxy => format!("{{ address = {}{proxy} }}", string(&address)),
            None => string(&address),
        };
        p.binds.push(Src::new(item, line.no));
    }
}

/// `proto h2` on a plain bind: its frontend speaks h2c (`http2.cleartext`, for all of its plain
/// binds). On a TLS bind ALPN chooses the protocol (`alpn h2` alone forces HTTP/2), so there it
/// is approximated; `proto h1` is what tern does anyway.
fn proto(opts: &BindOpts, line: usize, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    match opts.proto.as_deref() {
        None => {}
        Some("h2") if !opts.ssl => p.h2c = Some(Src::new(true, line)),
        Some("h2") => cx.diag.approx(
            line,
            &cx.context,
            "proto",
            "on a TLS bind the client's ALPN chooses HTTP/2 or HTTP/1.1 (alpn h2 offers HTTP/2 only)",
        ),
        Some("h1") => cx.no_effect(line, "proto", "HTTP/1.1 is what tern speaks without it"),
        Some(other) => cx.error(
            line,
            format!("bind option 'proto {other}' is not supported (tern speaks h1 and h2)"),
        ),
    }
}

/// Reads the options after the address; `None` after an error that makes the rest unreadable.
fn options(line: &Line, cx: &mut Cx<'_>) -> Option<BindOpts> {
    let mut opts = BindOpts::default();
    let words = &line.words;
    let mut i = 2;
    while i < words.len() {
        let option = words[i].as_str();
        let arg = words.get(i + 1).map(String::as_str);
        let context = cx.context.clone();
        let at = At {
            line: line.no,
            context: &context,
        };
        if let Some(used) = tls::option(&words[i..], &mut opts.tls, &at, cx.diag) {
            opts.tls_only.push(option.to_owned());
            i += used;
            continue;
        }
        let needs_arg = matches!(
            option,
            "crt" | "crt-list" | "alpn" | "verify" | "ca-file" | "crl-file" | "proto"
        ) || no_effect_valued(option).is_some();
        if needs_arg && arg.is_none() {
            cx.error(line.no, format!("bind option '{option}' needs an argument"));
            return None;
        }
        let arg = arg.unwrap_or_default();
        if option == "proto" {
            opts.proto = Some(arg.to_owned());
            i += 2;
            continue;
        }
        match option {
            "ssl" => opts.ssl = true,
            "accept-proxy" => {
                opts.accept_proxy = true;
                i += 1;
                continue;
            }
            "crt" => {
                opts.any_crt = true;
                opts.certs.crt(arg, line.no, cx);
            }
            "crt-list" => {
                opts.any_crt = true;
                opts.certs.crt_list(arg, line.no, cx);
            }
            "alpn" => opts.alpn = Some(tls::alpn(arg, &at, cx.diag)),
            "verify" => opts.verify = Some(arg.to_owned()),
            "ca-file" => opts.ca_file = Some(arg.to_owned()),
            "crl-file" => opts.crl_file = Some(arg.to_owned()),
            _ => {
                if let Some(why) = no_effect_flag(option) {
                    cx.no_effect(line.no, option, why);
                    i += 1;
                } else if let Some(why) = no_effect_valued(option) {
                    cx.no_effect(line.no, option, why);
                    i += 2;
                } else if let Some(arity) = unsupported_arity(option) {
                    cx.unsupported(line.no, option);
                    i += 1 + arity;
                } else {
                    cx.unknown(line.no, option);
                    return None;
                }
                continue;
            }
        }
        if option != "ssl" {
            opts.tls_only.push(option.to_owned());
        }
        i += if option == "ssl" { 1 } else { 2 };
    }
    Some(opts)
}

/// The bind's `tls` table, or `None` after an error.
fn tls_table(opts: &BindOpts, line: usize, cx: &mut Cx<'_>) -> Option<String> {
    if !opts.any_crt {
        cx.error(line, "'ssl' on a bind needs 'crt' or 'crt-list'");
        return None;
    }
    if opts.certs.items.is_empty() && opts.certs.dir.is_none() {
        // Every crt-list line was refused: already reported.
        return None;
    }
    let policy = cx.global.bind_tls.overridden_by(&opts.tls);
    let openssl = needs_openssl(&policy);
    let mut t = Inline::new();
    if !opts.certs.items.is_empty() {
        t.set("certs", format!("[{}]", opts.certs.items.join(", ")));
    }
    if openssl {
        t.set("engine", string("openssl"));
    }
    t.set_opt("cert_dir", opts.certs.dir.as_deref().map(string));
    t.set_opt("strict_sni", policy.strict_sni.map(|b| b.to_string()));
    t.set_opt("min_version", policy.min_version.map(string));
    t.set_opt("max_version", policy.max_version.map(string));
    let alpn = opts.alpn.clone().unwrap_or_default();
    if openssl {
        openssl_keys(&mut t, &policy, cx);
    } else {
        t.set_opt("ciphers", policy.ciphers.as_deref().map(strings));
        t.set_opt("suites", policy.suites.as_deref().map(strings));
    }
    t.set_opt("groups", policy.groups.as_deref().map(strings));
    t.set_opt("sigalgs", policy.sigalgs.as_deref().map(strings));
    t.set("alpn", strings(&alpn));
    t.set_opt(
        "prefer_server_ciphers",
        policy.prefer_server_ciphers.map(|b| b.to_string()),
    );
    let mut resumption = Inline::new();
    resumption.set_opt("tickets", policy.tickets.map(|b| b.to_string()));
    let cache = cx.global.ssl_cache_size.unwrap_or(HAPROXY_SSL_CACHE);
    resumption.set("cache_size", cache.to_string());
    t.set("resumption", resumption.text());
    t.set_opt("client_auth", client_auth(opts, line, cx));
    Some(t.text())
}

/// Whether the bind runs on the OpenSSL engine (`tls.rs`): its cipher list names only legacy
/// suites, or it accepts a version below TLS 1.2.
fn needs_openssl(policy: &TlsOpts) -> bool {
    let legacy = |v: Option<&str>| v.is_some_and(tls::legacy_version);
    policy.legacy_ciphers || legacy(policy.min_version) || legacy(policy.max_version)
}

/// The OpenSSL engine's keys: the cipher string as written, the TLS 1.3 suites, the global
/// DH parameters (`curves` and `sigalgs` are written for both engines).
fn openssl_keys(t: &mut Inline, policy: &TlsOpts, cx: &mut Cx<'_>) {
    t.set_opt("ciphers", policy.cipher_string.as_deref().map(strings));
    t.set_opt("suites", policy.suites.as_deref().map(strings));
    let dh = cx.global.dh_param_file.clone();
    t.set_opt("dh_param_file", dh.as_deref().map(string));
}

/// `verify`, `ca-file`, `crl-file` → `client_auth`.
fn client_auth(opts: &BindOpts, line: usize, cx: &mut Cx<'_>) -> Option<String> {
    let ca_base = cx.global.ca_base.clone();
    let files = opts.ca_file.is_some() || opts.crl_file.is_some();
    match opts.verify.as_deref() {
        None | Some("none") => {
            if files {
                cx.no_effect(
                    line,
                    "ca-file",
                    "without 'verify optional' or 'verify required', no client certificate is asked for",
                );
            }
            None
        }
        Some(verify @ ("optional" | "required")) => {
            let mut t = Inline::new();
            t.set("verify", string(verify));
            t.set_opt(
                "ca",
                opts.ca_file
                    .as_deref()
                    .map(|f| string(&with_base(ca_base.as_deref(), f))),
            );
            t.set_opt(
                "crl",
                opts.crl_file
                    .as_deref()
                    .map(|f| strings(&[with_base(ca_base.as_deref(), f)])),
            );
            Some(t.text())
        }
        Some(other) => {
            cx.error(
                line,
                format!("'verify {other}': none, optional or required expected"),
            );
            None
        }
    }
}
