//! `global.crypto_batch`: defaults, values read, and the bounds on size and deadline.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::test_support::*;
use crate::CryptoBatch;

#[test]
fn on_by_default() {
    let config = parse_ok(&with_global("workers = 1"));
    assert_eq!(config.global.crypto_batch, CryptoBatch::default());
    assert!(config.global.crypto_batch.enabled);
    assert_eq!(config.global.crypto_batch.size, 8);
    assert_eq!(
        config.global.crypto_batch.deadline,
        Duration::from_micros(50)
    );
}

#[test]
fn the_table_turns_it_on_and_its_values_are_read() {
    let config = parse_ok(&with_global(
        "crypto_batch = { size = 4, deadline = \"200us\" }",
    ));
    let batch = config.global.crypto_batch;
    assert!(batch.enabled);
    assert_eq!(batch.size, 4);
    assert_eq!(batch.deadline, Duration::from_micros(200));
    let config = parse_ok(&with_global("crypto_batch = { enabled = false }"));
    assert!(!config.global.crypto_batch.enabled);
}

#[test]
fn size_is_two_to_eight() {
    for bad in ["1", "9", "0", "-3"] {
        assert_error(
            &with_global(&format!("crypto_batch = {{ size = {bad} }}")),
            11,
            "global.crypto_batch.size",
            "between 2 and 8",
        );
    }
}

#[test]
fn deadline_needs_a_unit_and_at_most_10ms() {
    assert_error(
        &with_global("crypto_batch = { deadline = 50 }"),
        11,
        "global.crypto_batch.deadline",
        "needs a unit",
    );
    assert_error(
        &with_global("crypto_batch = { deadline = \"11ms\" }"),
        11,
        "global.crypto_batch.deadline",
        "at most 10ms",
    );
}

#[test]
fn unknown_keys_are_refused() {
    assert_error(
        &with_global("crypto_batch = { lanes = 8 }"),
        11,
        "global.crypto_batch.lanes",
        "unknown field",
    );
}
