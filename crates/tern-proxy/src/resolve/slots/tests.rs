//! Slot assignment: kept, replaced, held while obsolete, out.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use super::*;

fn entry(last: u8, port: u16) -> Entry {
    Entry {
        address: std::net::SocketAddr::from(([10, 0, 0, last], port)),
        weight: Some(10),
    }
}

#[test]
fn new_records_fill_free_slots_in_order_and_stay_put() {
    let now = Instant::now();
    let mut held = vec![Held::default(); 3];
    let changes = assign(
        &mut held,
        &[entry(2, 80), entry(1, 81)],
        now,
        Duration::ZERO,
    );
    assert_eq!(
        changes,
        [
            (0, Change::Take(entry(1, 81))),
            (1, Change::Take(entry(2, 80)))
        ]
    );
    // The same records in another order move nothing.
    let later = now + Duration::from_secs(1);
    assert!(assign(
        &mut held,
        &[entry(1, 81), entry(2, 80)],
        later,
        Duration::ZERO
    )
    .is_empty());
    // A third record takes the free slot; the others stay.
    let changes = assign(
        &mut held,
        &[entry(1, 81), entry(2, 80), entry(0, 90)],
        later,
        Duration::ZERO,
    );
    assert_eq!(changes, [(2, Change::Take(entry(0, 90)))]);
}

#[test]
fn a_removed_record_frees_its_slot_after_hold_obsolete() {
    let now = Instant::now();
    let mut held = vec![Held::default(); 2];
    assign(
        &mut held,
        &[entry(1, 80), entry(2, 80)],
        now,
        Duration::from_secs(5),
    );
    let soon = now + Duration::from_secs(1);
    assert!(assign(&mut held, &[entry(1, 80)], soon, Duration::from_secs(5)).is_empty());
    let late = now + Duration::from_secs(6);
    let changes = assign(&mut held, &[entry(1, 80)], late, Duration::from_secs(5));
    assert_eq!(changes, [(1, Change::Out)]);
}

#[test]
fn a_replaced_record_moves_its_slot_and_a_weight_change_is_published() {
    let now = Instant::now();
    let mut held = vec![Held::default(); 1];
    assign(&mut held, &[entry(1, 80)], now, Duration::ZERO);
    let changes = assign(
        &mut held,
        &[entry(3, 80)],
        now + Duration::from_secs(1),
        Duration::ZERO,
    );
    assert_eq!(changes, [(0, Change::Take(entry(3, 80)))]);
    let heavier = Entry {
        weight: Some(50),
        ..entry(3, 80)
    };
    let changes = assign(
        &mut held,
        &[heavier],
        now + Duration::from_secs(2),
        Duration::ZERO,
    );
    assert_eq!(changes, [(0, Change::Take(heavier))]);
}

#[test]
fn more_records_than_slots_leave_the_extra_unused() {
    let now = Instant::now();
    let mut held = vec![Held::default(); 1];
    let changes = assign(
        &mut held,
        &[entry(2, 80), entry(1, 80)],
        now,
        Duration::ZERO,
    );
    assert_eq!(changes, [(0, Change::Take(entry(1, 80)))]);
}
