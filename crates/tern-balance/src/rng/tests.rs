use super::*;

#[test]
fn same_seed_same_sequence_and_below_stays_in_range() {
    let (mut a, mut b) = (Rng::new(7), Rng::new(7));
    for _ in 0..100 {
        assert_eq!(a.next_u64(), b.next_u64());
    }
    let mut r = Rng::new(1);
    let mut seen = [0u32; 10];
    for _ in 0..10_000 {
        seen[r.below(10) as usize] += 1;
    }
    // 1,000 expected per bucket; 6 sigma is about 190.
    assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    assert_eq!(r.below(0), 0);
}
