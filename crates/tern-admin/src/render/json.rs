//! JSON views for the control API: `show stat`, `show info`, `show servers`.
//!
//! Keys are stable: counter names are the proxy's own field names (the same ones the exit
//! summary prints), state names are the stats page's. docs/metrics.md lists them. Objects are
//! keyed by name where the names are counters, so a client reads `counters.requests` rather
//! than searching a list; frontends, backends and servers stay lists, in configuration order.

use std::time::UNIX_EPOCH;

use serde_json::{json, Map, Value};

use super::rows::{self, BackendRow, FrontendRow, ServerRow, Status};
use super::tls::{Count, TlsBreakdown};
use crate::{Info, View};

/// `show stat`: every frontend, backend and server with its counters and state.
pub fn stat(view: &View) -> Value {
    let r = &view.stats.reloads;
    json!({
        "frontends": rows::frontends(view).iter().map(frontend).collect::<Vec<_>>(),
        "backends": rows::backends(view).iter().map(backend).collect::<Vec<_>>(),
        "tls_certificate_reloads": { "applied": r.reloads, "refused": r.failed },
        "resolvers": view.stats.resolvers.iter().map(|r| json!({
            "name": r.name,
            "counters": counters(r.fields()),
        })).collect::<Vec<_>>(),
    })
}

/// `show info`: process-wide facts.
pub fn info(info: &Info) -> Value {
    json!({
        "version": info.version,
        "pid": info.pid,
        "started": humantime::format_rfc3339_seconds(info.started).to_string(),
        "started_unix_seconds": info.started.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        "uptime_seconds": info.uptime.as_secs(),
        "workers": info.workers,
        "generation": info.generation,
        "draining_generations": info.draining_generations,
        "connections": info.connections,
        "profiling": info.profiling,
        "crypto_batch": info.crypto_batch.as_ref().map(crypto_batch),
    })
}

/// Batched key exchanges: the counters by name, and the mean fill.
fn crypto_batch(b: &tern_proxy::BatchSnapshot) -> Value {
    let mut map: Map<String, Value> = b.fields().into_iter().map(|(k, v)| (k, v.into())).collect();
    map.insert("mean_fill".into(), b.mean_fill().into());
    Value::Object(map)
}

/// `show servers`: every server's state and settings, without counters, one flat list.
pub fn servers(view: &View) -> Value {
    let list: Vec<Value> = rows::backends(view)
        .iter()
        .flat_map(|b| {
            b.servers.iter().map(|s| {
                let mut v = server_state(s);
                if let Value::Object(map) = &mut v {
                    map.insert("backend".into(), b.name.into());
                }
                v
            })
        })
        .collect();
    Value::Array(list)
}

fn counters(fields: Vec<(&str, u64)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into()))
            .collect(),
    )
}

fn frontend(f: &FrontendRow<'_>) -> Value {
    json!({
        "name": f.name,
        "tls_enabled": f.tls_enabled,
        "counters": counters(f.counters.fields()),
        "tls": if f.tls_enabled { tls(&TlsBreakdown::of(f.tls)) } else { Value::Null },
    })
}

fn backend(b: &BackendRow<'_>) -> Value {
    let by_status: Map<String, Value> = Status::ALL
        .iter()
        .map(|s| (s.lower().to_owned(), b.count(*s).into()))
        .collect();
    json!({
        "name": b.name,
        "counters": counters(b.counters.fields()),
        "servers_by_status": by_status,
        "servers": b.servers.iter().map(server).collect::<Vec<_>>(),
    })
}

fn server_state(s: &ServerRow<'_>) -> Value {
    json!({
        "name": s.name,
        "address": s.address.to_string(),
        "status": s.state.as_str(),
        "up": s.status.up,
        "admin": s.status.admin.as_str(),
        "weight": s.status.weight,
        "configured_weight": s.configured_weight,
        "active": s.status.active,
        "maxconn": s.maxconn,
        "backup": s.backup,
        "checked": s.checked,
        "last_check": s.last_check,
        "unresolved": s.status.unresolved,
    })
}

fn server(s: &ServerRow<'_>) -> Value {
    let mut v = server_state(s);
    if let Value::Object(map) = &mut v {
        map.insert("counters".into(), counters(s.counters.fields()));
    }
    v
}

/// `{"full": {name: n}, "resumed": {...}}` or `{name: n}` for counts without a kind.
fn by_kind(counts: &[Count]) -> Value {
    let mut out = Map::new();
    for c in counts {
        let slot = match c.kind {
            Some(kind) => match out.entry(kind).or_insert_with(|| Value::Object(Map::new())) {
                Value::Object(inner) => inner,
                _ => continue,
            },
            None => &mut out,
        };
        slot.insert(c.name.clone(), c.value.into());
    }
    Value::Object(out)
}

fn tls(b: &TlsBreakdown) -> Value {
    let latency: Vec<Value> = b
        .latency
        .iter()
        .map(|bucket| json!({ "le_seconds": bucket.le_seconds, "count": bucket.count }))
        .collect();
    json!({
        "versions": by_kind(&b.versions),
        "groups": by_kind(&b.groups),
        "suites": by_kind(&b.suites),
        "certificates": by_kind(&b.certificates),
        "failures": by_kind(&b.failures),
        "admission": by_kind(&b.admission),
        "latency": latency,
    })
}
