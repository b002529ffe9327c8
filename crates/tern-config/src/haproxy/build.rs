//! From the sections' settings to tern's tables: which proxy becomes a `[[frontend]]`, a
//! `[[backend]]`, both (`listen`), or the control API's HTTP listener (a `listen` that only
//! shows stats), and the frontend tables themselves (backends are in `build_backend.rs`, the
//! global and control tables in `build_global.rs`).
//!
//! HAProxy's defaults are written out where tern's differ, so that the converted file behaves
//! as HAProxy documents: no `X-Forwarded-For` without `option forwardfor`, never an
//! `X-Forwarded-Proto`, and the timeouts' fallbacks (`http-request` and `http-keep-alive` fall
//! back to `client`, the handshake is bounded by `client-hs`, else `client`).

use std::collections::HashMap;

use super::build_backend;
use super::build_global;
use super::diag::Diag;
use super::emit::Table;
use super::global::GlobalCfg;
use super::sections::{Kind, Section};
use super::settings::{ProxyCfg, Src};
use super::toml_text::{key, string};
use super::units::duration;
use crate::model::ConnectionMode;

/// A proxy section and its settings (defaults applied).
#[derive(Debug)]
pub(crate) struct Proxy {
    pub section: Section,
    pub cfg: ProxyCfg,
}

impl Proxy {
    pub fn name(&self) -> &str {
        &self.section.name
    }

    pub fn context(&self) -> String {
        self.section.context()
    }

    /// In `mode tcp`, HAProxy's default when no `mode` line applies.
    pub fn is_tcp(&self) -> bool {
        self.cfg.mode.as_ref().is_none_or(|m| m.v == "tcp")
    }

    /// `mode = "tcp"` in the table of a TCP proxy (`http` is tern's default).
    pub fn set_mode(&self, t: &mut Table) {
        if self.is_tcp() {
            let line = self.cfg.mode.as_ref().map_or(self.section.line, |m| m.line);
            t.set("mode", string("tcp"), line);
        }
    }

    /// Answers no traffic, only the stats page: the control API's HTTP listener in tern.
    fn stats_only(&self) -> bool {
        let c = &self.cfg;
        matches!(self.section.kind, Kind::Frontend | Kind::Listen)
            && c.stats.line.is_some()
            && c.servers.is_empty()
            && c.default_backend.is_none()
            && c.use_backend.is_empty()
    }

    fn is_frontend(&self) -> bool {
        match self.section.kind {
            Kind::Frontend => !self.stats_only(),
            Kind::Listen => !self.cfg.binds.is_empty() && !self.stats_only(),
            _ => false,
        }
    }

    /// A backend section that only declares a counter table (HAProxy's usual home of a
    /// shared `stick-table ... store`): a `[[table]]` in tern, no backend.
    fn table_only(&self) -> bool {
        self.section.kind == Kind::Backend
            && self.cfg.servers.is_empty()
            && self
                .cfg
                .stick_table
                .as_ref()
                .is_some_and(|t| !t.v.store.is_empty())
    }

    /// A listen section's backend part exists when it has servers, or when nothing else would
    /// receive its requests.
    fn is_backend(&self) -> bool {
        match self.section.kind {
            Kind::Backend => !self.table_only(),
            Kind::Listen => {
                !self.stats_only()
                    && (!self.cfg.servers.is_empty()
                        || (!self.cfg.binds.is_empty()
                            && self.cfg.default_backend.is_none()
                            && self.cfg.use_backend.is_empty()))
            }
            _ => false,
        }
    }

    /// The backends this frontend may send requests to.
    fn targets(&self) -> Vec<String> {
        let mut targets: Vec<String> = self.default_backend().into_iter().map(|s| s.v).collect();
        targets.extend(self.cfg.route_targets.iter().cloned());
        targets
    }

    fn default_backend(&self) -> Option<Src<String>> {
        self.cfg.default_backend.clone().or_else(|| {
            (self.section.kind == Kind::Listen && self.is_backend())
                .then(|| Src::new(self.name().to_owned(), self.section.line))
        })
    }
}

