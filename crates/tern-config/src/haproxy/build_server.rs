//! One server of a backend: its TOML table, with its `check` and `tls`.
//!
//! A checked server's own check settings (`inter`, `rise`, `port`, `check-sni`, ...) become its
//! `check` table, overriding the backend's; `timeout check` is turned into each server's check
//! timeout, since tern bounds a whole check by one timeout of at most its interval.

use super::diag::Diag;
use super::global::GlobalCfg;
use super::settings::{ProxyCfg, ServerCfg, ServerParams, Src};
use super::toml_text::{array, inline, string, strings, Inline};
use super::units::duration;

/// HAProxy's default check interval (`inter`).
const DEFAULT_INTER: u64 = 2000;

/// HAProxy bounds a check by `inter` unless `timeout check` is set; then the connection gets
/// `min(timeout connect, inter)` and the response `timeout check`. tern has one timeout per
/// check, at most its interval.
pub(crate) struct CheckTimeout {
    check: Option<Src<u64>>,
    connect: Option<u64>,
}

impl CheckTimeout {
    pub fn new(c: &ProxyCfg) -> Self {
        Self {
            check: c.timeouts.check.clone(),
            connect: c.timeouts.connect.as_ref().map(|t| t.v),
        }
    }

    /// tern's `timeout` for a server checked every `inter` ms, when it differs from `inter`.
    fn for_inter(&self, inter: u64, context: &str, diag: &mut Diag) -> Option<u64> {
        let check = self.check.as_ref()?;
        let total = self
            .connect
            .map_or(inter, |c| c.min(inter))
            .saturating_add(check.v);
        if total > inter {
            diag.approx(
                check.line,
                context,
                "timeout check",
                "tern's check timeout is at most its interval: checks get 'inter' for the connection and the response together",
            );
            return None;
        }
        (total < inter).then_some(total)
    }
}

pub(crate) fn server(
    s: &ServerCfg,
    c: &ProxyCfg,
    backend_check: bool,
    timeout: &CheckTimeout,
    global: &GlobalCfg,
    context: &str,
    diag: &mut Diag,
) -> String {
    let p = &s.params;
    let mut t = Inline::new();
    t.set("name", string(&s.name))
        .set("address", string(&s.address));
    t.set_opt("weight", p.weight.map(|w| w.to_string()));
    t.set_opt("backup", p.backup.filter(|b| *b).map(|_| "true".to_owned()));
    t.set_opt("maxconn", p.maxconn.map(|m| m.to_string()));
    t.set_opt(
        "disabled",
        p.disabled.filter(|d| *d).map(|_| "true".to_owned()),
    );
    t.set_opt("proxy_protocol", p.proxy_protocol.map(string));
    match (p.proxy_v2_crc32c, p.proxy_protocol) {
        (Some(_), Some("v2")) => {
            t.set("proxy_v2_crc32c", "true".into());
        }
        (Some(at), _) => diag.no_effect(
            at,
            context,
            "proxy-v2-options",
            "the server sends no PROXY v2 header (send-proxy-v2)",
        ),
        (None, _) => {}
    }
    proxy_v2_tlvs(p, &mut t, context, diag);
    t.set_opt("proto", p.proto.as_deref().map(string));
    t.set_opt("ws", p.ws.as_deref().filter(|ws| *ws != "auto").map(string));
    dns(s, &mut t, context, diag);
    if p.check == Some(true) {
        t.set(
            "check",
            server_check(s, c.httpchk.is_some(), timeout, context, diag),
        );
    } else if backend_check {
        t.set("check", "false".into());
    }
    if p.ssl == Some(true) {
        let mut tls = Inline::new();
        let verify_none = p.verify_none.unwrap_or(global.server_verify_none);
        tls.set(
            "verify",
            string(if verify_none { "none" } else { "required" }),
        );
        tls.set_opt("ca", p.ca_file.as_deref().map(string));
        tls.set_opt("sni", p.sni.as_deref().map(string));
        tls.set_opt("alpn", p.alpn.as_deref().map(strings));
        tls.set_opt("cert", p.crt.as_deref().map(string));
        tls.set_opt(
            "session_reuse",
            p.ssl_reuse.filter(|r| !r).map(|_| "false".to_owned()),
        );
        t.set("tls", tls.text());
    }
    let backups = c
        .servers
        .iter()
        .filter(|s| s.params.backup == Some(true))
        .count();
    if backups > 1 && p.backup == Some(true) && c.allbackups.as_ref().is_none_or(|a| !a.v) {
        diag.approx(
            s.line,
            context,
            "backup",
            "tern balances over every backup server, as HAProxy does with 'option allbackups' (without it, only the first one)",
        );
    }
    t.text()
}

