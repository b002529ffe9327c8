//! The search against simulated targets with known capacity, seeded noise and scripted
//! failures; the criteria, the options, and the report's rendering.

#![allow(clippy::unwrap_used)]

mod e2e;
mod sim;

use std::time::Duration;

use super::*;
use sim::{Fluid, Queue, Rng};

const S: Duration = Duration::from_secs(1);

fn config() -> SearchConfig {
    SearchConfig::default()
}

fn run(config: SearchConfig, target: impl FnMut(f64) -> TrialOutcome) -> SloResult {
    let mut target = target;
    let result: Result<SloResult, SearchFailed<()>> = search(config, |r| Ok(target(r)));
    result.unwrap()
}

/// What every search must satisfy, whatever the target did.
fn check_invariants(config: &SearchConfig, result: &SloResult) {
    assert!(result.trials.len() <= config.max_trials as usize);
    let failed: Vec<f64> = result
        .trials
        .iter()
        .filter(|t| !t.verdict.passed())
        .map(|t| t.rate)
        .collect();
    if let Some(c) = &result.confirmed {
        // Never a rate at which a trial failed, nor one above it.
        for f in &failed {
            assert!(
                c.rate < *f,
                "confirmed {} but a trial failed at {f}",
                c.rate
            );
        }
        let at_rate: Vec<_> = result.trials.iter().filter(|t| t.rate == c.rate).collect();
        assert!(at_rate.iter().all(|t| t.verdict.passed()));
        assert!(at_rate.len() > config.confirm as usize - 1);
        assert_eq!(c.achieved.len(), config.confirm as usize);
        assert!(c.min <= c.median && c.median <= c.max);
    }
    // Bracket trials always lie strictly between the best pass and lowest failure so far.
    let (mut lo, mut hi) = (0.0f64, f64::INFINITY);
    for t in result.trials.iter().filter(|t| t.phase != Phase::Confirm) {
        assert!(
            t.rate > lo && t.rate < hi,
            "{} outside ({lo}, {hi})",
            t.rate
        );
        match t.verdict {
            Verdict::Pass => lo = t.rate,
            Verdict::Fail(_) => hi = t.rate,
            _ => {}
        }
    }
    for t in &result.trials {
        assert!(t.rate >= config.min_rate);
        assert!(config.max_rate.is_none_or(|m| t.rate <= m));
    }
}

#[test]
fn lands_within_the_resolution_of_a_fluid_targets_threshold() {
    // Seed 000's setting: a 2-minute window, no request over 2 s. Above capacity C the backlog
    // grows by (r - C) per second, so the slowest request waits (r - C)·T/C: the highest
    // passing rate is C·(1 + 2 s / 120 s) ≈ 1.0167·C, whatever noise there is in C itself.
    for seed in 0..40 {
        let capacity = 300.0 + 97.0 * seed as f64;
        let mut fluid = Fluid::new(capacity, seed);
        fluid.jitter = 0.003;
        let cfg = config();
        let result = run(cfg.clone(), |r| fluid.trial(r));
        check_invariants(&cfg, &result);
        let (low, high) = fluid.threshold_range(&cfg.criteria);
        let c = result.confirmed.as_ref().expect("confirmed");
        assert_eq!(result.stop, StopReason::Converged, "seed {seed}");
        assert!(c.rate <= high, "seed {seed}: {} > {high}", c.rate);
        let stepped = result
            .trials
            .iter()
            .any(|t| !t.verdict.passed() && t.phase == Phase::Confirm);
        let floor = low / (1.0 + cfg.resolution.relative);
        let floor = if stepped { floor * 0.95 } else { floor };
        assert!(c.rate >= floor, "seed {seed}: {} < {floor}", c.rate);
        // …and so within two resolutions of the capacity itself.
        assert!(
            (c.rate / capacity - 1.0).abs() < 2.0 * 0.02 + 0.0167,
            "seed {seed}"
        );
        assert!(
            result.trials.len() <= 20,
            "seed {seed}: {} trials",
            result.trials.len()
        );
    }
}

