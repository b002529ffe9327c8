//! The report as JSON (`--json FILE`, [`Report::to_json_value`]); the schema, field by field,
//! is in crates/tern-bench/JSON.md.
//!
//! The top level is a struct serialised in declaration order, so the file reads from settings to
//! results, and the summary keys (`requests`, `requests_per_s`, `full`, `resumed`,
//! `errors_total`, `us_per_request`, `share`…) appear before any nested series or the reference
//! probe's object: the shell scripts in bench/ take the first match of a key.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::latency::{curve, summary};
use crate::report::{error_count, per_second, Report};
use crate::series::{Series, ERROR_CLASSES};
use crate::stats::{ErrorKind, Stats, STATUS_NAMES};

/// Identifies this layout; bumped when a field changes meaning or disappears.
pub const SCHEMA: &str = "tern-bench/1";

#[derive(Serialize)]
struct Json<'a> {
    schema: &'static str,
    versions: Value,
    system: Value,
    settings: Value,
    partial: bool,
    valid: bool,
    invalid_reasons: &'a [String],
    notes: &'a [String],
    measured_s: f64,
    tls: Value,
    requests: u64,
    ok: u64,
    requests_per_s: f64,
    connections: u64,
    connections_per_s: f64,
    bytes: u64,
    bytes_per_s: f64,
    handshakes: Value,
    errors: Value,
    errors_total: u64,
    abandoned: u64,
    status: Value,
    client_cpu: Value,
    latency_us: Value,
    percentile_curves_us: Value,
    per_second: Value,
    reference: Value,
}

/// The report as compact JSON, keys in schema order.
pub fn to_string(report: &Report) -> String {
    // Serialising plain data (numbers, strings, maps with string keys) cannot fail.
    serde_json::to_string(&build(report)).unwrap_or_else(|_| "{}".to_owned())
}

/// The report as a JSON value (object keys sorted).
pub fn to_value(report: &Report) -> Value {
    serde_json::to_value(build(report)).unwrap_or(Value::Null)
}

fn build(report: &Report) -> Json<'_> {
    let s = &report.stats;
    let sys = &report.system;
    Json {
        schema: SCHEMA,
        versions: json!({
            "tern": sys.tern, "rustls": sys.rustls, "aws_lc_rs": sys.aws_lc_rs, "tokio": sys.tokio,
            "openssl": crate::ossl::library_version(),
        }),
        system: json!({
            "cpu_model": sys.cpu_model, "cpus_available": sys.cpus_available,
            "kernel": sys.kernel,
        }),
        settings: settings(report),
        partial: report.partial,
        valid: report.validity.valid,
        invalid_reasons: &report.validity.reasons,
        notes: &report.validity.notes,
        measured_s: report.measured.as_secs_f64(),
        tls: s.tls.as_ref().map_or(Value::Null, |t| {
            json!({
                "engine": t.engine, "version": t.version, "suite": t.suite,
                "key_exchange": t.key_exchange, "group": t.group, "alpn": t.alpn,
            })
        }),
        requests: s.requests,
        ok: s.ok,
        requests_per_s: report.request_rate(),
        connections: s.connections,
        connections_per_s: report.connection_rate(),
        bytes: s.bytes,
        bytes_per_s: report.byte_rate(),
        handshakes: json!({
            "full": s.full_handshakes, "hello_retry": s.hello_retries,
            "resumed": s.resumed_handshakes, "resume_offered": s.resume_attempts,
        }),
        errors: errors(s),
        errors_total: error_count(s),
        abandoned: s.abandoned,
        status: status(s),
        client_cpu: client_cpu(report),
        latency_us: latencies(s),
        percentile_curves_us: curves(s),
        per_second: series(&s.series),
        reference: reference(report),
    }
}

