#![allow(clippy::unwrap_used)]

use super::*;
use std::cmp::Ordering;

#[test]
fn effective_weight_follows_weight_and_health() {
    let mut s = Slots::new(&[3, 0]);
    assert_eq!((s.effective(0), s.effective(1), s.effective(9)), (3, 0, 0));
    let c = s.set_usable(0, false).unwrap();
    assert_eq!((c.before, c.after, c.changed()), (3, 0, true));
    assert!(!s.eligible(0));
    let c = s.set_weight(0, 5).unwrap();
    assert!(!c.changed(), "a down server stays at 0 whatever its weight");
    assert_eq!(s.set_usable(0, true).unwrap().after, 5);
    assert!(s.set_weight(9, 1).is_none());
    assert!(s.set_usable(9, true).is_none());
}

#[test]
fn inflight_counts_saturate_at_zero() {
    let mut s = Slots::new(&[1]);
    assert_eq!(s.finish(0), Some(0));
    assert_eq!(s.start(0), Some(1));
    assert_eq!(s.start(0), Some(2));
    assert_eq!(s.finish(0), Some(1));
    assert_eq!(s.start(3), None);
    assert_eq!(s.inflight(3), 0);
}

#[test]
fn ratios_compare_exactly() {
    assert_eq!(cmp_ratio(1, 3, 2, 6), Ordering::Equal);
    assert_eq!(cmp_ratio(1, 2, 1, 3), Ordering::Greater);
    assert_eq!(cmp_ratio(0, 1, 1, 256), Ordering::Less);
    assert_eq!(cmp_ratio(u32::MAX, 1, u32::MAX, 2), Ordering::Greater);
}
