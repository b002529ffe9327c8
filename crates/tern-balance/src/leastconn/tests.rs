#![allow(clippy::unwrap_used)]

use super::*;
use crate::slots::cmp_ratio;
use proptest::prelude::*;

fn pick(lc: &mut LeastConn) -> Option<ServerId> {
    lc.pick(&PickContext::default())
}

#[test]
fn ties_rotate_and_load_steers() {
    let mut lc = LeastConn::new(&[1, 1, 1]);
    let mut seq = Vec::new();
    for _ in 0..3 {
        let s = pick(&mut lc).unwrap();
        lc.on_start(s);
        seq.push(s);
    }
    assert_eq!(seq, vec![0, 1, 2]);
    // All at 1: finishing on 1 makes it the least loaded.
    lc.on_finish(1);
    assert_eq!(pick(&mut lc), Some(1));
    // Round-robin among equals after finishing: 0 and 2 finish, 1 is at 0 too.
    lc.on_finish(2);
    lc.on_finish(0);
    let order: Vec<_> = (0..3)
        .map(|_| {
            let s = pick(&mut lc).unwrap();
            lc.on_start(s);
            s
        })
        .collect();
    assert_eq!(order, vec![1, 2, 0]);
}

#[test]
fn weight_divides_the_load() {
    let mut lc = LeastConn::new(&[1, 3]);
    for _ in 0..40 {
        let s = pick(&mut lc).unwrap();
        lc.on_start(s);
    }
    assert_eq!((lc.inflight(0), lc.inflight(1)), (10, 30));
}

#[test]
fn drained_and_down_are_skipped_and_finish_is_safe() {
    let mut lc = LeastConn::new(&[0, 1]);
    lc.on_start(1);
    lc.on_start(1);
    assert_eq!(pick(&mut lc), Some(1));
    lc.set_usable(1, false);
    assert_eq!(pick(&mut lc), None);
    lc.on_finish(1);
    lc.on_finish(1);
    lc.on_finish(1);
    lc.on_finish(9);
    assert_eq!(lc.inflight(1), 0);
    lc.set_weight(0, 2);
    assert_eq!(pick(&mut lc), Some(0));
    lc.set_usable(1, true);
    lc.on_start(0);
    assert_eq!(pick(&mut lc), Some(1));
}

proptest! {
    /// Whatever the weights and the sequence of starts, finishes and changes, the pick is never
    /// more loaded (in flight / weight) than another eligible server, and never ineligible.
    #[test]
    fn never_more_loaded_than_another_eligible(
        weights in prop::collection::vec(0u32..8, 1..16),
        ops in prop::collection::vec((0u8..5, 0usize..16, 0u32..8), 1..200),
    ) {
        let mut lc = LeastConn::new(&weights);
        let mut eff = weights.clone();
        let mut up = vec![true; weights.len()];
        let mut w = weights.clone();
        for (op, i, v) in ops {
            let i = i % weights.len();
            match op {
                0 | 1 => {
                    if let Some(s) = pick(&mut lc) {
                        lc.on_start(s);
                    }
                }
                2 => lc.on_finish(i),
                3 => {
                    lc.set_weight(i, v);
                    w[i] = v;
                }
                _ => {
                    up[i] = !up[i];
                    lc.set_usable(i, up[i]);
                }
            }
            eff[i] = if up[i] { w[i] } else { 0 };
            match pick(&mut lc) {
                None => prop_assert!(eff.iter().all(|&e| e == 0)),
                Some(s) => {
                    prop_assert!(eff[s] > 0);
                    for (j, &e) in eff.iter().enumerate() {
                        if e > 0 {
                            prop_assert!(
                                cmp_ratio(lc.inflight(s), eff[s], lc.inflight(j), e).is_le(),
                                "picked {} ({}/{}) over {} ({}/{})",
                                s, lc.inflight(s), eff[s], j, lc.inflight(j), e
                            );
                        }
                    }
                }
            }
        }
    }

    /// With every stream held, shares follow the weights within one stream per server.
    #[test]
    fn held_streams_follow_weights(weights in prop::collection::vec(1u32..10, 1..12), rounds in 1u32..5) {
        let total: u32 = weights.iter().sum();
        let mut lc = LeastConn::new(&weights);
        for _ in 0..total * rounds {
            let s = pick(&mut lc).unwrap();
            lc.on_start(s);
        }
        for (i, &w) in weights.iter().enumerate() {
            prop_assert_eq!(lc.inflight(i), w * rounds);
        }
    }
}