/// Builds every table, in file order.
pub(crate) fn build(global: &GlobalCfg, proxies: &[Proxy], diag: &mut Diag) -> Vec<Table> {
    let mut tables = Vec::new();
    let global_table = build_global::global(global, diag);
    if !global_table.entries.is_empty() {
        tables.push(global_table);
    }
    let backends: HashMap<&str, &Proxy> = proxies
        .iter()
        .filter(|p| p.is_backend())
        .map(|p| (p.name(), p))
        .collect();
    let mut stats_listener: Option<&Proxy> = None;
    for p in proxies {
        check_mode(p, diag);
        if let Some(line) = p.cfg.stats.line {
            if p.stats_only() {
                if stats_listener.is_some() {
                    diag.unsupported_because(
                        line,
                        &p.context(),
                        "stats",
                        "tern has one stats listener (the control API)",
                    );
                } else {
                    stats_listener = Some(p);
                }
            } else {
                diag.unsupported_because(
                    line,
                    &p.context(),
                    "stats",
                    "a stats page on a proxy that forwards traffic: tern serves it from the control API (a listen section with only 'bind' and 'stats' lines)",
                );
            }
        }
        if p.is_frontend() {
            tables.push(frontend(p, global, &backends, diag));
        }
        if p.is_backend() {
            tables.push(build_backend::backend(p, global, diag));
        }
        if let Some(table) = super::counters::table(p) {
            tables.push(table);
        }
        if !p.is_frontend() && !p.is_backend() && !p.stats_only() && !p.table_only() {
            diag.no_effect(
                p.section.line,
                &p.context(),
                p.section.kind.keyword(),
                "this section neither binds nor has servers",
            );
        }
    }
    if let Some(control) = build_global::control(global, stats_listener, diag) {
        tables.push(control);
    }
    if let Some(p) = stats_listener {
        tables.extend(super::userlist::stats_userlist(
            &p.cfg.stats.auth,
            &p.context(),
            diag,
        ));
    }
    tables
}

/// tern proxies in `http` and `tcp` mode; HAProxy's default mode is `tcp` (no `mode` line).
fn check_mode(p: &Proxy, diag: &mut Diag) {
    if let Some(mode) = p
        .cfg
        .mode
        .as_ref()
        .filter(|m| m.v != "http" && m.v != "tcp")
    {
        let what = format!("mode {}", mode.v);
        diag.unsupported_because(
            mode.line,
            &p.context(),
            &what,
            "tern proxies in http and tcp mode",
        );
    }
}

fn frontend(
    p: &Proxy,
    global: &GlobalCfg,
    backends: &HashMap<&str, &Proxy>,
    diag: &mut Diag,
) -> Table {
    let c = &p.cfg;
    let context = p.context();
    let mut t = Table::new("frontend", p.section.line, context.clone());
    t.set("name", string(p.name()), p.section.line);
    p.set_mode(&mut t);
    let bind_line = c.binds.first().map_or(p.section.line, |b| b.line);
    t.items("bind", c.binds.clone(), bind_line);
    if p.is_tcp() {
        target_and_limit(p, &mut t);
        super::build_tcp::frontend(p, &mut t, diag);
        routes(c, &mut t);
        request_log(c, &mut t);
        return t;
    }
    if let Some(uri) = &c.monitor_uri {
        t.set("monitor_uri", string(&uri.v), uri.line);
    }
    if let Some(h2c) = &c.h2c {
        t.set("http2.cleartext", h2c.v.to_string(), h2c.line);
    }
    if let Some(websocket) = &c.h2_websocket {
        t.set("http2.websocket", websocket.v.to_string(), websocket.line);
    }
    target_and_limit(p, &mut t);
    if let Some(mode) = c
        .conn_mode
        .as_ref()
        .filter(|m| m.v != ConnectionMode::KeepAlive)
    {
        t.set("connection_mode", string(mode.v.as_str()), mode.line);
    }
    forwarded_headers(p, backends, &mut t, diag);
    timeouts(p, &mut t, diag);
    if let Some(size) = &global.max_head_size {
        t.set("limits.max_head_size", size.v.to_string(), size.line);
    }
    if let Some(n) = &global.max_headers {
        t.set("limits.max_headers", n.v.to_string(), n.line);
    }
    routes(c, &mut t);
    header_rules(c, &mut t);
    request_log(c, &mut t);
    super::compression::emit(c, global, &context, &mut t, diag);
    t
}

/// `unique-id-*`, `capture ... header` and `log-format` of a frontend, in either mode (the
/// TOML stage refuses what a TCP frontend cannot have, naming the `.cfg` line).
pub(crate) fn request_log(c: &ProxyCfg, t: &mut Table) {
    for (key, value) in [
        ("unique_id_format", &c.unique_id_format),
        ("unique_id_header", &c.unique_id_header),
        ("log_format", &c.log_format),
    ] {
        if let Some(v) = value {
            t.set(key, string(&v.v), v.line);
        }
    }
    for (key, list) in [
        ("capture_request_headers", &c.capture_request),
        ("capture_response_headers", &c.capture_response),
    ] {
        t.items(key, list.clone(), list.first().map_or(0, |r| r.line));
    }
}

/// `default_backend` and `maxconn` of a frontend, in either mode.
fn target_and_limit(p: &Proxy, t: &mut Table) {
    if let Some(backend) = p.default_backend() {
        t.set("default_backend", string(&backend.v), backend.line);
    }
    if let Some(maxconn) = &p.cfg.maxconn {
        t.set("maxconn", maxconn.v.to_string(), maxconn.line);
    }
    if let Some(rate) = &p.cfg.rate_limit {
        t.set("rate_limit_sessions", rate.v.to_string(), rate.line);
    }
}