#[test]
fn queueing_target_is_found_near_its_capacity() {
    // An M/D/1 queue simulated request by request: latency stays bounded below capacity and
    // grows without bound above it.
    for seed in 0..6 {
        let capacity = 400.0 + 150.0 * seed as f64;
        let mut queue = Queue::new(capacity, seed);
        let cfg = SearchConfig {
            start_rate: 50.0,
            ..config()
        };
        let result = run(cfg.clone(), |r| queue.trial(r));
        check_invariants(&cfg, &result);
        let c = result.confirmed.as_ref().expect("confirmed");
        let ratio = c.rate / capacity;
        assert!((0.9..1.08).contains(&ratio), "seed {seed}: {ratio}");
        // The median achieved rate is the offered one, within counting noise.
        assert!((c.median / c.rate - 1.0).abs() < 0.05, "{c:?}");
    }
}

#[test]
fn a_percentile_bound_lowers_the_rate_and_holds_in_every_confirmation() {
    let capacity = 800.0;
    let bound = Duration::from_millis(15);
    let plain = run(config(), |r| Queue::new(capacity, 7).trial(r));
    let mut cfg = config();
    cfg.criteria.quantiles.push(QuantileBound {
        label: "p99",
        quantile: 0.99,
        bound,
    });
    let mut queue = Queue::new(capacity, 7);
    let strict = run(cfg.clone(), |r| queue.trial(r));
    check_invariants(&cfg, &strict);
    let (p, s) = (plain.max_rate().unwrap(), strict.max_rate().unwrap());
    assert!(s < 0.97 * p, "p99 bound {s} vs max-only {p}");
    for t in strict.trials.iter().filter(|t| t.rate == s) {
        assert!(t.outcome.quantile(0.99).unwrap() <= bound);
    }
    // A failing trial at a higher rate failed because of its p99.
    assert!(strict.trials.iter().any(|t| matches!(&t.verdict,
        Verdict::Fail(v) if v.iter().any(|v| matches!(v, Violation::Quantile { .. })))));
}

#[test]
fn a_target_failing_at_the_start_rate_is_searched_downwards() {
    let mut fluid = Fluid::new(20.0, 1);
    let cfg = config();
    let result = run(cfg.clone(), |r| fluid.trial(r));
    check_invariants(&cfg, &result);
    let phases: Vec<Phase> = result.trials.iter().map(|t| t.phase).take(4).collect();
    assert_eq!(
        phases,
        [Phase::Grow, Phase::Descend, Phase::Descend, Phase::Descend]
    );
    let (low, high) = fluid.threshold_range(&cfg.criteria);
    let rate = result.max_rate().unwrap();
    assert!(rate <= high && rate >= low / 1.02 * 0.95, "{rate}");
}

#[test]
fn a_target_that_always_fails_gives_a_clear_empty_result() {
    let cfg = config();
    let result = run(cfg.clone(), |r| TrialOutcome {
        errors: 5,
        ..sim::perfect(r)
    });
    check_invariants(&cfg, &result);
    assert_eq!(result.stop, StopReason::NothingPassed);
    assert_eq!(result.confirmed, None);
    assert_eq!(result.best_passed, None);
    let rates: Vec<f64> = result.trials.iter().map(|t| t.rate).collect();
    // 100, 50, 25, 12.5, 6.25, 3.125, 1.5625, then --min-rate itself.
    assert_eq!(rates.len(), 8);
    assert_eq!(rates.last(), Some(&1.0));
    let report = FindMaxReport::new("http://t/".into(), "requests", cfg.criteria, result);
    let text = report.to_string();
    assert!(text.contains("no rate met the SLO"), "{text}");
    assert!(text.contains("every rate failed"), "{text}");
}

