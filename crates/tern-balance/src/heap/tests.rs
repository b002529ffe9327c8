#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The reference: the minimum of a map, ties to the lower server.
fn reference_min(keys: &BTreeMap<usize, u32>) -> Option<(u32, usize)> {
    keys.iter().map(|(&s, &k)| (k, s)).min()
}

#[test]
fn out_of_range_is_ignored() {
    let mut h = IndexedHeap::new(2);
    h.set(5, 1u32);
    h.remove(5);
    h.remove(1);
    assert_eq!(h.peek(), None);
    h.replace_top(3);
    assert_eq!(h.len(), 0);
}

proptest! {
    /// After any sequence of inserts, key changes, removals and top replacements, the top is
    /// the minimum (key, server) and every position is recorded correctly.
    #[test]
    fn matches_a_sorted_map(ops in prop::collection::vec((0u8..4, 0usize..12, 0u32..20), 1..200)) {
        let mut h = IndexedHeap::new(12);
        let mut keys = BTreeMap::new();
        for (op, s, k) in ops {
            match op {
                0 | 1 => {
                    h.set(s, k);
                    keys.insert(s, k);
                }
                2 => {
                    h.remove(s);
                    keys.remove(&s);
                }
                _ => {
                    if let Some((_, top)) = h.peek() {
                        h.replace_top(k);
                        keys.insert(top, k);
                    }
                }
            }
            let top = h.peek();
            prop_assert_eq!(top, reference_min(&keys));
            prop_assert_eq!(h.len(), keys.len());
            for (i, &(_, s)) in h.items.iter().enumerate() {
                prop_assert_eq!(h.pos[s as usize] as usize, i);
            }
        }
    }
}
