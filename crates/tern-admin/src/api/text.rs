//! Text answers for people: `key: value` lines for `show info` (as HAProxy's), aligned tables
//! for `show stat` and `show servers`.
//!
//! Tables show the columns an operator scans for; `json show stat` has every counter. No
//! answer contains an empty line: on the Unix socket an empty line ends an answer.

use std::time::UNIX_EPOCH;

use super::exec::format_uptime;
use super::object_rates::{key, Current};
use super::rates::CurrentRates;
use crate::render::rows::{self, BackendRow, ServerRow, Status};
use crate::{Info, View};

/// `show info`.
pub fn info(info: &Info, rates: &CurrentRates) -> String {
    let started = humantime::format_rfc3339_seconds(info.started);
    let started_secs = info
        .started
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut lines = vec![
        format!("version: {}", info.version),
        format!("pid: {}", info.pid),
        format!("started: {started} ({started_secs})"),
        format!(
            "uptime: {} ({}s)",
            format_uptime(info.uptime),
            info.uptime.as_secs()
        ),
        format!("workers: {}", info.workers),
        format!("generation: {}", info.generation),
        format!("draining_generations: {}", info.draining_generations),
        format!("connections: {}", info.connections),
        format!("profiling: {}", if info.profiling { "on" } else { "off" }),
    ];
    crypto_batch(&mut lines, info.crypto_batch.as_ref());
    match &rates.0 {
        Some(r) => {
            let over = format!("per second over the last {}s", r.window.as_secs());
            lines.push(format!("session_rate: {:.1} ({over})", r.sessions));
            lines.push(format!("request_rate: {:.1} ({over})", r.requests));
            lines.push(format!(
                "tls_handshake_rate: {:.1} ({over})",
                r.tls_handshakes
            ));
        }
        None => lines.push("session_rate: - (sampling, ask again in a second)".to_owned()),
    }
    lines.join("\n")
}

/// `show info`'s lines on batched key exchanges (`global.crypto_batch`).
fn crypto_batch(lines: &mut Vec<String>, batch: Option<&tern_proxy::BatchSnapshot>) {
    let Some(b) = batch else {
        lines.push("crypto_batch: off".to_owned());
        return;
    };
    lines.push("crypto_batch: on".to_owned());
    lines.push(format!("crypto_batch_batches: {}", b.batches));
    lines.push(format!("crypto_batch_operations: {}", b.batched));
    lines.push(format!("crypto_batch_mean_fill: {:.2}", b.mean_fill()));
    lines.push(format!(
        "crypto_batch_fallbacks: {} (alone {}, no_ifma {}, failed {})",
        b.fallbacks(),
        b.alone,
        b.no_ifma,
        b.failed
    ));
    lines.push(format!("crypto_batch_unused: {}", b.unused));
    let e = &b.ecdsa;
    lines.push(format!(
        "crypto_batch_ecdsa: signatures {}, pairs {}, batches {}, faults {}, fallbacks {}",
        e.signatures, e.pairs, e.batches, e.faults, e.fallbacks
    ));
}