#[test]
fn stops_within_its_trial_budget() {
    for max_trials in 1..=7 {
        let cfg = SearchConfig {
            max_trials,
            ..config()
        };
        let mut fluid = Fluid::new(5000.0, 3);
        let result = run(cfg.clone(), |r| fluid.trial(r));
        check_invariants(&cfg, &result);
        assert_eq!(result.trials.len(), max_trials as usize);
        assert_eq!(result.stop, StopReason::TrialBudget);
        assert_eq!(result.confirmed, None);
        // Growth from 100 by 2 (6400 fails, 7th): the best pass so far is reported, unconfirmed.
        let expected = 100.0 * 2f64.powi(max_trials.min(6) as i32 - 1);
        assert_eq!(result.best_passed, Some(expected));
    }
}

#[test]
fn does_not_start_a_trial_that_would_overrun_the_time_budget() {
    let cfg = SearchConfig {
        max_time: 60 * S,
        ..config()
    };
    let mut fluid = Fluid::new(5000.0, 3);
    fluid.elapsed = 11 * S;
    let result = run(cfg.clone(), |r| fluid.trial(r));
    assert_eq!(result.stop, StopReason::TimeBudget);
    assert_eq!(result.trials.len(), 5); // a sixth would end at 66 s
    assert_eq!(result.spent, 55 * S);
}

#[test]
fn flaky_trials_are_deterministic_per_seed_and_never_reported() {
    let mut steps = 0;
    for seed in 0..150 {
        let flaky = |seed| {
            let mut fluid = Fluid::new(1000.0, seed);
            let mut rng = Rng::new(seed ^ 0xf1a4);
            move |r: f64| {
                let mut outcome = fluid.trial(r);
                if rng.unit() < 0.2 {
                    outcome.errors += 1; // a transient failure, whatever the rate
                }
                outcome
            }
        };
        let cfg = config();
        let first = run(cfg.clone(), flaky(seed));
        let again = run(cfg.clone(), flaky(seed));
        assert_eq!(first, again, "seed {seed}");
        check_invariants(&cfg, &first);
        assert!(first.trials.len() <= cfg.max_trials as usize);
        steps += first
            .trials
            .iter()
            .filter(|t| t.phase == Phase::Confirm && !t.verdict.passed())
            .count();
    }
    assert!(steps > 0, "the flaky target never failed a confirmation");
}

#[test]
fn a_failed_confirmation_steps_down_and_confirms_again() {
    // Passes everything up to 1000/s: 100…800 pass, 1600 fails, bisection converges on 1000.
    // The second confirmation run at 1000/s fails (the third trial at that rate).
    let mut confirms = 0;
    let result = run(config(), |r| {
        let mut outcome = sim::perfect(r);
        if r > 1000.0 {
            outcome.errors = 1;
        }
        if r > 980.0 && r <= 1000.0 {
            confirms += 1;
            if confirms == 3 {
                outcome.errors = 1; // the second confirmation run fails
            }
        }
        outcome
    });
    check_invariants(&config(), &result);
    let trials = &result.trials;
    let failed = trials
        .iter()
        .position(|t| t.phase == Phase::Confirm && !t.verdict.passed())
        .unwrap();
    let edge = trials[failed].rate;
    assert_eq!(edge, 1000.0);
    let c = result.confirmed.unwrap();
    assert!((c.rate - edge * 0.95).abs() < 1e-9, "{} vs {edge}", c.rate);
    assert_eq!(result.lowest_failed, Some(edge));
    assert_eq!(result.stop, StopReason::Converged);
    assert_eq!(trials.len(), failed + 1 + 3);
}

#[test]
fn confirmation_gives_up_after_its_step_downs() {
    let cfg = SearchConfig {
        confirm_steps: 2,
        ..config()
    };
    let mut confirming = false;
    let result = run(cfg.clone(), |r| {
        let mut outcome = sim::perfect(r);
        if r > 1000.0 || confirming {
            outcome.errors = 1;
        }
        confirming |= r > 980.0 && r <= 1000.0;
        outcome
    });
    check_invariants(&cfg, &result);
    assert_eq!(result.stop, StopReason::Unconfirmed);
    assert_eq!(result.confirmed, None);
    let failed_confirms = result
        .trials
        .iter()
        .filter(|t| t.phase == Phase::Confirm)
        .count();
    assert_eq!(failed_confirms, 3); // the first attempt and two step-downs
}

