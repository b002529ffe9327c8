#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn records_only_inside_the_window() {
    let t0 = Instant::now();
    let start = t0 + Duration::from_secs(1);
    let mut stats = Stats::new(start, start + Duration::from_millis(2500));
    assert_eq!(stats.per_second.len(), 2);
    stats.responded(200, t0, t0 + Duration::from_millis(500)); // warm-up
    stats.responded(200, t0, start + Duration::from_millis(10));
    stats.responded(503, start, start + Duration::from_millis(1500));
    stats.responded(200, start, start + Duration::from_millis(2200)); // partial second
    stats.responded(200, start, start + Duration::from_millis(2500)); // at the deadline
    stats.failed(ErrorKind::Timeout, start);
    assert_eq!(stats.requests, 3);
    assert_eq!(stats.ok, 2);
    assert_eq!(stats.status, [0, 2, 0, 0, 1, 0]);
    assert_eq!(stats.per_second, vec![1, 1]);
    assert_eq!(stats.series.requests, vec![1, 1]);
    assert_eq!(stats.series.errors[6], vec![0, 1], "5xx per second");
    assert_eq!(stats.series.errors[2], vec![1, 0], "timeouts per second");
    assert_eq!(stats.errors_of(ErrorKind::Timeout), 1);
    assert!(!stats.handshaked(Some(HandshakeKind::Resumed), Duration::ZERO, start));
    assert!(stats.handshaked(
        Some(HandshakeKind::FullWithHelloRetryRequest),
        Duration::ZERO,
        start
    ));
    assert_eq!(
        (
            stats.full_handshakes,
            stats.hello_retries,
            stats.resumed_handshakes
        ),
        (1, 1, 1)
    );
    // Whole-run counters include the warm-up response and the one at the deadline.
    assert_eq!(stats.live.requests, 5);
    assert_eq!(stats.live.errors, 2);

    stats.abandoned = 2;
    let mut sum = stats.clone();
    sum.merge(&stats);
    assert_eq!(sum.requests, 6);
    assert_eq!(sum.abandoned, 4);
    assert_eq!(sum.total.len(), 4);
    assert_eq!(sum.per_second, vec![2, 2]);
    assert_eq!(sum.series.errors[6], vec![0, 2]);
}

#[test]
fn error_statuses_never_enter_the_histograms() {
    let start = Instant::now();
    let mut stats = Stats::new(start, start + Duration::from_secs(2));
    let at = |ms| start + Duration::from_millis(ms);
    stats.response(200, start, at(3), at(5));
    for status in [404, 500, 503, 42, 700] {
        stats.response(status, start, at(900), at(999));
    }
    assert_eq!(stats.requests, 6);
    assert_eq!(stats.ok, 1);
    assert_eq!(stats.status, [0, 1, 0, 1, 2, 2]);
    assert_eq!(stats.total.len(), 1);
    assert_eq!(stats.ttfb.len(), 1);
    assert_eq!(stats.total.max(), stats.total.highest_equivalent(5000));
    assert_eq!(stats.ttfb.max(), stats.ttfb.highest_equivalent(3000));
    assert_eq!(stats.series.errors[5], vec![1, 0], "4xx");
    assert_eq!(stats.series.errors[7], vec![2, 0], "other");
}

#[test]
fn bytes_connections_and_active_connections_per_second() {
    let start = Instant::now();
    let mut stats = Stats::new(start, start + Duration::from_secs(3));
    let at = |ms| start + Duration::from_millis(ms);
    stats.connected(start, at(10));
    stats.active_changed(true);
    stats.received(100, at(20));
    stats.received(50, at(1999));
    stats.sample_active(at(1001));
    stats.active_changed(true);
    stats.active_changed(true);
    stats.active_changed(false);
    stats.sample_active(at(1999)); // a tick arriving a little early still closes second 1
    stats.active_changed(false);
    stats.sample_active(at(3000));
    assert_eq!(stats.series.connections, vec![1, 0, 0]);
    assert_eq!(stats.series.bytes, vec![100, 50, 0]);
    assert_eq!(stats.bytes, 150);
    assert_eq!(stats.series.active, vec![1, 2, 1]);
    stats.truncate_seconds(1);
    assert_eq!(stats.series.active, vec![1]);
    assert_eq!(stats.per_second.len(), 1);
}
