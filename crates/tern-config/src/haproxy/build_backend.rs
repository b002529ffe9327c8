//! The `[[backend]]` table of a `backend` or `listen` section, and its servers.
//!
//! HAProxy spreads several settings over the servers that tern keeps on the backend
//! (`slowstart`, `observe`, `maxqueue`): they are taken from the servers, exactly when every
//! server agrees, approximately (with a warning) when not. Checks go the other way: the
//! backend's `check` table holds `option httpchk` and `http-check`, each checked server holds
//! its own `inter`, `rise`, `fall`, ... and an unchecked server says `check = false`.

use super::build::{acls, header_rules, set_time, Proxy};
use super::build_server::{server, CheckTimeout};
use super::diag::Diag;
use super::emit::Table;
use super::global::GlobalCfg;
use super::sections::Kind;
use super::settings::{Expect, ProxyCfg, ServerCfg, Src};
use super::toml_text::{key, string, Inline};
use super::units::duration;
use crate::model::ConnectionMode;

pub(crate) fn backend(p: &Proxy, global: &GlobalCfg, diag: &mut Diag) -> Table {
    let c = &p.cfg;
    let context = p.context();
    let line = p.section.line;
    let mut t = Table::new("backend", line, context.clone());
    t.set("name", string(p.name()), line);
    p.set_mode(&mut t);
    balance(c, &mut t);
    if let Some(retries) = &c.retries {
        t.set("retries", retries.v.to_string(), retries.line);
    }
    let redispatch = c.redispatch.as_ref().filter(|r| r.v);
    t.set(
        "redispatch",
        redispatch.is_some().to_string(),
        redispatch.map_or(line, |r| r.line),
    );
    for (key, value, name) in [
        ("timeouts.connect", &c.timeouts.connect, "timeout connect"),
        ("timeouts.server", &c.timeouts.server, "timeout server"),
    ] {
        if value.is_none() {
            let what = "missing: HAProxy would wait forever (and warns); tern uses its default (connect 5s, server 30s)";
            diag.approx(line, &context, name, what);
        }
        set_time(&mut t, key, value.as_ref());
    }
    // Unset, tern falls back to the client and server timeouts as HAProxy does: no warning.
    set_time(&mut t, "timeouts.tunnel", c.timeouts.tunnel.as_ref());
    set_time(
        &mut t,
        "timeouts.server_fin",
        c.timeouts.server_fin.as_ref(),
    );
    if p.is_tcp() {
        super::build_tcp::backend(p, diag);
    } else {
        connection(c, &mut t);
        if p.section.kind == Kind::Backend {
            super::compression::emit(c, global, &context, &mut t, diag);
        }
    }
    queue(c, &mut t, &context, diag);
    if !p.is_tcp() {
        cookie(c, &mut t, &context, diag);
    }
    stick(c, &mut t, &context, diag);
    let backend_check = check(c, &mut t, diag, &context);
    per_server_settings(c, &mut t, &context, diag);
    if p.section.kind == Kind::Backend {
        acls(c, &mut t);
        if !p.is_tcp() {
            header_rules(c, &mut t);
        }
    }
    let check_timeout = CheckTimeout::new(c);
    let servers: Vec<Src<String>> = c
        .servers
        .iter()
        .map(|s| {
            Src::new(
                server(s, c, backend_check, &check_timeout, global, &context, diag),
                s.line,
            )
        })
        .collect();
    t.items(
        "servers",
        servers,
        c.servers.first().map_or(line, |s| s.line),
    );
    t
}

fn balance(c: &ProxyCfg, t: &mut Table) {
    let Some(balance) = &c.balance else { return };
    t.set("balance", string(&balance.v), balance.line);
    let hashing = balance.v == "source"
        || balance.v.starts_with("uri")
        || balance.v.starts_with("url_param(")
        || balance.v.starts_with("hdr(");
    if !hashing {
        return;
    }
    if let Some(hash_type) = &c.hash_type {
        t.set("hash_type", string(&hash_type.v), hash_type.line);
        if hash_type.v == "consistent" {
            if let Some(factor) = &c.hash_balance_factor {
                t.set("hash_balance_factor", factor.v.to_string(), factor.line);
            }
        }
    }
}