#[test]
fn a_saturated_generator_is_reported_as_client_bound() {
    // The target could do 5000/s, the generator only 300/s: above it, the generator falls
    // short and says it was saturated.
    let cfg = config();
    let result = run(cfg.clone(), |r| {
        let mut outcome = sim::perfect(r);
        if r > 300.0 {
            outcome.achieved = 300.0;
            outcome.client_bound = true;
        }
        outcome
    });
    check_invariants(&cfg, &result);
    assert_eq!(result.stop, StopReason::ClientBound { rate: 400.0 });
    assert!(result.client_bound());
    assert_eq!(result.max_rate(), Some(200.0));
    assert_eq!(result.lowest_failed, None, "client-bound is not a failure");
    let text = FindMaxReport::new("http://t/".into(), "requests", cfg.criteria, result).to_string();
    assert!(text.contains("at least 200.0 requests/s"), "{text}");
    assert!(text.contains("client-bound"), "{text}");
}

#[test]
fn respects_the_rate_ceiling_and_floor() {
    let cfg = SearchConfig {
        max_rate: Some(300.0),
        ..config()
    };
    let result = run(cfg.clone(), sim::perfect);
    check_invariants(&cfg, &result);
    assert_eq!(result.stop, StopReason::Ceiling);
    assert_eq!(result.max_rate(), Some(300.0));
    let rates: Vec<f64> = result.trials.iter().map(|t| t.rate).collect();
    assert_eq!(rates, [100.0, 200.0, 300.0, 300.0, 300.0, 300.0]);
}

#[test]
fn an_invalid_trial_ends_the_search_with_its_reason() {
    let result = run(config(), |r| TrialOutcome {
        invalid: (r >= 400.0).then(|| "per-second series not flat".to_owned()),
        ..sim::perfect(r)
    });
    assert_eq!(
        result.stop,
        StopReason::Invalid {
            rate: 400.0,
            reason: "per-second series not flat".into()
        }
    );
    assert_eq!(result.max_rate(), Some(200.0));
}

#[test]
fn the_state_machine_can_be_stopped_and_ignores_stale_plans() {
    let mut search = Search::new(config());
    let first = search.next().unwrap();
    let again = search.next().unwrap();
    assert_eq!((first.rate(), again.rate()), (100.0, 100.0));
    assert!(search.record(first, sim::perfect(100.0)).passed());
    // The stale plan is listed but does not steer: the next rate is still 200.
    search.record(
        again,
        TrialOutcome {
            errors: 1,
            ..sim::perfect(100.0)
        },
    );
    let next = search.next().unwrap();
    assert_eq!((next.rate(), next.phase()), (200.0, Phase::Grow));
    search.stop(StopReason::Interrupted);
    assert!(search.next().is_none());
    let result = search.finish();
    assert_eq!(result.stop, StopReason::Interrupted);
    assert_eq!(result.trials.len(), 2);
    assert_eq!(result.best_passed, None, "a failure at 100/s was seen");
}

#[test]
fn a_trial_error_returns_the_partial_search() {
    let mut n = 0;
    let failed = search(config(), |r| {
        n += 1;
        if n == 3 {
            Err("connection refused")
        } else {
            Ok(sim::perfect(r))
        }
    })
    .unwrap_err();
    assert_eq!(failed.error, "connection refused");
    assert_eq!(failed.partial.stop, StopReason::Aborted);
    assert_eq!(failed.partial.trials.len(), 2);
}