fn settings(report: &Report) -> Value {
    let set = &report.settings;
    json!({
        "target": set.target,
        "load": set.load(),
        "rate": set.rate,
        "connections_configured": set.connections,
        "protocol": set.protocol(),
        "streams_per_conn": set.streams,
        "requests_per_conn": set.requests_per_conn,
        "duration_s": set.duration.as_secs_f64(),
        "warmup_s": set.warmup.as_secs_f64(),
        "ramp_s": set.ramp.as_secs_f64(),
        "timeout_s": set.timeout.as_secs_f64(),
        "threads": set.threads,
        "cpus": set.cpus,
        "tls_offer": {
            "engine": set.engine,
            "versions": set.tls_version,
            "groups": set.groups,
            "key_share_reuse": set.key_share_reuse,
            "ciphers": set.ciphers,
            "sigalgs": set.sigalgs,
            "alpn": set.alpn,
            "sni": set.sni,
            "verify": set.verify,
            "resume": set.resume,
            "resume_ratio": set.resume_ratio,
        },
        "reference": set.reference.as_ref().map(|(url, rate)| json!({ "url": url, "rate": rate })),
    })
}

fn errors(s: &Stats) -> Value {
    let map: Map<String, Value> = ErrorKind::ALL
        .iter()
        .map(|k| (k.name().to_owned(), json!(s.errors_of(*k))))
        .collect();
    Value::Object(map)
}

fn status(s: &Stats) -> Value {
    let map: Map<String, Value> = STATUS_NAMES
        .iter()
        .zip(s.status)
        .map(|(name, n)| ((*name).to_owned(), json!(n)))
        .collect();
    Value::Object(map)
}

fn client_cpu(report: &Report) -> Value {
    let (Some(cpu), Some((per_req, per_conn)), Some(share)) =
        (report.cpu, report.cpu_us_per(), report.cpu_share())
    else {
        return Value::Null;
    };
    json!({
        "user_s": cpu.user.as_secs_f64(),
        "system_s": cpu.system.as_secs_f64(),
        "us_per_request": per_req,
        "us_per_connection": per_conn,
        "share": share,
        "capacity_cpus": report.cpu_capacity,
        "client_bound": report.client_bound(),
        "share_per_second": report.cpu_share_per_second(),
    })
}

fn histograms(s: &Stats) -> [(&'static str, &hdrhistogram::Histogram<u64>); 4] {
    [
        ("connect", &s.connect),
        ("handshake", &s.handshake),
        ("ttfb", &s.ttfb),
        ("total", &s.total),
    ]
}

fn latencies(s: &Stats) -> Value {
    let mut out = Map::new();
    for (name, h) in histograms(s) {
        let sum = summary(h);
        let mut m = Map::new();
        m.insert("count".into(), json!(sum.count));
        m.insert("min".into(), json!(sum.min));
        for (label, v) in &sum.percentiles {
            m.insert((*label).to_owned(), json!(v));
        }
        m.insert("max".into(), json!(sum.max));
        m.insert("mean".into(), json!(round1(sum.mean)));
        m.insert("stdev".into(), json!(round1(sum.stdev)));
        out.insert(name.to_owned(), Value::Object(m));
    }
    Value::Object(out)
}

fn curves(s: &Stats) -> Value {
    let map: Map<String, Value> = histograms(s)
        .into_iter()
        .map(|(name, h)| {
            let points: Vec<Value> = curve(h).into_iter().map(|(p, v)| json!([p, v])).collect();
            (name.to_owned(), Value::Array(points))
        })
        .collect();
    Value::Object(map)
}

fn series(series: &Series) -> Value {
    let errors: Map<String, Value> = ERROR_CLASSES
        .iter()
        .zip(&series.errors)
        .map(|(name, values)| ((*name).to_owned(), json!(values)))
        .collect();
    json!({
        "requests": series.requests,
        "connections": series.connections,
        "bytes": series.bytes,
        "errors": errors,
        "active": series.active,
    })
}

fn reference(report: &Report) -> Value {
    let (Some(r), Some((url, rate))) = (&report.reference, &report.settings.reference) else {
        return Value::Null;
    };
    json!({
        "url": url,
        "rate": rate,
        "requests": r.requests,
        "ok": r.ok,
        "requests_per_s": per_second(r.requests, report.measured),
        "connections": r.connections,
        "errors": errors(r),
        "errors_total": error_count(r),
        "status": status(r),
        "latency_us": latencies(r),
        "percentile_curves_us": curves(r),
        "per_second": series(&r.series),
    })
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests;
