#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use super::*;
use crate::validity::check;

/// A 4-second closed-loop report with steady traffic, 1 CPU of capacity at 50% use.
pub(crate) fn sample_report() -> Report {
    let start = Instant::now();
    let secs = Duration::from_secs(4);
    let mut stats = Stats::new(start, start + secs);
    for second in 0..4u64 {
        for i in 0..100u64 {
            let done = start + Duration::from_millis(second * 1000 + i * 10 + 5);
            let started = done - Duration::from_micros(300 + i);
            stats.connected(started, started + Duration::from_micros(50));
            stats.response(200, started, done - Duration::from_micros(20), done);
            stats.received(120, done);
        }
    }
    stats.response(
        503,
        start,
        start + Duration::from_millis(1),
        start + Duration::from_millis(2),
    );
    stats.failed(
        crate::stats::ErrorKind::Timeout,
        start + Duration::from_millis(3),
    );
    let mut report = Report {
        settings: Settings {
            target: "http://a\"b/".into(),
            connections: 1,
            streams: None,
            requests_per_conn: 0,
            threads: 1,
            cpus: vec![1],
            duration: secs,
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(2),
            verify: "none",
            rate: None,
            ramp: Duration::ZERO,
            engine: "rustls",
            tls_version: "1.3,1.2".into(),
            groups: vec!["x25519".into()],
            key_share_reuse: 1,
            ciphers: vec![],
            sigalgs: vec![],
            alpn: vec![],
            sni: None,
            resume: None,
            resume_ratio: 0.0,
            reference: None,
        },
        stats,
        cpu: Some(CpuTime {
            user: Duration::from_millis(1500),
            system: Duration::from_millis(500),
        }),
        reference: None,
        cpu_per_second: vec![0.5; 4],
        cpu_capacity: 1.0,
        measured: secs,
        partial: false,
        system: System::current(),
        validity: Validity::default(),
    };
    report.validity = check(&report);
    report
}

#[test]
fn rates_and_cpu() {
    let r = sample_report();
    assert_eq!(r.stats.requests, 401);
    assert_eq!(r.error_count(), 2);
    assert!((r.request_rate() - 100.25).abs() < 1e-9);
    assert_eq!(r.cpu_share(), Some(0.5));
    assert_eq!(r.cpu_share_per_second(), vec![0.5; 4]);
    assert!(!r.client_bound());
    let (per_req, _) = r.cpu_us_per().unwrap();
    assert!((per_req - 2e6 / 401.0).abs() < 1e-6);
    assert!(r.validity.valid, "{:?}", r.validity);
}

#[test]
fn capacity_counts_threads_pinned_cpus_and_affinity() {
    assert_eq!(cpu_capacity(1, &[], 8), 1.0);
    assert_eq!(cpu_capacity(4, &[], 2), 2.0);
    assert_eq!(cpu_capacity(4, &[1, 1, 1, 1], 8), 1.0);
    assert_eq!(cpu_capacity(4, &[2, 3], 8), 2.0);
    assert_eq!(cpu_capacity(1, &[], 0), 1.0);
}

#[test]
fn text_report_names_everything() {
    let text = sample_report().to_string();
    for needle in [
        "target      http://a\"b/",
        "closed loop, 1 connections",
        "requests    401 (100.2/s)",
        "errors      2 (connect 0, tls 0, timeout 1, io 0, protocol 0, 4xx 0, 5xx 1, other 0)",
        "  total   ",
        "  ttfb    ",
        "per second  requests min 100, median 100, max 101",
        "client cpu  user 1.50 s + system 0.50 s = 50% of 1 CPU(s)",
        "valid       yes",
    ] {
        assert!(text.contains(needle), "{needle:?} missing in\n{text}");
    }
    assert!(!text.contains("WARNING"));
}

#[test]
fn a_saturated_client_is_invalid_and_warned() {
    let mut r = sample_report();
    r.cpu = Some(CpuTime {
        user: Duration::from_millis(3800),
        system: Duration::ZERO,
    });
    r.validity = check(&r);
    assert!(r.client_bound());
    assert!(!r.validity.valid);
    assert!(r.validity.reasons[0].contains("95%"), "{:?}", r.validity);
    let text = r.to_string();
    assert!(
        text.contains("WARNING") && text.contains("valid       NO"),
        "{text}"
    );
}

#[test]
fn partial_unsteady_and_empty_runs_are_invalid() {
    let mut r = sample_report();
    r.partial = true;
    r.measured = Duration::from_millis(2500);
    r.stats.truncate_seconds(2);
    let v = check(&r);
    assert!(!v.valid);
    assert!(
        v.reasons[0].starts_with("stopped early: 2.5 s of the 4.0 s"),
        "{v:?}"
    );
    assert!(v.notes[0].contains("flatness not checked"), "{v:?}");

    let mut r = sample_report();
    r.stats.series.requests[2] = 40;
    let v = check(&r);
    assert!(!v.valid);
    assert!(
        v.reasons[0].contains("not flat: requests/s: second 2 had 40"),
        "{v:?}"
    );

    // With one request per connection the connection series must be flat too.
    let mut r = sample_report();
    r.settings.requests_per_conn = 1;
    r.stats.series.connections[3] = 10;
    let v = check(&r);
    assert!(v.reasons[0].contains("connections/s"), "{v:?}");

    let start = Instant::now();
    let mut r = sample_report();
    r.stats = Stats::new(start, start + Duration::from_secs(4));
    let v = check(&r);
    assert!(
        v.reasons.iter().any(|x| x.contains("no request succeeded")),
        "{v:?}"
    );
}

#[test]
fn open_loop_shortfall_is_a_note() {
    let mut r = sample_report();
    r.settings.rate = Some(1000.0);
    let v = check(&r);
    assert!(v.valid);
    assert!(v.notes[0].contains("did not keep up"), "{v:?}");
}