#[test]
fn criteria_name_every_violation() {
    let criteria = Criteria {
        quantiles: vec![QuantileBound {
            label: "p99.9",
            quantile: 0.999,
            bound: Duration::from_millis(100),
        }],
        ..Criteria::default()
    };
    let ok = TrialOutcome {
        quantiles: vec![(0.999, Duration::from_millis(100))],
        ..sim::perfect(1000.0)
    };
    assert_eq!(criteria.judge(&ok), Verdict::Pass);
    let busy_but_fine = TrialOutcome {
        client_bound: true,
        ..ok.clone()
    };
    assert_eq!(criteria.judge(&busy_but_fine), Verdict::Pass);
    let bad = TrialOutcome {
        errors: 2,
        max_latency: 3 * S,
        quantiles: vec![(0.999, Duration::from_millis(250))],
        achieved: 900.0,
        ..ok.clone()
    };
    let verdict = criteria.judge(&bad);
    assert_eq!(
        verdict.to_string(),
        "FAIL: 2 errors; max 3000.0 ms > 2000.0 ms; p99.9 250.0 ms > 100.0 ms; \
         achieved 900.0/s of 1000.0/s"
    );
    let verdict = criteria.judge(&TrialOutcome {
        client_bound: true,
        ..bad
    });
    assert!(matches!(verdict, Verdict::ClientBound(ref v) if v.len() == 4));
    let unmeasured = TrialOutcome {
        quantiles: vec![],
        ..ok.clone()
    };
    assert_eq!(
        criteria.judge(&unmeasured),
        Verdict::Invalid("p99.9 was not measured".into())
    );
    let nan = TrialOutcome {
        achieved: f64::NAN,
        ..ok
    };
    assert!(matches!(criteria.judge(&nan), Verdict::Fail(_)));
}

#[test]
fn a_few_completions_missing_at_the_window_edges_are_not_a_shortfall() {
    // At 1/s over 10 s, two missing completions are edge effects; three are a shortfall.
    let slow = |completed: u64| TrialOutcome {
        achieved: completed as f64 / 10.0,
        completed,
        ..sim::perfect(1.0)
    };
    assert_eq!(Criteria::default().judge(&slow(8)), Verdict::Pass);
    assert!(matches!(
        Criteria::default().judge(&slow(7)),
        Verdict::Fail(_)
    ));
}

/// The SLO options as `tern bench` parses them (with a URL, so the real option set is used).
fn parse(extra: &[&str]) -> Result<SloArgs, clap::Error> {
    let mut argv = vec!["http://127.0.0.1/"];
    argv.extend_from_slice(extra);
    crate::BenchArgs::from_args(argv).map(|a| a.slo)
}

#[test]
fn options_parse_into_criteria_and_config() {
    let slo = parse(&[
        "--find-max",
        "--slo-max",
        "1.5s",
        "--slo-p99.9",
        "500ms",
        "--slo-p99",
        "250us",
        "--resolution",
        "50",
        "--start-rate",
        "2000",
        "--max-rate",
        "1000",
        "--confirm",
        "5",
    ])
    .unwrap();
    assert!(slo.find_max);
    let criteria = slo.criteria();
    assert_eq!(criteria.max_latency, Duration::from_millis(1500));
    let bounds: Vec<_> = criteria
        .quantiles
        .iter()
        .map(|q| (q.label, q.bound))
        .collect();
    assert_eq!(
        bounds,
        [
            ("p99", Duration::from_micros(250)),
            ("p99.9", Duration::from_millis(500))
        ]
    );
    let cfg = slo.config();
    assert_eq!(cfg.start_rate, 1000.0, "clamped to --max-rate");
    assert_eq!(cfg.resolution.width(10_000.0), 50.0);
    assert_eq!(cfg.confirm, 5);

    let defaults = parse(&[]).unwrap();
    assert!(!defaults.find_max);
    assert_eq!(defaults.config(), SearchConfig::default());

    for bad in [
        ["--slo-max", "2 parsecs"],
        ["--resolution", "0%"],
        ["--resolution", "-3"],
        ["--growth", "1"],
        ["--start-rate", "0"],
        ["--confirm", "0"],
        ["--trial-pause", "x"],
        ["--slo-min-achieved", "1.5"],
    ] {
        assert!(parse(&bad).is_err(), "{bad:?}");
    }
    // The search sets the rate itself.
    assert!(parse(&["--find-max", "--rate", "100"]).is_err());
}

