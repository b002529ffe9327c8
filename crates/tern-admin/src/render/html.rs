//! The HTML stats page (like HAProxy's `stats uri`): process facts, then a table per frontend
//! and, per backend, its totals and a row per server.
//!
//! One self-contained document: the CSS is inline and there is no script, image, font or link,
//! so the page works on a host with no way out and leaks nothing when opened. It refreshes
//! itself with `<meta http-equiv="refresh">`. On a phone the one-row tables stack into
//! label/value pairs and the server tables scroll sideways with the server's name pinned.
//! Every name goes through [`escape`]: names come from the configuration and the runtime API.

use std::fmt::Write as _;
use std::time::Duration;

use super::rows::{self, BackendRow, FrontendRow, ServerRow, Status};
use crate::{Info, View};

const STYLE: &str = include_str!("html.css");

/// The stats page; `refresh` is the auto-refresh interval (zero: no refresh; rounded up to
/// whole seconds).
pub fn page(view: &View, refresh: Duration) -> String {
    let backends = rows::backends(view);
    let mut h = String::with_capacity(16 * 1024);
    head(&mut h, refresh);
    header(&mut h, &view.info, &backends, refresh);
    h.push_str("<main>\n<h2>Frontends</h2>\n");
    for f in rows::frontends(view) {
        frontend(&mut h, &f);
    }
    h.push_str("<h2>Backends</h2>\n");
    for b in &backends {
        backend(&mut h, b);
    }
    if !view.stats.resolvers.is_empty() {
        h.push_str("<h2>Resolvers</h2>\n");
        for r in &view.stats.resolvers {
            resolvers(&mut h, r);
        }
    }
    h.push_str("</main>\n<footer>Counters since the process started; tern ");
    h.push_str(&escape(&view.info.version));
    h.push_str(".</footer>\n</body>\n</html>\n");
    h
}

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn refresh_secs(refresh: Duration) -> u64 {
    refresh.as_secs() + u64::from(refresh.subsec_nanos() > 0)
}

fn head(h: &mut String, refresh: Duration) {
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    if !refresh.is_zero() {
        let _ = writeln!(
            h,
            "<meta http-equiv=\"refresh\" content=\"{}\">",
            refresh_secs(refresh)
        );
    }
    h.push_str("<title>tern stats</title>\n<style>\n");
    h.push_str(STYLE);
    h.push_str("</style>\n</head>\n<body>\n");
}

