#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

fn counts(rr: &mut StaticRoundRobin, servers: usize, n: usize) -> Vec<u32> {
    let mut counts = vec![0u32; servers];
    for _ in 0..n {
        counts[rr.pick(&PickContext::default()).unwrap()] += 1;
    }
    counts
}

#[test]
fn table_is_reduced_by_the_gcd_and_smooth() {
    assert_eq!(smooth_table(&[10, 20, 0]), vec![1, 0, 1]);
    assert_eq!(smooth_table(&[5, 1, 1]), vec![0, 0, 0, 1, 2, 0, 0]);
    assert!(smooth_table(&[0, 0]).is_empty());
    assert_eq!(gcd(0, 0), 0);
}

#[test]
fn changes_rebuild_the_table() {
    let mut rr = StaticRoundRobin::new(&[1, 1, 1], 4);
    assert_eq!(rr.pick(&PickContext::default()), Some(1));
    rr.set_usable(0, false);
    assert_eq!(counts(&mut rr, 3, 10), vec![0, 5, 5]);
    rr.set_weight(1, 0);
    rr.set_weight(2, 0);
    assert_eq!(rr.pick(&PickContext::default()), None);
    rr.set_usable(0, true);
    assert_eq!(rr.pick(&PickContext::default()), Some(0));
    rr.set_weight(42, 1);
}

proptest! {
    /// Over any window of sum(weights) picks, each server is chosen exactly `weight` times, and
    /// a drained or down server never.
    #[test]
    fn exact_shares_per_cycle(
        weights in prop::collection::vec(0u32..20, 1..12),
        down in 0usize..12,
        offset in 0usize..50,
    ) {
        let mut rr = StaticRoundRobin::new(&weights, offset);
        rr.set_usable(down, false);
        let eff: Vec<u32> = weights
            .iter()
            .enumerate()
            .map(|(i, &w)| if i == down { 0 } else { w })
            .collect();
        let total: u32 = eff.iter().sum();
        if total == 0 {
            prop_assert_eq!(rr.pick(&PickContext::default()), None);
        } else {
            prop_assert_eq!(counts(&mut rr, eff.len(), total as usize), eff);
        }
    }
}