/// `show stat`: a table of frontends, one of backends, one of servers.
pub fn stat(view: &View, rates: &Current) -> String {
    let mut frontends = Table::new(&[
        "frontend",
        "sessions",
        "sess/s",
        "requests",
        "req/s",
        "bytes_in",
        "bytes_out",
        "2xx",
        "3xx",
        "4xx",
        "5xx",
        "bad_req",
        "timeouts",
        "tls_full",
        "tls_resumed",
        "tls_failed",
        "denied",
        "returned",
        "no_backend",
        "tunnels",
        "tcp_sessions",
        "proxy_err",
    ]);
    for f in rows::frontends(view) {
        let c = f.counters;
        frontends.row(vec![
            f.name.to_owned(),
            c.sessions.to_string(),
            rates.cell(&key("frontend", f.name, "sessions")),
            c.requests.to_string(),
            rates.cell(&key("frontend", f.name, "requests")),
            c.bytes_in.to_string(),
            c.bytes_out.to_string(),
            c.resp_2xx.to_string(),
            c.resp_3xx.to_string(),
            c.resp_4xx.to_string(),
            c.resp_5xx.to_string(),
            (c.bad_requests + c.head_too_large).to_string(),
            (c.request_timeouts + c.client_timeouts).to_string(),
            c.tls_full.to_string(),
            c.tls_resumed.to_string(),
            (c.tls_failures + c.tls_timeouts).to_string(),
            c.denied.to_string(),
            c.intercepted.to_string(),
            c.no_backend.to_string(),
            c.tunnels.to_string(),
            c.tcp_sessions.to_string(),
            c.proxy_errors.to_string(),
        ]);
    }
    let backend_rows = rows::backends(view);
    let mut backends = Table::new(&[
        "backend",
        "up/total",
        "requests",
        "req/s",
        "bytes_out",
        "in_queue",
        "queued",
        "queue_full",
        "no_server",
        "conn_err",
        "retries",
        "srv_err",
        "srv_timeout",
        "tcp_sessions",
    ]);
    for (i, b) in backend_rows.iter().enumerate() {
        let c = b.counters;
        backends.row(vec![
            b.name.to_owned(),
            format!("{}/{}", b.count(Status::Up), b.servers.len()),
            c.requests.to_string(),
            rates.cell(&key("backend", b.name, "requests")),
            c.bytes_out.to_string(),
            view.stats.queued.get(i).copied().unwrap_or(0).to_string(),
            c.queued.to_string(),
            (c.queue_full + c.queue_timeouts).to_string(),
            c.no_server.to_string(),
            c.connect_errors.to_string(),
            c.retries.to_string(),
            (c.upstream_errors + c.aborted_responses).to_string(),
            c.server_timeouts.to_string(),
            c.tcp_sessions.to_string(),
        ]);
    }
    let mut servers = server_table(&[
        "requests",
        "req/s",
        "bytes_out",
        "connects",
        "conn_err",
        "reused",
        "checks",
        "downs",
        "tcp_sessions",
    ]);
    for b in &backend_rows {
        for s in &b.servers {
            let c = s.counters;
            servers.row(server_cells(
                b,
                s,
                vec![
                    c.requests.to_string(),
                    rates.cell(&key(
                        "server",
                        &format!("{}/{}", b.name, s.name),
                        "requests",
                    )),
                    c.bytes_out.to_string(),
                    c.connects.to_string(),
                    c.connect_errors.to_string(),
                    c.reused.to_string(),
                    format!("{}/{}", c.checks_passed, c.checks_failed),
                    c.went_down.to_string(),
                    c.tcp_sessions.to_string(),
                ],
            ));
        }
    }
    [frontends.render(), backends.render(), servers.render()].join("\n")
}

/// `show servers [BACKEND]`: state and settings of each server.
pub fn servers(view: &View, backend: Option<&str>) -> String {
    let mut table = server_table(&[
        "address",
        "maxconn",
        "backup",
        "checks",
        "requests",
        "last check",
    ]);
    for b in rows::backends(view) {
        if backend.is_some_and(|name| name != b.name) {
            continue;
        }
        for s in &b.servers {
            table.row(server_cells(
                &b,
                s,
                vec![
                    s.address.to_string(),
                    s.maxconn.map_or("-".to_owned(), |m| m.to_string()),
                    yes_no(s.backup),
                    if s.checked {
                        format!("{}/{}", s.counters.checks_passed, s.counters.checks_failed)
                    } else {
                        "-".to_owned()
                    },
                    s.counters.requests.to_string(),
                    if s.last_check.is_empty() {
                        "-".to_owned()
                    } else {
                        s.last_check.to_owned()
                    },
                ],
            ));
        }
    }
    table.render()
}

/// A server table: `server status admin weight active` then `extra` columns.
fn server_table(extra: &[&str]) -> Table {
    let mut headers = vec!["server", "status", "admin", "weight", "active"];
    headers.extend_from_slice(extra);
    Table::new(&headers)
}

fn server_cells(b: &BackendRow<'_>, s: &ServerRow<'_>, extra: Vec<String>) -> Vec<String> {
    let weight = if s.status.weight == s.configured_weight {
        s.status.weight.to_string()
    } else {
        format!("{}/{}", s.status.weight, s.configured_weight)
    };
    let mut cells = vec![
        format!("{}/{}", b.name, s.name),
        s.state.as_str().to_owned(),
        s.status.admin.as_str().to_owned(),
        weight,
        s.status.active.to_string(),
    ];
    cells.extend(extra);
    cells
}

fn yes_no(value: bool) -> String {
    if value { "yes" } else { "no" }.to_owned()
}

/// Left-aligned columns, two spaces apart.
struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(headers: &[&str]) -> Self {
        Self {
            rows: vec![headers.iter().map(|h| (*h).to_owned()).collect()],
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let lines: Vec<String> = self
            .rows
            .iter()
            .map(|row| {
                let mut line = String::new();
                for (cell, width) in row.iter().zip(&widths) {
                    line.push_str(&format!("{cell:width$}  "));
                }
                line.trim_end().to_owned()
            })
            .collect();
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let mut t = Table::new(&["name", "n"]);
        t.row(vec!["a".into(), "12345".into()]);
        t.row(vec!["longer".into(), "1".into()]);
        assert_eq!(t.render(), "name    n\na       12345\nlonger  1");
    }
}
