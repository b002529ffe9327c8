//! Load models and reporting against `tern term`: closed and open loop, the ramp, the reference
//! probe, per-second series, early stop and the JSON file.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tern_tls::KeyKind;

#[test]
fn closed_loop_keep_alive_matches_the_server() {
    let (term, addr) = term(2);
    let r = bench(
        &format!("http://{addr}/?s=100"),
        &["-c", "4", "--threads", "2", "-d", "2"],
    );
    let s = &r.stats;
    assert_eq!(s.connections, 4, "one connection per client, kept alive");
    assert_eq!(term.stats().connections, 4);
    // The server saw every completed request, plus those in flight at the deadline and those
    // that completed while the client threads were stopping (the threads stop within a few
    // milliseconds of the deadline on a busy machine).
    let served = term.stats().requests;
    let slack = 4 + s.requests / 100;
    assert!(
        served >= s.requests && served - s.requests <= slack,
        "{served} vs {}",
        s.requests
    );
    assert_eq!(r.error_count(), 0);
    assert_eq!(s.series.active, vec![4, 4], "{:?}", s.series);
    assert_eq!(s.series.connections.iter().sum::<u64>(), 4);
    assert!(
        s.bytes > 100 * s.requests,
        "head and body bytes: {}",
        s.bytes
    );
    assert_eq!(s.series.bytes.iter().sum::<u64>(), s.bytes);
    assert_eq!(r.settings.load(), "closed");
    assert!(s.ttfb.max() <= s.total.max());
}

#[test]
fn open_loop_sends_the_rate_asked_for() {
    let (term, addr) = term(1);
    let extra = ["--rate", "400", "-c", "8", "--threads", "2", "-d", "1"];
    let r = bench(&format!("http://{addr}/"), &extra);
    let s = &r.stats;
    assert!(s.requests.abs_diff(400) <= 30, "{} responses", s.requests);
    assert_eq!(r.error_count(), 0);
    assert!(s.connections <= 8);
    assert!(term.stats().requests.abs_diff(400) <= 34);
    assert_eq!(r.settings.load(), "open");
    assert_eq!(r.to_json_value()["settings"]["rate"], 400.0);
}

#[test]
fn the_ramp_climbs_before_the_window_and_is_not_reported() {
    let (term, addr) = term(1);
    // One stair at half of 200/s for 1 s (about 100 arrivals), then 1 s measured at 200/s.
    let extra = ["--rate", "200", "--ramp", "1", "-d", "1"];
    let r = bench(&format!("http://{addr}/"), &extra);
    assert!(r.stats.requests.abs_diff(200) <= 10, "{}", r.stats.requests);
    let served = term.stats().requests;
    assert!(
        served.abs_diff(300) <= 15,
        "{served} served in ramp + window"
    );
}

#[test]
fn the_reference_probe_is_reported_separately() {
    let (front, front_addr) = tls_term(KeyKind::EcdsaP256, Resumption::Tickets);
    let (backend, backend_addr) = term(1);
    let url = format!("https://{front_addr}/");
    let ref_url = format!("http://{backend_addr}/?s=10");
    let extra = [
        "-c",
        "2",
        "-d",
        "1",
        "--ref-url",
        &ref_url,
        "--ref-rate",
        "50",
    ];
    let r = bench(&url, &extra);
    let probe = r.reference.as_ref().unwrap();
    assert!(
        probe.requests.abs_diff(50) <= 3,
        "{} probe responses",
        probe.requests
    );
    assert!(probe.connections <= 4, "kept alive");
    assert_eq!(probe.status[1], probe.requests);
    assert!(probe.tls.is_none() && probe.full_handshakes == 0);
    assert!(backend.stats().requests.abs_diff(50) <= 4);
    assert!(r.stats.requests > 0);
    assert!(front.stats().requests >= r.stats.requests);
    let json = r.to_json_value();
    assert_eq!(json["reference"]["requests"], probe.requests);
    assert_eq!(json["reference"]["rate"], 50.0);
    assert!(r
        .to_string()
        .contains(&format!("reference   {ref_url} at 50/s")));
}

#[test]
fn a_stop_request_ends_the_run_with_a_partial_report() {
    let (_term, addr) = term(1);
    let args = args(&format!("http://{addr}/"), &["-c", "2", "-d", "30"]);
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1300));
        flag.store(true, Ordering::Relaxed);
    });
    let started = Instant::now();
    let r = tern_bench::execute_with_stop(&args, stop).unwrap();
    stopper.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(r.partial);
    assert!(r.measured >= Duration::from_millis(1200) && r.measured < Duration::from_secs(3));
    assert_eq!(r.stats.per_second.len(), r.measured.as_secs() as usize);
    assert!(r.stats.requests > 0);
    assert!(!r.validity.valid);
    assert!(
        r.validity.reasons[0].starts_with("stopped early"),
        "{:?}",
        r.validity
    );
    // Rates are per second of what was measured, not of the 30 s asked for.
    let rate = r.request_rate();
    assert!((rate - r.stats.requests as f64 / r.measured.as_secs_f64()).abs() < 1e-6);
}

#[test]
fn run_writes_the_json_report() {
    let (_term, addr) = term(1);
    let path = std::env::temp_dir().join(format!("tern-bench-load-{}.json", std::process::id()));
    let url = format!("http://{addr}/");
    let path_arg = path.to_str().unwrap();
    let argv = [&url, "-d", "1", "--warmup", "0.2", "-q", "--json", path_arg];
    tern_bench::run(tern_bench::BenchArgs::from_args(argv).unwrap()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(text.ends_with("}\n"));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], tern_bench::JSON_SCHEMA);
    for key in [
        "versions",
        "system",
        "settings",
        "partial",
        "valid",
        "invalid_reasons",
        "notes",
        "measured_s",
        "requests",
        "requests_per_s",
        "connections",
        "bytes",
        "handshakes",
        "errors",
        "errors_total",
        "status",
        "client_cpu",
        "latency_us",
        "percentile_curves_us",
        "per_second",
        "reference",
    ] {
        assert!(v.get(key).is_some(), "{key} missing");
    }
    assert_eq!(v["errors_total"], 0);
    assert_eq!(v["measured_s"], 1.0);
    assert_eq!(v["per_second"]["requests"].as_array().unwrap().len(), 1);
    assert!(v["client_cpu"]["share_per_second"].as_array().is_some());
    assert!(v["latency_us"]["total"]["p99.9999"].as_u64().unwrap() > 0);
    assert_eq!(
        v["percentile_curves_us"]["total"].as_array().unwrap().len(),
        62
    );
    assert!(v["versions"]["rustls"].as_str().unwrap().starts_with("0."));
}
