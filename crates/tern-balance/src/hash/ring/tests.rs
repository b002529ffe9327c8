#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

#[test]
fn empty_ring_finds_nothing() {
    let slots = Slots::new(&[0, 0]);
    let mut ring = Ring::new(vec![0, 1], &[0, 0], 0);
    ring.rebuild(&slots);
    assert!(ring.is_empty());
    assert_eq!(ring.lookup(42, &slots, 0), None);
}

#[test]
fn points_per_weight_shrink_on_large_backends() {
    let small = Ring::new(vec![0; 3], &[1, 1, 1], 0);
    assert_eq!(small.per_weight, POINTS_PER_WEIGHT);
    let weights = vec![256; 1000];
    let mut large = Ring::new((0..1000).collect(), &weights, 0);
    assert_eq!(large.per_weight, 1);
    large.rebuild(&Slots::new(&weights));
    assert_eq!(large.len(), 256_000);
}

proptest! {
    /// The bucket index finds the same point as a plain binary search, for any ring size.
    #[test]
    fn bucket_index_matches_binary_search(
        weights in prop::collection::vec(0u32..4, 1..40),
        targets in prop::collection::vec(any::<u32>(), 1..200),
    ) {
        let slots = Slots::new(&weights);
        let mut ring = Ring::new((0..weights.len() as u64).collect(), &weights, 0);
        ring.rebuild(&slots);
        for t in targets.into_iter().chain([0, u32::MAX]) {
            let expected = ring.points.partition_point(|p| p.hash < t) % ring.points.len().max(1);
            prop_assert_eq!(ring.first_at_or_after(t), expected);
        }
    }
}
