#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

/// The reference: a linear scan over the values.
fn linear_find(values: &[u32], mut r: u64) -> usize {
    for (i, &v) in values.iter().enumerate() {
        if r < u64::from(v) {
            return i;
        }
        r -= u64::from(v);
    }
    unreachable!("r below the total")
}

#[test]
fn empty_tree_has_zero_total() {
    let f = Fenwick::new([]);
    assert_eq!(f.total(), 0);
}

proptest! {
    /// Every point of every interval maps to its owner, before and after updates.
    #[test]
    fn find_matches_a_linear_scan(
        mut values in prop::collection::vec(0u32..300, 1..40),
        updates in prop::collection::vec((0usize..40, 0u32..300), 0..20),
    ) {
        let mut f = Fenwick::new(values.iter().copied());
        for (i, v) in updates {
            f.set(i, v);
            if let Some(slot) = values.get_mut(i) {
                *slot = v;
            }
        }
        let total: u64 = values.iter().map(|&v| u64::from(v)).sum();
        prop_assert_eq!(f.total(), total);
        for r in 0..total {
            let got = f.find(r);
            prop_assert_eq!(got, linear_find(&values, r));
            prop_assert!(values[got] > 0);
        }
    }
}
