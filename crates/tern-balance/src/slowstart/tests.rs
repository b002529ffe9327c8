#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

const S: Duration = Duration::from_secs(1);

#[test]
fn ramps_linearly_from_one() {
    let w = |ms: u64| slow_start_weight(100, Duration::from_millis(ms), 10 * S);
    assert_eq!(w(0), 1);
    assert_eq!(w(1), 1);
    assert_eq!(w(1000), 10);
    assert_eq!(w(5000), 50);
    assert_eq!(w(9999), 100);
    assert_eq!(w(10_000), 100);
    assert_eq!(w(60_000), 100);
}

#[test]
fn edge_cases() {
    assert_eq!(slow_start_weight(0, S, 10 * S), 0);
    assert_eq!(slow_start_weight(0, 20 * S, 10 * S), 0);
    assert_eq!(slow_start_weight(7, Duration::ZERO, Duration::ZERO), 7);
    assert_eq!(slow_start_weight(1, Duration::ZERO, S), 1);
    assert_eq!(slow_start_weight(u32::MAX, S, Duration::MAX), 1);
    assert_eq!(
        slow_start_weight(u32::MAX, Duration::MAX / 2, Duration::MAX),
        u32::MAX / 2 + 1
    );
}

#[test]
fn steps() {
    assert_eq!(slow_start_step(20 * S), S);
    assert_eq!(slow_start_step(Duration::from_millis(50)), MIN_STEP);
    assert_eq!(slow_start_step(Duration::ZERO), MIN_STEP);
}

proptest! {
    #[test]
    fn never_decreases_and_stays_in_range(
        weight in 0u32..=256,
        window_ms in 0u64..100_000,
        mut times in prop::collection::vec(0u64..200_000, 1..50),
    ) {
        times.sort_unstable();
        let window = Duration::from_millis(window_ms);
        let mut last = 0;
        for t in times {
            let w = slow_start_weight(weight, Duration::from_millis(t), window);
            prop_assert!(w >= last);
            prop_assert!(w <= weight);
            prop_assert!(weight == 0 || w >= 1);
            if t >= window_ms {
                prop_assert_eq!(w, weight);
            }
            last = w;
        }
    }
}