/// `connection_mode = "server-close"` for `option http-server-close` or `option httpclose`
/// (a backend's `httpclose` closes only server connections in HAProxy); a frontend's mode
/// reaches its backends' servers in tern as in HAProxy, so it is not copied here.
/// `pool.max_idle_per_server = 0` for `http-reuse never`.
fn connection(c: &ProxyCfg, t: &mut Table) {
    if let Some(mode) = c
        .conn_mode
        .as_ref()
        .filter(|m| m.v != ConnectionMode::KeepAlive)
    {
        let value = ConnectionMode::ServerClose.as_str();
        t.set("connection_mode", string(value), mode.line);
    }
    if let Some(never) = c.reuse_never.as_ref().filter(|r| r.v) {
        t.set("pool.max_idle_per_server", "0".into(), never.line);
    }
}

/// `timeout queue` and the servers' `maxqueue` → `queue`, when a server has `maxconn` (tern
/// queues nothing otherwise, nor does HAProxy).
fn queue(c: &ProxyCfg, t: &mut Table, context: &str, diag: &mut Diag) {
    let limited: Vec<&ServerCfg> = c
        .servers
        .iter()
        .filter(|s| s.params.maxconn.is_some())
        .collect();
    if limited.is_empty() {
        return;
    }
    set_time(t, "queue.timeout", c.timeouts.queue.as_ref());
    let Some(first) = limited
        .iter()
        .find(|s| s.params.maxqueue.is_some_and(|q| q > 0))
    else {
        return;
    };
    let all = limited
        .iter()
        .all(|s| s.params.maxqueue.is_some_and(|q| q > 0));
    if all {
        let sum = limited
            .iter()
            .filter_map(|s| s.params.maxqueue)
            .fold(0u64, u64::saturating_add);
        t.set("queue.max", sum.to_string(), first.line);
    }
    let what = if all {
        "tern has one queue per backend: queue.max is the sum of the servers' maxqueue"
    } else {
        "tern has one queue per backend, and not every server has a maxqueue: the queue is not limited"
    };
    diag.approx(first.line, context, "maxqueue", what);
}

fn cookie(c: &ProxyCfg, t: &mut Table, context: &str, diag: &mut Diag) {
    let Some(cookie) = &c.cookie else {
        for s in c.servers.iter().filter(|s| s.params.cookie.is_some()) {
            diag.no_effect(
                s.line,
                context,
                "cookie",
                "the backend has no 'cookie' line",
            );
        }
        return;
    };
    let k = &cookie.v;
    let mut table = Inline::new();
    table.set("name", string(&k.name));
    table.set_opt("mode", k.mode.map(string));
    for (flag, on) in [
        ("indirect", k.indirect),
        ("nocache", k.nocache),
        ("postonly", k.postonly),
        ("httponly", k.httponly),
        ("secure", k.secure),
    ] {
        if on {
            table.set(flag, "true".into());
        }
    }
    table.set_opt("domain", k.domain.as_deref().map(string));
    // A server name used twice would be a duplicate key, which is not TOML: keep the first
    // and let the TOML stage report the duplicate server at its own line.
    let mut named = std::collections::HashSet::new();
    let values: Vec<String> = c
        .servers
        .iter()
        .filter(|s| named.insert(s.name.as_str()))
        .filter_map(|s| {
            Some(format!(
                "{} = {}",
                key(&s.name),
                string(s.params.cookie.as_ref()?)
            ))
        })
        .collect();
    if !values.is_empty() {
        table.set("values", format!("{{ {} }}", values.join(", ")));
    }
    if let Some(s) = c.servers.iter().find(|s| s.params.cookie.is_none()) {
        diag.approx(
            s.line,
            context,
            "cookie",
            "a server without 'cookie' uses its name as cookie value in tern (HAProxy gives it no persistence)",
        );
    }
    t.set("cookie", table.text(), cookie.line);
}