/// `resolvers`, `resolve-prefer`, `init-addr` and a template's `count`.
fn dns(s: &ServerCfg, t: &mut Inline, context: &str, diag: &mut Diag) {
    let p = &s.params;
    let Some(resolvers) = &p.resolvers else {
        if s.count.is_some() {
            diag.error(
                s.line,
                context,
                "'server-template' needs 'resolvers NAME': its slots are filled by DNS",
            );
        }
        let init = p
            .init_addr
            .as_ref()
            .filter(|m| m.v.iter().any(|m| m != "libc"));
        if let Some(init) = init {
            diag.approx(
                init.line,
                context,
                "init-addr",
                "without 'resolvers', tern resolves a server's name once, when the configuration is loaded, and refuses a name that does not resolve",
            );
        }
        return;
    };
    if let Some(count) = &s.count {
        let value = match count.parse::<u64>() {
            Ok(n) => n.to_string(),
            Err(_) => string(count),
        };
        t.set("count", value);
    }
    t.set("resolvers", string(resolvers));
    t.set_opt("resolve_prefer", p.resolve_prefer.as_deref().map(string));
    t.set_opt("init_addr", p.init_addr.as_ref().map(|m| strings(&m.v)));
}

/// A checked server's `check`: `true`, or a table of its own settings.
fn server_check(
    s: &ServerCfg,
    http: bool,
    timeout: &CheckTimeout,
    context: &str,
    diag: &mut Diag,
) -> String {
    let p = &s.params;
    let mut t = Inline::new();
    let ms = |v: u64| string(&duration(v));
    t.set_opt("interval", p.inter.map(ms));
    t.set_opt("fast_interval", p.fastinter.map(ms));
    t.set_opt("down_interval", p.downinter.map(ms));
    t.set_opt(
        "timeout",
        timeout
            .for_inter(p.inter.unwrap_or(DEFAULT_INTER), context, diag)
            .map(ms),
    );
    t.set_opt("rise", p.rise.map(|n| n.to_string()));
    t.set_opt("fall", p.fall.map(|n| n.to_string()));
    match (&p.addr, p.port) {
        (Some(addr), port) => {
            let port = port.map_or_else(
                || s.address.rsplit_once(':').map_or("", |(_, p)| p).to_owned(),
                |p| p.to_string(),
            );
            let host = if addr.contains(':') && !addr.starts_with('[') {
                format!("[{addr}]")
            } else {
                addr.clone()
            };
            t.set("address", string(&format!("{host}:{port}")));
        }
        (None, Some(port)) => {
            t.set("port", port.to_string());
        }
        (None, None) => {}
    }
    // HAProxy checks a `ssl` server over TLS on its own address, elsewhere only with `check-ssl`
    // (tern does the same); the type is written when tern needs it: a TLS check of a plain
    // server, or a check with its own SNI.
    let own_address = p.port.is_none() && p.addr.is_none();
    let tls_check = p.check_ssl == Some(true)
        || (p.ssl == Some(true) && p.check_ssl != Some(false) && own_address);
    let forced = p.check_ssl == Some(true) && p.ssl != Some(true);
    if forced || (tls_check && p.check_sni.is_some()) {
        t.set("type", string(if http { "https" } else { "tls" }));
    }
    if let Some(sni) = &p.check_sni {
        if tls_check {
            t.set("sni", string(sni));
        } else {
            diag.no_effect(s.line, context, "check-sni", "the check does not use TLS");
        }
    }
    if let Some(proto) = &p.check_proto {
        if http {
            t.set("proto", string(proto));
        } else {
            diag.no_effect(
                s.line,
                context,
                "check-proto",
                "the check does not use HTTP",
            );
        }
    }
    if t.is_empty() {
        "true".to_owned()
    } else {
        t.text()
    }
}

/// `set-proxy-v2-tlv-fmt` lines as `proxy_v2_tlvs`, on a server that sends a v2 header.
fn proxy_v2_tlvs(p: &ServerParams, t: &mut Inline, context: &str, diag: &mut Diag) {
    let Some((_, _, first)) = p.proxy_v2_tlvs.first() else {
        return;
    };
    if p.proxy_protocol != Some("v2") {
        let why = "the server sends no PROXY v2 header (send-proxy-v2)";
        return diag.no_effect(*first, context, "set-proxy-v2-tlv-fmt", why);
    }
    let items: Vec<String> = p
        .proxy_v2_tlvs
        .iter()
        .map(|(id, format, _)| inline(&[("id", format!("0x{id:02X}")), ("format", string(format))]))
        .collect();
    t.set("proxy_v2_tlvs", array(&items));
}
