#![allow(clippy::unwrap_used)]

use super::env::parse_cpu_ranges;
use super::run_order;
use super::target::{parse_info, tern_counts};
use crate::scenario::TargetKind;

#[test]
fn cpu_ranges() {
    assert_eq!(parse_cpu_ranges("0-1"), Some(vec![0, 1]));
    assert_eq!(parse_cpu_ranges("0,2-4"), Some(vec![0, 2, 3, 4]));
    assert_eq!(parse_cpu_ranges("3-1"), None);
    assert_eq!(parse_cpu_ranges(""), None);
}

#[test]
fn haproxy_show_info_fields() {
    let text = "Name: HAProxy\nCumSslConns: 1234\nSslRate: 5\n";
    assert_eq!(parse_info(text, "CumSslConns"), Some(1234));
    assert_eq!(parse_info(text, "Missing"), None);
}

#[test]
fn targets_alternate_their_order_every_other_run() {
    let targets = [TargetKind::Tern, TargetKind::Haproxy, TargetKind::Nginx];
    let forward = targets.to_vec();
    let backward: Vec<TargetKind> = targets.iter().rev().copied().collect();
    assert_eq!(run_order(&targets, 1), forward);
    assert_eq!(run_order(&targets, 2), backward);
    assert_eq!(run_order(&targets, 3), forward);
    assert_eq!(run_order(&targets, 4), backward);
}

#[test]
fn tern_exit_summary_counts_and_batching() {
    let lines: Vec<String> = [
        "stats: frontend web tls_full=120 tls_resumed=3 requests=123",
        "stats: crypto_batch all batches=20 operations=118 fallback_alone=2",
    ]
    .map(String::from)
    .to_vec();
    let c = tern_counts(&lines);
    assert_eq!((c.full, c.resumed), (Some(120), Some(3)));
    assert!(
        c.note
            .ends_with("; crypto_batch batches=20 operations=118 fallback_alone=2"),
        "{}",
        c.note
    );
    let plain = tern_counts(&lines[..1]);
    assert!(!plain.note.contains("crypto_batch"), "{}", plain.note);
}
