#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

const MS: Duration = Duration::from_millis(1);

fn settings(rise: u32, fall: u32) -> HealthSettings {
    HealthSettings {
        rise,
        fall,
        interval: 2000 * MS,
        fast_interval: 500 * MS,
        down_interval: 5000 * MS,
    }
}

#[test]
fn up_server_goes_down_after_exactly_fall_failures() {
    let mut h = Health::new(settings(2, 3));
    assert!(h.is_up());
    assert_eq!(h.counter(), (4, 4));
    assert_eq!(h.on_check(false), None);
    assert_eq!(h.on_check(false), None);
    assert_eq!(h.to_string(), "UP 1/3");
    let t = h.on_check(false).unwrap();
    assert_eq!(
        t,
        Transition {
            up: false,
            cause: Cause::Check,
            streak: 3
        }
    );
    assert!(!h.is_up());
    assert_eq!(h.counter(), (0, 4));
    assert_eq!(h.to_string(), "DOWN");
}

#[test]
fn down_server_comes_up_after_exactly_rise_successes() {
    let mut h = Health::with_state(settings(3, 2), InitState::FullyDown);
    assert!(!h.is_up());
    assert_eq!(h.on_check(true), None);
    assert_eq!(h.on_check(true), None);
    assert_eq!(h.to_string(), "DOWN 2/3");
    let t = h.on_check(true).unwrap();
    assert!(t.up);
    assert_eq!(t.streak, 3);
    assert_eq!(h.counter(), (4, 4));
    assert_eq!(h.to_string(), "UP");
}

#[test]
fn a_contrary_result_resets_progress() {
    let mut h = Health::new(settings(2, 3));
    h.on_check(false);
    h.on_check(false);
    h.on_check(true);
    assert_eq!(h.counter(), (4, 4), "one success restores full health");
    assert_eq!(h.on_check(false), None);
    assert_eq!(h.on_check(false), None);
    assert!(h.on_check(false).is_some());
    h.on_check(true);
    h.on_check(false);
    assert_eq!(
        h.counter(),
        (0, 4),
        "one failure sends a rising server back to 0"
    );
    assert_eq!(h.on_check(true), None);
    assert!(h.on_check(true).unwrap().up);
}

#[test]
fn delays_follow_the_state() {
    let mut h = Health::new(settings(2, 2));
    assert_eq!(h.next_delay(), 2000 * MS);
    h.on_check(false);
    assert_eq!(h.next_delay(), 500 * MS, "in transition");
    h.on_check(false);
    assert_eq!(h.next_delay(), 5000 * MS, "fully down");
    h.on_check(true);
    assert_eq!(h.next_delay(), 500 * MS, "rising");
    h.on_check(true);
    assert_eq!(h.next_delay(), 2000 * MS);
}

#[test]
fn fast_interval_hurries_until_the_next_check() {
    let mut h = Health::new(settings(2, 3));
    assert_eq!(h.on_passive(OnError::FastInterval), None);
    assert_eq!(h.counter(), (4, 4));
    assert_eq!(h.next_delay(), 500 * MS);
    h.on_check(true);
    assert_eq!(h.next_delay(), 2000 * MS, "back to full health");
    h.on_passive(OnError::FastInterval);
    h.on_check(false);
    assert_eq!(h.next_delay(), 500 * MS, "still in transition");
}

#[test]
fn fail_check_counts_as_a_failed_check() {
    let mut h = Health::new(settings(2, 2));
    assert_eq!(h.on_passive(OnError::FailCheck), None);
    let t = h.on_check(false).unwrap();
    assert_eq!(t.streak, 2);
    let mut h = Health::new(settings(2, 2));
    h.on_check(false);
    let t = h.on_passive(OnError::FailCheck).unwrap();
    assert_eq!(t.cause, Cause::Passive(OnError::FailCheck));
    assert!(!t.up);
}

#[test]
fn sudden_death_leaves_one_failure_to_go() {
    let mut h = Health::new(settings(2, 5));
    assert_eq!(h.on_passive(OnError::SuddenDeath), None);
    assert!(h.is_up());
    assert_eq!(h.counter(), (2, 6));
    assert_eq!(h.to_string(), "UP 1/5");
    assert_eq!(h.next_delay(), 500 * MS);
    assert!(!h.on_check(false).unwrap().up);
    // Already at its last failure: HAProxy's "pre-fatal check, then fail" takes it down.
    let mut h = Health::new(settings(2, 5));
    for _ in 0..4 {
        h.on_check(false);
    }
    let t = h.on_passive(OnError::SuddenDeath).unwrap();
    assert!(!t.up);
    // With fall 1 there is nothing to leave: the server goes down.
    let mut h = Health::new(settings(3, 1));
    assert!(!h.on_passive(OnError::SuddenDeath).unwrap().up);
}

#[test]
fn mark_down_is_immediate() {
    let mut h = Health::new(settings(2, 3));
    let t = h.on_passive(OnError::MarkDown).unwrap();
    assert_eq!(
        t,
        Transition {
            up: false,
            cause: Cause::Passive(OnError::MarkDown),
            streak: 1
        }
    );
    assert_eq!(h.counter(), (0, 4));
    assert_eq!(h.next_delay(), 500 * MS, "hurried after a passive action");
    h.on_check(false);
    assert_eq!(h.next_delay(), 5000 * MS);
    assert_eq!(h.on_passive(OnError::MarkDown), None, "already down");
}

