#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const MS: u64 = 1_000_000;

fn ewma(weights: &[u32], seed: u64) -> Ewma {
    Ewma::new(
        weights,
        Duration::from_secs(1),
        Duration::from_millis(5),
        seed,
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

#[test]
fn estimate_follows_peaks_blends_dips_and_relaxes() {
    let mut e = ewma(&[1], 0);
    assert_eq!(e.estimate(0, 0), 5e6, "initial guess before any response");
    e.on_response(0, Duration::from_millis(2), 10 * MS);
    assert_eq!(
        e.estimate(0, 10 * MS),
        2e6,
        "the first sample replaces the guess"
    );
    e.on_response(0, Duration::from_millis(50), 10 * MS);
    assert_eq!(
        e.estimate(0, 10 * MS),
        50e6,
        "a slower sample is taken at once"
    );
    // A faster sample one τ later: 50 ms × e^-1 kept, plus 10 ms × (1 - e^-1).
    e.on_response(0, Duration::from_millis(10), 1010 * MS);
    let k = (-1.0f64).exp();
    let expected = 50e6 * k + 10e6 * (1.0 - k);
    assert!(close(e.estimate(0, 1010 * MS), expected));
    // With no response, it halves every τ·ln 2.
    let half = (1e9 * std::f64::consts::LN_2) as u64;
    assert!(close(e.estimate(0, 1010 * MS + half), expected / 2.0));
    // A clock that goes backwards does not make it grow.
    assert!(close(e.estimate(0, 0), expected));
    assert_eq!(e.estimate(3, 0), 0.0);
    e.on_response(3, Duration::from_millis(1), 0);
}

#[test]
fn cost_counts_the_queue() {
    let mut e = ewma(&[1, 1], 0);
    e.on_response(0, Duration::from_millis(1), 0);
    e.on_response(1, Duration::from_millis(1), 0);
    e.on_start(0);
    e.on_start(0);
    assert!(close(e.cost(0, 0), 3.0 * (1e6 + 1.0)));
    assert!(e.cost(1, 0) < e.cost(0, 0));
    e.on_finish(0);
    e.on_finish(0);
    e.on_finish(0);
    assert_eq!(e.inflight(0), 0);
}

#[test]
fn the_faster_of_two_wins() {
    let mut e = ewma(&[1, 1], 3);
    e.on_response(0, Duration::from_millis(100), 0);
    e.on_response(1, Duration::from_millis(1), 0);
    let slow = (0..1000)
        .filter(|_| e.pick(&PickContext::new().with_now(0)) == Some(0))
        .count();
    // Only when all four draws land on server 0: (1/2)^4 of the time.
    assert!(slow < 100, "{slow}");
}

#[test]
fn nothing_eligible_gives_none() {
    let mut e = ewma(&[1, 0], 1);
    e.set_usable(0, false);
    assert_eq!(e.pick(&PickContext::new()), None);
    e.set_weight(1, 1);
    assert_eq!(e.pick(&PickContext::new()), Some(1));
    e.set_weight(9, 1);
}

/// A replayable simulation: one request every 100 µs to servers with fixed response times;
/// returns how many requests each server got.
fn simulate(latencies_ms: &[u64], seed: u64, requests: u64) -> Vec<u64> {
    let n = latencies_ms.len();
    let mut e = Ewma::new(
        &vec![1; n],
        Duration::from_secs(1),
        Duration::from_millis(5),
        seed,
    );
    let mut pending: BinaryHeap<Reverse<(u64, usize, u64)>> = BinaryHeap::new();
    let mut counts = vec![0; n];
    for i in 0..requests {
        let now = i * 100_000;
        while let Some(&Reverse((done, s, started))) = pending.peek() {
            if done > now {
                break;
            }
            pending.pop();
            e.on_finish(s);
            e.on_response(s, Duration::from_nanos(done - started), done);
        }
        let s = e.pick(&PickContext::new().with_now(now)).unwrap();
        e.on_start(s);
        counts[s] += 1;
        pending.push(Reverse((now + latencies_ms[s] * MS, s, now)));
    }
    counts
}

#[test]
fn simulation_sends_less_to_slow_servers_and_replays() {
    let lat = [1, 1, 1, 20];
    let counts = simulate(&lat, 42, 20_000);
    assert_eq!(counts, simulate(&lat, 42, 20_000), "same seed, same run");
    // The 20 ms server holds ~20x the in-flight of a 1 ms one for the same rate; it should get
    // far below its naive quarter.
    assert!(counts[3] * 20 < 20_000, "{counts:?}");
    for fast in &counts[..3] {
        assert!(*fast > 5_000, "{counts:?}");
    }
}

proptest! {
    // Statistical bounds: a fixed seed makes every run check the same cases (the bounds were
    // also checked over 30,000 random cases per property).
    #![proptest_config(ProptestConfig {
        rng_seed: RngSeed::Fixed(0x7e57_ba1a),
        ..ProptestConfig::default()
    })]
    /// With equal estimates and nothing in flight, picks follow the weights (the first draw wins
    /// ties) within 5 sigma, and a drained or down server is never picked.
    #[test]
    fn shares_follow_weights_and_skip_unusable(
        weights in prop::collection::vec(0u32..10, 1..20),
        down in 0usize..20,
        seed in any::<u64>(),
    ) {
        let mut e = ewma(&weights, seed);
        e.set_usable(down, false);
        let eff: Vec<u32> = weights.iter().enumerate().map(|(i, &w)| if i == down { 0 } else { w }).collect();
        let total: u32 = eff.iter().sum();
        let picks = 4000u32;
        let mut counts = vec![0u32; weights.len()];
        for _ in 0..picks {
            match e.pick(&PickContext::new()) {
                Some(s) => counts[s] += 1,
                None => prop_assert_eq!(total, 0),
            }
        }
        if total > 0 {
            for (i, (&c, &w)) in counts.iter().zip(&eff).enumerate() {
                let p = f64::from(w) / f64::from(total);
                let mean = p * f64::from(picks);
                let sigma = (mean * (1.0 - p)).sqrt();
                prop_assert!(
                    (f64::from(c) - mean).abs() <= 5.0 * sigma + 1.0,
                    "server {} weight {}: {} vs {:.0} ({:?})", i, w, c, mean, counts
                );
            }
        }
    }

    /// Of two servers, the costlier (more in flight, same estimate) is picked only when every
    /// draw lands on it.
    #[test]
    fn costlier_loses_when_both_are_drawn(seed in any::<u64>(), held in 0u32..20) {
        let mut e = ewma(&[1, 1], seed);
        e.on_response(0, Duration::from_millis(1), 0);
        e.on_response(1, Duration::from_millis(1), 0);
        for _ in 0..held + 1 {
            e.on_start(0);
        }
        let costly = (0..400).filter(|_| e.pick(&PickContext::new()) == Some(0)).count();
        // P(all four draws are server 0) = 1/16: 25 expected of 400, 5 sigma ≈ 24.
        prop_assert!(costly <= 50, "{}", costly);
    }
}
