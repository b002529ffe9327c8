#![allow(clippy::unwrap_used)]

use super::*;
use crate::{Algorithm, PickContext, ServerId};
use proptest::prelude::*;

fn picks(rr: &mut RoundRobin, n: usize) -> Vec<Option<ServerId>> {
    (0..n).map(|_| rr.pick(&PickContext::default())).collect()
}

fn counts(rr: &mut RoundRobin, servers: usize, n: usize) -> Vec<u32> {
    let mut counts = vec![0u32; servers];
    for s in picks(rr, n) {
        counts[s.unwrap()] += 1;
    }
    counts
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
    let got: Vec<_> = picks(&mut rr, 14).into_iter().flatten().collect();
    assert_eq!(got, vec![0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 1, 2, 0, 0]);
    let mut rr = RoundRobin::new(&[2, 1]);
    let got: Vec<_> = picks(&mut rr, 6).into_iter().flatten().collect();
    assert_eq!(got, vec![0, 1, 0, 0, 1, 0]);
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
    rr.set_usable(7, false);
    assert!(picks(&mut rr, 4).into_iter().flatten().all(|s| s == 1));
    rr.set_weight(0, 3);
    assert_eq!(counts(&mut rr, 2, 8), vec![6, 2]);
}

#[test]
fn a_returning_server_gets_no_burst() {
    let mut rr = RoundRobin::new(&[1, 1, 1]);
    picks(&mut rr, 7);
    rr.set_usable(1, false);
    picks(&mut rr, 50);
    rr.set_usable(1, true);
    // Within the next cycle it is picked once, like the others.
    assert_eq!(counts(&mut rr, 3, 3), vec![1, 1, 1]);
}

#[test]
fn the_heap_holds_only_eligible_servers() {
    let mut rr = RoundRobin::new(&[1, 2, 0]);
    assert_eq!(rr.heap.len(), 2);
    for i in 0..1_000u32 {
        rr.set_weight((i % 3) as usize, i % 5);
    }
    // Last weights: 4 % 5 pattern → server 0: 997 % 5 = 2, 1: 998 % 5 = 3, 2: 999 % 5 = 4.
    assert_eq!(rr.heap.len(), 3);
    rr.set_usable(2, false);
    assert_eq!(rr.heap.len(), 2);
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

/// Weight and health changes applied to a round-robin and to the expected weights.
fn apply(
    rr: &mut RoundRobin,
    eff: &mut [u32],
    weights: &mut [u32],
    up: &mut [bool],
    op: (usize, u32, bool),
) {
    let (i, w, usable) = op;
    let i = i % eff.len();
    if usable {
        rr.set_weight(i, w);
        weights[i] = w;
    } else {
        rr.set_usable(i, !up[i]);
        up[i] = !up[i];
    }
    eff[i] = if up[i] { weights[i] } else { 0 };
}

proptest! {
    /// Over any window of sum(weights) picks, each server is chosen exactly `weight` times.
    #[test]
    fn exact_shares_per_cycle(weights in prop::collection::vec(0u32..20, 1..12), offset in 0usize..50, cycles in 1usize..4) {
        let total: u32 = weights.iter().sum();
        prop_assume!(total > 0);
        let mut rr = RoundRobin::with_offset(&weights, offset);
        let got = counts(&mut rr, weights.len(), total as usize * cycles);
        let expected: Vec<u32> = weights.iter().map(|w| w * cycles as u32).collect();
        prop_assert_eq!(got, expected);
    }

    /// After any sequence of weight and health changes interleaved with picks, the next
    /// sum(weights) picks again give each server exactly its (effective) weight.
    #[test]
    fn exact_shares_after_runtime_changes(
        mut weights in prop::collection::vec(0u32..10, 1..10),
        ops in prop::collection::vec(((0usize..10, 0u32..10, any::<bool>()), 0usize..7), 0..30),
    ) {
        let mut rr = RoundRobin::new(&weights);
        let mut up = vec![true; weights.len()];
        let mut eff = weights.clone();
        for (op, gap) in ops {
            apply(&mut rr, &mut eff, &mut weights, &mut up, op);
            for s in picks(&mut rr, gap).into_iter().flatten() {
                prop_assert!(eff[s] > 0, "picked ineligible {}", s);
            }
        }
        let total: u32 = eff.iter().sum();
        if total == 0 {
            prop_assert_eq!(rr.pick(&PickContext::default()), None);
        } else {
            prop_assert_eq!(counts(&mut rr, eff.len(), total as usize), eff);
        }
    }

    /// A down or drained server never appears.
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