fn stick(c: &ProxyCfg, t: &mut Table, context: &str, diag: &mut Diag) {
    match (&c.stick_on, &c.stick_table) {
        (Some(on), Some(table)) if !matches!(table.v.key.as_str(), "ip" | "ipv6") => diag.error(
            on.line,
            context,
            "'stick on src' needs a 'stick-table type ip' (or ipv6): tern sticks client addresses",
        ),
        (Some(on), Some(table)) => {
            let mut s = Inline::new();
            s.set("on", string("source"))
                .set("size", table.v.size.to_string());
            let expire = table.v.expire.unwrap_or_else(|| {
                diag.approx(
                    table.line,
                    context,
                    "stick-table",
                    "without 'expire' HAProxy keeps entries until the table is full; tern forgets them after 24d",
                );
                super::timeouts::TERN_MAX_MS
            });
            s.set("expire", string(&duration(expire)));
            s.set_opt("peers", table.v.peers.as_deref().map(string));
            t.set("stick", s.text(), on.line);
        }
        (Some(on), None) => diag.error(
            on.line,
            context,
            "'stick on src' needs a 'stick-table' in this section",
        ),
        (None, Some(table)) if table.v.store.is_empty() => diag.no_effect(
            table.line,
            context,
            "stick-table",
            "no 'stick on src' uses it",
        ),
        (None, _) => {}
    }
}

/// The backend's `check` table, when `option httpchk` is set and a server is checked. Returns
/// whether it was written.
fn check(c: &ProxyCfg, t: &mut Table, diag: &mut Diag, context: &str) -> bool {
    let checked = c.servers.iter().any(|s| s.params.check == Some(true));
    let Some(chk) = c.httpchk.as_ref().filter(|_| checked) else {
        if let Some(expect) = c.expect.as_ref().filter(|_| c.httpchk.is_none()) {
            diag.no_effect(
                expect.line,
                context,
                "http-check expect",
                "without 'option httpchk' checks are TCP connects",
            );
        }
        return false;
    };
    let send = c
        .check_send
        .as_ref()
        .map(|s| s.v.clone())
        .unwrap_or_default();
    let mut table = Inline::new();
    table.set(
        "method",
        string(send.method.as_deref().unwrap_or(&chk.v.method)),
    );
    table.set("path", string(send.path.as_deref().unwrap_or(&chk.v.path)));
    table.set_opt(
        "host",
        send.host.as_deref().or(chk.v.host.as_deref()).map(string),
    );
    match c.expect.as_ref().map(|e| &e.v) {
        Some(Expect::Status(statuses)) => {
            table.set("expect_status", statuses.clone());
        }
        Some(Expect::Body(text)) => {
            table.set("expect_body", string(text));
        }
        None => {}
    }
    t.set("check", table.text(), chk.line);
    true
}

/// `slowstart` and `observe`, set per server in HAProxy, per backend in tern.
fn per_server_settings(c: &ProxyCfg, t: &mut Table, context: &str, diag: &mut Diag) {
    let slow: Vec<(u64, usize)> = c
        .servers
        .iter()
        .filter_map(|s| Some((s.params.slowstart?, s.line)))
        .collect();
    if let Some(&(_, line)) = slow.first() {
        let max = slow.iter().map(|(v, _)| *v).max().unwrap_or(0);
        if slow.len() < c.servers.len() || slow.iter().any(|(v, _)| *v != max) {
            let what = format!(
                "tern's slowstart is per backend: {} for every server",
                duration(max)
            );
            diag.approx(line, context, "slowstart", &what);
        }
        t.set("slowstart", string(&duration(max)), line);
    }
    let observed: Vec<&ServerCfg> = c
        .servers
        .iter()
        .filter(|s| s.params.observe.is_some())
        .collect();
    let Some(first) = observed.first() else {
        return;
    };
    let p = &first.params;
    let same = |s: &&ServerCfg| {
        s.params.observe == p.observe
            && s.params.error_limit == p.error_limit
            && s.params.on_error == p.on_error
    };
    if observed.len() < c.servers.len() || !observed.iter().all(same) {
        diag.approx(
            first.line,
            context,
            "observe",
            "tern observes every server of the backend the same way: this server's settings apply to all",
        );
    }
    let mut table = Inline::new();
    table.set("on", string(p.observe.as_deref().unwrap_or("layer4")));
    table.set_opt("error_limit", p.error_limit.map(|n| n.to_string()));
    table.set_opt("on_error", p.on_error.as_deref().map(string));
    t.set("observe", table.text(), first.line);
}
