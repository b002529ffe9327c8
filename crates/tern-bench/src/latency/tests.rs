#![allow(clippy::unwrap_used)]

use super::*;
use crate::stats::histogram;

fn value(s: &Summary, label: &str) -> u64 {
    s.percentiles.iter().find(|(l, _)| *l == label).unwrap().1
}

/// Within HdrHistogram's three significant figures (0.1%), plus one for rounding.
fn close(got: u64, want: f64) -> bool {
    (got as f64 - want).abs() <= want * 0.001 + 1.0
}

#[test]
fn uniform_distribution() {
    let mut h = histogram();
    for v in 1..=1_000_000u64 {
        h.record(v).unwrap();
    }
    let s = summary(&h);
    assert_eq!(s.count, 1_000_000);
    assert_eq!(s.min, 1);
    for (label, want) in [
        ("p50", 500_000.0),
        ("p75", 750_000.0),
        ("p90", 900_000.0),
        ("p99", 990_000.0),
        ("p99.9", 999_000.0),
        ("p99.99", 999_900.0),
        ("p99.999", 999_990.0),
        ("p99.9999", 999_999.0),
    ] {
        assert!(
            close(value(&s, label), want),
            "{label}: {}",
            value(&s, label)
        );
    }
    assert!(close(s.max, 1_000_000.0));
    assert!((s.mean - 500_000.5).abs() < 500.0, "{}", s.mean);
}

#[test]
fn exponential_distribution() {
    // Quantile function of an exponential with mean 1000 µs, sampled at evenly spaced ranks.
    let n = 200_000u32;
    let mean = 1000.0;
    let mut h = histogram();
    for i in 0..n {
        let q = (f64::from(i) + 0.5) / f64::from(n);
        h.record((-mean * (1.0 - q).ln()).round() as u64).unwrap();
    }
    let s = summary(&h);
    for (label, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
        let want = -mean * (1.0f64 - q).ln();
        let got = value(&s, label) as f64;
        assert!(
            (got - want).abs() <= want * 0.003 + 1.0,
            "{label}: {got} vs {want}"
        );
    }
    assert!((s.mean - mean).abs() < mean * 0.01, "{}", s.mean);
    assert!((s.stdev - mean).abs() < mean * 0.05, "{}", s.stdev);
}

#[test]
fn a_rare_slow_tail_shows_at_its_percentile() {
    let mut h = histogram();
    h.record_n(100, 999_000).unwrap();
    h.record_n(50_000, 1_000).unwrap();
    let s = summary(&h);
    assert_eq!(value(&s, "p99"), 100);
    assert_eq!(value(&s, "p99.9"), 100);
    assert!(close(value(&s, "p99.99"), 50_000.0));
    assert!(close(s.max, 50_000.0));
}

#[test]
fn curve_reaches_six_nines_and_is_monotonic() {
    let q = curve_quantiles();
    assert_eq!(q.len(), 61);
    assert_eq!(q[0], 0.0);
    assert!((q[10] - 0.9).abs() < 1e-12);
    assert!((q[60] - 0.999_999).abs() < 1e-12);

    let mut h = histogram();
    for v in 1..=100_000u64 {
        h.record(v).unwrap();
    }
    let points = curve(&h);
    assert_eq!(points.len(), 62);
    assert_eq!(points.last().unwrap(), &(100.0, h.max()));
    assert!(points
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    let (pct, v) = points[20];
    assert!((pct - 99.0).abs() < 1e-9);
    assert!(close(v, 99_000.0), "{v}");
    assert!(curve(&histogram()).is_empty());
    assert_eq!(summary(&histogram()).count, 0);
}
