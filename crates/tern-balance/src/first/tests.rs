#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

fn pick(f: &mut First) -> Option<ServerId> {
    f.pick(&PickContext::default())
}

#[test]
fn fills_in_order_then_reports_full() {
    let mut f = First::new(&[1, 1, 1], &[2, 1, 2]);
    let got: Vec<_> = (0..5)
        .map(|_| {
            let s = pick(&mut f).unwrap();
            f.on_start(s);
            s
        })
        .collect();
    assert_eq!(got, vec![0, 0, 1, 2, 2]);
    assert_eq!(pick(&mut f), None);
    f.on_finish(1);
    assert_eq!(pick(&mut f), Some(1));
    f.on_finish(0);
    assert_eq!(pick(&mut f), Some(0));
}

#[test]
fn no_maxconn_keeps_everything_on_the_first_eligible() {
    let mut f = First::new(&[0, 1, 1], &[]);
    for _ in 0..100 {
        let s = pick(&mut f).unwrap();
        f.on_start(s);
    }
    assert_eq!(f.inflight(1), 100);
    f.set_usable(1, false);
    assert_eq!(pick(&mut f), Some(2));
    f.set_weight(0, 1);
    assert_eq!(pick(&mut f), Some(0));
    f.set_weight(7, 1);
    f.on_start(7);
}

proptest! {
    /// The pick is always the lowest-index eligible server with a free slot, and `None` only when
    /// there is none.
    #[test]
    fn pick_is_the_first_with_room(
        weights in prop::collection::vec(0u32..3, 1..12),
        maxconn in prop::collection::vec(0u32..4, 1..12),
        ops in prop::collection::vec((0u8..4, 0usize..12), 1..200),
    ) {
        let n = weights.len();
        let mut f = First::new(&weights, &maxconn);
        let mut up = vec![true; n];
        let mut inflight = vec![0u32; n];
        for (op, i) in ops {
            let i = i % n;
            match op {
                0 | 1 => {
                    if let Some(s) = pick(&mut f) {
                        f.on_start(s);
                        inflight[s] += 1;
                    }
                }
                2 => {
                    f.on_finish(i);
                    inflight[i] = inflight[i].saturating_sub(1);
                }
                _ => {
                    up[i] = !up[i];
                    f.set_usable(i, up[i]);
                }
            }
            let expected = (0..n).find(|&j| {
                let limit = maxconn.get(j).copied().unwrap_or(0);
                up[j] && weights[j] > 0 && (limit == 0 || inflight[j] < limit)
            });
            prop_assert_eq!(pick(&mut f), expected);
        }
    }
}
