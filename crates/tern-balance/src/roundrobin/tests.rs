#![allow(clippy::unwrap_used)]

use super::*;
use crate::{Algorithm, PickContext, ServerId};
use proptest::prelude::*;

fn picks(rr: &mut RoundRobin, n: usize) -> Vec<Option<ServerId>> {
    (0..n).map(|_| rr.pick(&PickContext::default())).collect()
}

#[test]
fn equal_weights_rotate_in_order() {
    let mut rr = RoundRobin::new(&[1, 1, 1]);
    let got: Vec<_> = picks(&mut rr, 6).into_iter().flatten().collect();
    assert_eq!(got, vec![0, 1, 2, 0, 1, 2]);
}

#[test]
fn weights_are_interleaved_smoothly() {
    let mut rr = RoundRobin::new(&[5, 1, 1]);
    let got: Vec<_> = picks(&mut rr, 7).into_iter().flatten().collect();
    assert_eq!(got, vec![0, 0, 1, 0, 2, 0, 0]);
}

#[test]
fn zero_weight_is_drained() {
    let mut rr = RoundRobin::new(&[1, 0, 1]);
    assert!(picks(&mut rr, 10).into_iter().flatten().all(|s| s != 1));
}

#[test]
fn nothing_usable_gives_none() {
    let mut rr = RoundRobin::new(&[0, 0]);
    assert_eq!(rr.pick(&PickContext::default()), None);
    let mut rr = RoundRobin::new(&[1]);
    rr.set_usable(0, false);
    assert_eq!(rr.pick(&PickContext::default()), None);
    rr.set_usable(0, true);
    assert_eq!(rr.pick(&PickContext::default()), Some(0));
}

#[test]
fn set_weight_takes_effect_and_ignores_unknown() {
    let mut rr = RoundRobin::new(&[1, 1]);
    rr.set_weight(0, 0);
    rr.set_weight(7, 3);
    assert!(picks(&mut rr, 4).into_iter().flatten().all(|s| s == 1));
}

#[test]
fn offset_shifts_the_cycle() {
    let mut a = RoundRobin::with_offset(&[1, 1], 0);
    let mut b = RoundRobin::with_offset(&[1, 1], 1);
    assert_ne!(
        a.pick(&PickContext::default()),
        b.pick(&PickContext::default())
    );
    // An offset on an all-drained backend is harmless.
    let mut z = RoundRobin::with_offset(&[0, 0], 5);
    assert_eq!(z.pick(&PickContext::default()), None);
}

proptest! {
    /// Over any window of sum(weights) picks, each server is chosen exactly `weight` times.
    #[test]
    fn exact_shares_per_cycle(weights in prop::collection::vec(0u32..20, 1..12), offset in 0usize..50, cycles in 1usize..4) {
        let total: u32 = weights.iter().sum();
        prop_assume!(total > 0);
        let mut rr = RoundRobin::with_offset(&weights, offset);
        let mut counts = vec![0u32; weights.len()];
        for _ in 0..(total as usize * cycles) {
            let s = rr.pick(&PickContext::default()).unwrap();
            counts[s] += 1;
        }
        let expected: Vec<u32> = weights.iter().map(|w| w * cycles as u32).collect();
        prop_assert_eq!(counts, expected);
    }

    /// No server is starved for longer than the cycle length, and a drained one never appears.
    #[test]
    fn never_picks_unusable(weights in prop::collection::vec(0u32..10, 1..10), down in 0usize..10) {
        let mut rr = RoundRobin::new(&weights);
        rr.set_usable(down, false);
        for _ in 0..100 {
            match rr.pick(&PickContext::default()) {
                Some(s) => prop_assert!(s != down && weights[s] > 0),
                None => prop_assert!(weights.iter().enumerate().all(|(i, &w)| w == 0 || i == down)),
            }
        }
    }
}