/// `acl`, `tcp_request` and `use_backend` of a frontend, in either mode (the TOML stage refuses
/// `tcp_request` on an HTTP frontend, naming the `.cfg` line).
fn routes(c: &ProxyCfg, t: &mut Table) {
    acls(c, t);
    t.items(
        "accept_proxy_from",
        c.expect_proxy_from.clone(),
        c.expect_proxy_from.first().map_or(0, |r| r.line),
    );
    set_time(t, "tcp_request.inspect_delay", c.inspect_delay.as_ref());
    t.items(
        "tcp_request.connection",
        c.tcp_connection.clone(),
        c.tcp_connection.first().map_or(0, |r| r.line),
    );
    t.items(
        "tcp_request.content",
        c.tcp_content.clone(),
        c.tcp_content.first().map_or(0, |r| r.line),
    );
    t.items(
        "use_backend",
        c.use_backend.clone(),
        c.use_backend.first().map_or(0, |r| r.line),
    );
}

/// `http_request` and `http_response` of a frontend or backend, each list at its first line.
pub(crate) fn header_rules(c: &ProxyCfg, t: &mut Table) {
    let requests: Vec<_> = c.http_request.iter().chain(&c.redirects).cloned().collect();
    let first = requests.iter().map(|r| r.line).min().unwrap_or(0);
    t.items("http_request", requests, first);
    t.items(
        "http_response",
        c.http_response.clone(),
        c.http_response.first().map_or(0, |r| r.line),
    );
    super::error_pages::emit(c, t);
}

/// `x_forwarded_for`: HAProxy adds the header when the frontend or the backend that serves the
/// request has `option forwardfor`; tern decides per frontend.
fn forwarded_headers(p: &Proxy, backends: &HashMap<&str, &Proxy>, t: &mut Table, diag: &mut Diag) {
    let own = p.cfg.forwardfor.as_ref().filter(|f| f.v);
    let targets = p.targets();
    let with: Vec<&Src<bool>> = targets
        .iter()
        .filter_map(|name| backends.get(name.as_str()))
        .filter_map(|b| b.cfg.forwardfor.as_ref().filter(|f| f.v))
        .collect();
    let line = own.map(|f| f.line).or(with.first().map(|f| f.line));
    match (own, line) {
        (Some(f), _) => t.set("x_forwarded_for", "true".into(), f.line),
        (None, Some(line)) => {
            if with.len() < targets.len() {
                diag.approx(
                    line,
                    &p.context(),
                    "option forwardfor",
                    "tern adds X-Forwarded-For to every request of the frontend, HAProxy only to those of the backends that have the option",
                );
            }
            t.set("x_forwarded_for", "true".into(), line);
        }
        (None, None) => t.set("x_forwarded_for", "false".into(), p.section.line),
    }
    t.set("x_forwarded_proto", "false".into(), p.section.line);
}

pub(crate) fn timeouts(p: &Proxy, t: &mut Table, diag: &mut Diag) {
    let to = &p.cfg.timeouts;
    set_time(t, "timeouts.client_fin", to.client_fin.as_ref());
    set_time(t, "timeouts.tarpit", to.tarpit.as_ref());
    let Some(client) = &to.client else {
        diag.approx(
            p.section.line,
            &p.context(),
            "timeout client",
            "missing: HAProxy would wait forever (and warns); tern uses its defaults (client 30s, http_request 10s, keep_alive 10s, handshake 10s)",
        );
        let request = to.http_request.as_ref();
        set_time(t, "timeouts.http_request", request);
        set_time(
            t,
            "timeouts.keep_alive",
            to.http_keep_alive.as_ref().or(request),
        );
        set_time(t, "timeouts.handshake", to.client_hs.as_ref());
        return;
    };
    let request = to.http_request.as_ref().unwrap_or(client);
    set_time(t, "timeouts.client", Some(client));
    set_time(t, "timeouts.http_request", Some(request));
    set_time(
        t,
        "timeouts.keep_alive",
        Some(to.http_keep_alive.as_ref().unwrap_or(request)),
    );
    set_time(
        t,
        "timeouts.handshake",
        Some(to.client_hs.as_ref().unwrap_or(client)),
    );
}

pub(crate) fn set_time(t: &mut Table, key: &str, value: Option<&Src<u64>>) {
    if let Some(v) = value {
        t.set(key, string(&duration(v.v)), v.line);
    }
}

/// `acl.NAME = "expr"` (or a list for several lines with one name), at the first line.
pub(crate) fn acls(c: &ProxyCfg, t: &mut Table) {
    let mut order: Vec<&str> = Vec::new();
    let mut by_name: HashMap<&str, Vec<&Src<(String, String)>>> = HashMap::new();
    for acl in &c.acls {
        let name = acl.v.0.as_str();
        if !by_name.contains_key(name) {
            order.push(name);
        }
        by_name.entry(name).or_default().push(acl);
    }
    for name in order {
        let defs = &by_name[name];
        let value = match defs.as_slice() {
            [one] => string(&one.v.1),
            many => {
                let exprs: Vec<String> = many.iter().map(|d| string(&d.v.1)).collect();
                format!("[{}]", exprs.join(", "))
            }
        };
        t.set(format!("acl.{}", key(name)), value, defs[0].line);
    }
}