/// `tern bench` mounts the options as `Option<BenchArgs>`; the flattened `SloArgs` must not
/// make clap lose track of whether they were given.
#[test]
fn options_still_flatten_as_an_option() {
    #[derive(clap::Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: Option<crate::BenchArgs>,
    }
    use clap::Parser as _;
    let parsed = Wrapper::try_parse_from(["x", "http://a/", "--find-max"]).unwrap();
    assert!(parsed.args.unwrap().slo.find_max);
    let parsed = Wrapper::try_parse_from(["x", "http://a/"]).unwrap();
    assert!(!parsed.args.unwrap().slo.find_max);
}

#[test]
fn durations_and_resolutions_parse() {
    assert_eq!(parse_duration("2s").unwrap(), 2 * S);
    assert_eq!(parse_duration("2").unwrap(), 2 * S);
    assert_eq!(parse_duration("0.5s").unwrap(), S / 2);
    assert_eq!(parse_duration("20ms").unwrap(), Duration::from_millis(20));
    assert_eq!(parse_duration("7µs").unwrap(), Duration::from_micros(7));
    assert!(parse_duration("-1s").is_err());
    assert!(parse_duration("inf").is_err());
    assert!(parse_duration("ms").is_err());
    let r = Resolution::parse("2%").unwrap();
    assert_eq!((r.width(1000.0), r.width(10.0)), (20.0, 0.2));
    assert!(Resolution::parse("100%").is_err());
    assert!(Resolution::parse("x").is_err());
}

#[test]
fn the_report_lists_trials_and_the_verdict_as_text_and_json() {
    let mut fluid = Fluid::new(1000.0, 5);
    let cfg = config();
    let result = run(cfg.clone(), |r| fluid.trial(r));
    let trials = result.trials.len();
    let c = result.confirmed.clone().unwrap();
    let report = FindMaxReport::new(
        "https://127.0.0.1:1/".into(),
        "connections",
        cfg.criteria,
        result,
    );
    let text = report.to_string();
    println!("{text}");
    assert_eq!(
        text.matches(" grow ").count()
            + text.matches(" bisect ").count()
            + text.matches(" confirm ").count(),
        trials,
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "maximum sustainable rate {:.1} connections/s",
            c.rate
        )),
        "{text}"
    );
    assert!(text.contains("median"), "{text}");
    let json = report.to_json_value();
    assert_eq!(json["unit"], "connections/s");
    assert_eq!(json["max_rate"], c.rate);
    assert_eq!(json["confirmation"]["median"], c.median);
    assert_eq!(json["confirmation"]["runs"].as_array().unwrap().len(), 3);
    assert_eq!(json["trials"].as_array().unwrap().len(), trials);
    assert_eq!(json["stop"]["reason"], "converged");
    assert_eq!(json["slo"]["max_latency_ms"], 2000.0);
    let last = &json["trials"][trials - 1];
    assert_eq!(last["phase"], "confirm");
    assert_eq!(last["verdict"], "pass");
    assert!(last["max_latency_ms"].as_f64().unwrap() <= 2000.0);
}

#[test]
fn medians_of_odd_and_even_runs() {
    let run_n = |n: u32| {
        let cfg = SearchConfig {
            confirm: n,
            max_rate: Some(100.0),
            ..config()
        };
        let mut i = 0.0;
        let result = run(cfg, |r| {
            i += 1.0;
            TrialOutcome {
                achieved: r - i,
                ..sim::perfect(r)
            }
        });
        result.confirmed.unwrap()
    };
    // Trial 1 is the search's; confirmations achieve 98, 97, 96(, 95).
    let odd = run_n(3);
    assert_eq!((odd.min, odd.median, odd.max), (96.0, 97.0, 98.0));
    let even = run_n(4);
    assert_eq!((even.min, even.median, even.max), (95.0, 96.5, 98.0));
}