fn header(h: &mut String, info: &Info, backends: &[BackendRow<'_>], refresh: Duration) {
    let _ = write!(
        h,
        "<header>\n<h1>tern stats <small>{}</small></h1>\n<dl class=\"info\">\n",
        escape(&info.version)
    );
    let refresh = match refresh_secs(refresh) {
        0 => "off".to_owned(),
        s => format!("{s} s"),
    };
    let generation = match info.draining_generations {
        0 => info.generation.to_string(),
        n => format!("{} ({n} draining)", info.generation),
    };
    let facts = [
        ("PID", info.pid.to_string()),
        ("Uptime", uptime(info.uptime)),
        ("Started", started(info.started)),
        ("Workers", info.workers.to_string()),
        ("Generation", generation),
        ("Connections", info.connections.to_string()),
        (
            "Profiling",
            if info.profiling { "on" } else { "off" }.to_owned(),
        ),
        ("Refresh", refresh),
    ];
    for (label, value) in facts {
        let _ = writeln!(h, "<div><dt>{label}</dt><dd>{}</dd></div>", escape(&value));
    }
    h.push_str("</dl>\n<p class=\"summary\">");
    for status in Status::ALL {
        let n: usize = backends.iter().map(|b| b.count(status)).sum();
        let _ = write!(
            h,
            "<span class=\"st st-{}\">{} {n}</span>",
            status.lower(),
            status.as_str()
        );
    }
    h.push_str("</p>\n</header>\n");
}

/// `2023-11-14 22:13:20 UTC`: RFC 3339 with a space, so that it wraps on a phone.
fn started(at: std::time::SystemTime) -> String {
    let text = humantime::format_rfc3339_seconds(at).to_string();
    format!("{} UTC", text.replacen('T', " ", 1).trim_end_matches('Z'))
}

/// `3d 4h 5m 6s`, without the zero leading units.
fn uptime(d: Duration) -> String {
    let s = d.as_secs();
    let (days, hours, mins, secs) = (s / 86_400, s / 3_600 % 24, s / 60 % 60, s % 60);
    match (days, hours, mins) {
        (0, 0, 0) => format!("{secs}s"),
        (0, 0, _) => format!("{mins}m {secs}s"),
        (0, _, _) => format!("{hours}h {mins}m {secs}s"),
        _ => format!("{days}d {hours}h {mins}m {secs}s"),
    }
}

/// A cell: `class` is `err` for an error count (highlighted when not zero).
#[derive(Clone, Copy)]
enum Cell {
    Count(u64),
    Error(u64),
}

fn cells(h: &mut String, row: &[(&str, Cell)]) {
    for (label, cell) in row {
        let (n, class) = match *cell {
            Cell::Count(0) | Cell::Error(0) => (0, " class=\"zero\""),
            Cell::Count(n) => (n, ""),
            Cell::Error(n) => (n, " class=\"err\""),
        };
        let _ = write!(h, "<td data-label=\"{label}\"{class}>{n}</td>");
    }
}

/// A one-row table that stacks on narrow screens.
fn stacked(h: &mut String, row: &[(&str, Cell)]) {
    h.push_str("<div class=\"scroll\"><table class=\"stack\"><thead><tr>");
    for (label, _) in row {
        let _ = write!(h, "<th scope=\"col\">{label}</th>");
    }
    h.push_str("</tr></thead><tbody><tr>");
    cells(h, row);
    h.push_str("</tr></tbody></table></div>\n");
}

fn frontend(h: &mut String, f: &FrontendRow<'_>) {
    let binds: Vec<String> = f
        .binds
        .iter()
        .map(|b| match b.tls {
            Some(_) => format!("{} TLS", b.address),
            None => b.address.to_string(),
        })
        .collect();
    let _ = writeln!(
        h,
        "<section class=\"frontend\">\n<h3>{} <small>{}</small></h3>",
        escape(f.name),
        escape(&binds.join(", "))
    );
    let c = &f.counters;
    let mut row = vec![
        ("Sessions", Cell::Count(c.sessions)),
        ("Requests", Cell::Count(c.requests)),
        ("Monitor", Cell::Count(c.monitor)),
        ("1xx", Cell::Count(c.resp_1xx)),
        ("2xx", Cell::Count(c.resp_2xx)),
        ("3xx", Cell::Count(c.resp_3xx)),
        ("4xx", Cell::Count(c.resp_4xx)),
        ("5xx", Cell::Error(c.resp_5xx)),
        ("Bad (400)", Cell::Error(c.bad_requests)),
        ("Too large (431)", Cell::Error(c.head_too_large)),
        ("Req. timeout (408)", Cell::Error(c.request_timeouts)),
        ("Client timeouts", Cell::Error(c.client_timeouts)),
        ("Client aborts", Cell::Error(c.client_aborts)),
        ("Keep-alive closed", Cell::Count(c.keepalive_timeouts)),
        ("Tunnels", Cell::Count(c.tunnels)),
        ("TCP sessions", Cell::Count(c.tcp_sessions)),
        ("PROXY errors", Cell::Error(c.proxy_errors)),
        ("Denied", Cell::Error(c.denied)),
        ("Returned", Cell::Count(c.intercepted)),
        ("No backend", Cell::Error(c.no_backend)),
    ];
    if f.tls_enabled {
        row.extend([
            ("TLS full", Cell::Count(c.tls_full)),
            ("TLS resumed", Cell::Count(c.tls_resumed)),
            ("TLS failed", Cell::Error(c.tls_failures + c.tls_timeouts)),
        ]);
    }
    stacked(h, &row);
    h.push_str("</section>\n");
}

/// One `[[resolvers]]` section's counters (service discovery).
fn resolvers(h: &mut String, r: &tern_proxy::ResolverSnapshot) {
    let _ = writeln!(
        h,
        "<section class=\"resolvers\">\n<h3>{}</h3>",
        escape(&r.name)
    );
    stacked(
        h,
        &[
            ("Queries", Cell::Count(r.sent)),
            ("Valid", Cell::Count(r.valid)),
            ("NX", Cell::Error(r.nx)),
            ("Timeouts", Cell::Error(r.timeouts)),
            ("Refused", Cell::Error(r.refused)),
            ("Other", Cell::Error(r.other)),
            ("Invalid replies", Cell::Error(r.invalid)),
            ("Server changes", Cell::Count(r.changes)),
        ],
    );
    h.push_str("</section>\n");
}

fn backend(h: &mut String, b: &BackendRow<'_>) {
    let up = b.count(Status::Up);
    let _ = writeln!(
        h,
        "<section class=\"backend\">\n<h3>{} <small>{up}/{} servers up</small></h3>",
        escape(b.name),
        b.servers.len()
    );
    let c = &b.counters;
    stacked(
        h,
        &[
            ("Requests", Cell::Count(c.requests)),
            ("TCP sessions", Cell::Count(c.tcp_sessions)),
            ("Queued", Cell::Count(c.queued)),
            ("No server (503)", Cell::Error(c.no_server)),
            ("Queue full (503)", Cell::Error(c.queue_full)),
            ("Queue timeout (503)", Cell::Error(c.queue_timeouts)),
            ("Server error (502)", Cell::Error(c.upstream_errors)),
            ("Server timeout (504)", Cell::Error(c.server_timeouts)),
            ("Connect errors", Cell::Error(c.connect_errors)),
            ("Retries", Cell::Count(c.retries)),
            ("Redispatches", Cell::Count(c.redispatches)),
            ("Aborted responses", Cell::Error(c.aborted_responses)),
        ],
    );
    h.push_str("<div class=\"scroll\"><table class=\"servers\"><thead><tr>");
    for label in SERVER_COLUMNS {
        let _ = write!(h, "<th scope=\"col\">{label}</th>");
    }
    h.push_str("</tr></thead><tbody>\n");
    for s in &b.servers {
        server(h, s);
    }
    h.push_str("</tbody></table></div>\n</section>\n");
}

const SERVER_COLUMNS: [&str; 14] = [
    "Server",
    "Status",
    "Address",
    "Weight",
    "Active",
    "Requests",
    "Connects",
    "Reused",
    "Connect errors",
    "Checks passed",
    "Checks failed",
    "Went down",
    "Went up",
    "Passive trips",
];

fn server(h: &mut String, s: &ServerRow<'_>) {
    let backup = if s.backup {
        "<span class=\"tag\">backup</span>"
    } else {
        ""
    };
    let health = match (s.checked, s.status.up) {
        (false, _) => "not checked",
        (true, true) => "checks passing",
        (true, false) => "checks failing",
    };
    let _ = write!(
        h,
        "<tr class=\"{lower}\"><td>{name}{backup}</td><td><span class=\"st st-{lower}\" \
         title=\"{health}, admin {admin}\">{status}</span></td><td class=\"addr\">{addr}</td>",
        lower = s.state.lower(),
        name = escape(s.name),
        status = s.state.as_str(),
        admin = s.status.admin.as_str(),
        addr = s.address,
    );
    let weight = match s.status.weight == s.configured_weight {
        true => s.configured_weight.to_string(),
        false => format!("{}/{}", s.status.weight, s.configured_weight),
    };
    let active = match s.maxconn {
        Some(max) => format!("{}/{max}", s.status.active),
        None => "-".to_owned(),
    };
    let _ = write!(h, "<td>{weight}</td><td>{active}</td>");
    let c = &s.counters;
    let checks = |n: u64, error: bool| match (s.checked, error) {
        (false, _) => None,
        (true, false) => Some(Cell::Count(n)),
        (true, true) => Some(Cell::Error(n)),
    };
    let row = [
        ("Requests", Some(Cell::Count(c.requests))),
        ("Connects", Some(Cell::Count(c.connects))),
        ("Reused", Some(Cell::Count(c.reused))),
        ("Connect errors", Some(Cell::Error(c.connect_errors))),
        ("Checks passed", checks(c.checks_passed, false)),
        ("Checks failed", checks(c.checks_failed, true)),
        ("Went down", Some(Cell::Error(c.went_down))),
        ("Went up", Some(Cell::Count(c.went_up))),
        ("Passive trips", Some(Cell::Error(c.passive_trips))),
    ];
    for (label, cell) in row {
        match cell {
            Some(cell) => cells(h, &[(label, cell)]),
            None => h.push_str("<td class=\"zero\">-</td>"),
        }
    }
    h.push_str("</tr>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn uptimes() {
        assert_eq!(uptime(Duration::from_secs(5)), "5s");
        assert_eq!(uptime(Duration::from_secs(65)), "1m 5s");
        assert_eq!(uptime(Duration::from_secs(3_600)), "1h 0m 0s");
        assert_eq!(uptime(Duration::from_secs(90_061)), "1d 1h 1m 1s");
    }

    #[test]
    fn refresh_rounds_up() {
        assert_eq!(refresh_secs(Duration::from_millis(1_500)), 2);
        assert_eq!(refresh_secs(Duration::from_secs(10)), 10);
        assert_eq!(refresh_secs(Duration::ZERO), 0);
    }
}