#[test]
fn init_states() {
    let s = settings(2, 3);
    let counter = |init| Health::with_state(s, init).counter().0;
    assert_eq!(counter(InitState::FullyUp), 4);
    assert_eq!(counter(InitState::Up), 2);
    assert_eq!(counter(InitState::Down), 1);
    assert_eq!(counter(InitState::FullyDown), 0);
    let mut up = Health::with_state(s, InitState::Up);
    assert!(up.is_up());
    assert!(!up.on_check(false).unwrap().up);
    let mut down = Health::with_state(s, InitState::Down);
    assert!(!down.is_up());
    assert!(down.on_check(true).unwrap().up);
}

#[test]
fn zero_thresholds_and_delays_are_clamped() {
    let mut s = settings(0, 0);
    s.interval = Duration::ZERO;
    let mut h = Health::new(s);
    assert_eq!(h.settings().rise, 1);
    assert_eq!(h.counter(), (1, 1));
    assert_eq!(h.next_delay(), MIN_DELAY);
    assert!(!h.on_check(false).unwrap().up);
    assert!(h.on_check(true).unwrap().up);
    let huge = Health::new(settings(u32::MAX, u32::MAX));
    assert_eq!(huge.counter().1, u32::MAX);
    assert_eq!(huge.to_string(), "UP");
}

#[test]
fn defaults_are_haproxys() {
    let d = HealthSettings::default();
    assert_eq!((d.rise, d.fall, d.interval), (2, 3, 2000 * MS));
    assert_eq!(d.fast_interval, d.interval);
    assert_eq!(d.down_interval, d.interval);
}

#[test]
fn spread_is_even_over_one_interval() {
    let i = 1000 * MS;
    let got: Vec<_> = (0..4).map(|k| spread(k, 4, i)).collect();
    assert_eq!(got, vec![Duration::ZERO, 250 * MS, 500 * MS, 750 * MS]);
    assert_eq!(spread(5, 4, i), 250 * MS);
    assert_eq!(spread(3, 0, i), Duration::ZERO);
    assert!(spread(usize::MAX - 1, usize::MAX, Duration::MAX) < Duration::MAX);
}

/// An independent model: consecutive results only.
#[derive(Debug)]
struct Model {
    rise: u32,
    fall: u32,
    up: bool,
    fails: u32,
    passes: u32,
}

impl Model {
    /// Applies one result; returns whether the state changed.
    fn result(&mut self, passed: bool) -> bool {
        match (self.up, passed) {
            (true, true) => self.fails = 0,
            (true, false) => {
                self.fails += 1;
                if self.fails == self.fall {
                    return self.flip();
                }
            }
            (false, true) => {
                self.passes += 1;
                if self.passes == self.rise {
                    return self.flip();
                }
            }
            (false, false) => self.passes = 0,
        }
        false
    }

    fn flip(&mut self) -> bool {
        self.up = !self.up;
        self.fails = 0;
        self.passes = 0;
        true
    }

    fn passive(&mut self, action: OnError) -> bool {
        match action {
            OnError::FastInterval => false,
            OnError::FailCheck => self.result(false),
            OnError::SuddenDeath => {
                if self.up {
                    self.fails = self.fails.max(self.fall.saturating_sub(2));
                }
                self.result(false)
            }
            OnError::MarkDown => {
                if self.up {
                    self.flip()
                } else {
                    self.passes = 0;
                    false
                }
            }
        }
    }
}

fn action() -> impl Strategy<Value = Option<OnError>> {
    prop_oneof![
        6 => Just(None),
        1 => Just(Some(OnError::FastInterval)),
        1 => Just(Some(OnError::FailCheck)),
        1 => Just(Some(OnError::SuddenDeath)),
        1 => Just(Some(OnError::MarkDown)),
    ]
}

proptest! {
    /// Health agrees with the consecutive-results model over any sequence of checks and passive
    /// actions, and its delay matches its position.
    #[test]
    fn matches_the_consecutive_model(
        rise in 1u32..5,
        fall in 1u32..5,
        steps in prop::collection::vec((any::<bool>(), action()), 0..200),
    ) {
        let s = settings(rise, fall);
        let mut h = Health::new(s);
        let mut m = Model { rise, fall, up: true, fails: 0, passes: 0 };
        let mut any_passive = false;
        for (passed, passive) in steps {
            any_passive |= passive.is_some();
            let (t, changed, hurried) = match passive {
                None => (h.on_check(passed), m.result(passed), false),
                Some(a) => (h.on_passive(a), m.passive(a), true),
            };
            prop_assert_eq!(t.is_some(), changed);
            prop_assert_eq!(h.is_up(), m.up);
            if let Some(t) = t {
                prop_assert_eq!(t.up, m.up);
                if t.up {
                    prop_assert_eq!(t.streak, rise);
                } else if !any_passive {
                    prop_assert_eq!(t.streak, fall);
                }
            }
            let stable = (m.up && m.fails == 0) || (!m.up && m.passes == 0);
            let expected = match (hurried, stable, m.up) {
                (true, _, _) | (false, false, _) => s.fast_interval,
                (false, true, true) => s.interval,
                (false, true, false) => s.down_interval,
            };
            prop_assert_eq!(h.next_delay(), expected);
            let (c, full) = h.counter();
            prop_assert!(c <= full);
            prop_assert_eq!(c >= rise, h.is_up());
        }
    }
}
