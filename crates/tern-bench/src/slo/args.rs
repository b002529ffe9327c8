//! The `--find-max` options, flattened into `tern bench`'s own, and their conversion into a
//! [`SearchConfig`].
//!
//! Every option has a default that reproduces seed 000's method (2 s bound, zero errors) with
//! the benchmarking rules' three confirmation runs, so `--find-max` alone is a complete request.

use std::time::Duration;

use super::outcome::{Criteria, QuantileBound};
use super::search::SearchConfig;

/// Options of the SLO search (`--find-max` and the flags that tune it).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "SLO search (--find-max)")]
pub struct SloArgs {
    /// Search for the highest rate (connections/s with --requests-per-conn 1, else requests/s)
    /// sustained with zero errors and no request over --slo-max, and confirm it. Each trial is
    /// an open-loop run (--rate set by the search) with the other options as given.
    #[arg(long, conflicts_with = "rate")]
    pub find_max: bool,

    /// SLO: no request may take longer than this ("2s", "500ms", or seconds).
    #[arg(long, value_name = "DUR", default_value = "2s", value_parser = parse_duration)]
    pub slo_max: Duration,

    /// SLO: the 99th percentile latency must stay at or under this.
    #[arg(long = "slo-p99", value_name = "DUR", value_parser = parse_duration)]
    pub slo_p99: Option<Duration>,

    /// SLO: the 99.9th percentile latency must stay at or under this.
    #[arg(long = "slo-p99.9", value_name = "DUR", value_parser = parse_duration)]
    pub slo_p999: Option<Duration>,

    /// SLO: a trial fails when it completes less than this share of the offered rate.
    #[arg(long, value_name = "SHARE", default_value_t = 0.95, value_parser = parse_share)]
    pub slo_min_achieved: f64,

    /// First rate to try, per second.
    #[arg(long, value_name = "RATE", default_value_t = 100.0, value_parser = parse_rate)]
    pub start_rate: f64,

    /// Factor between successive rates until the first failure (or, going down, the first pass).
    #[arg(long, value_name = "FACTOR", default_value_t = 2.0, value_parser = parse_growth)]
    pub growth: f64,

    /// Never try a rate below this; if it fails too, the target sustains nothing.
    #[arg(long, value_name = "RATE", default_value_t = 1.0, value_parser = parse_rate)]
    pub min_rate: f64,

    /// Never try a rate above this (e.g. what the network or the client can offer).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub max_rate: Option<f64>,

    /// Stop bisecting when the passing and failing rates are this close: "2%" of the passing
    /// rate, or an absolute rate per second ("50").
    #[arg(long, value_name = "RES", default_value = "2%", value_parser = Resolution::parse)]
    pub resolution: Resolution,

    /// Repeat runs at the best rate; all must pass. The median and min–max are reported.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub confirm: u32,

    /// How many times a failed confirmation may step the rate down and confirm again.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub confirm_steps: u32,

    /// Most trials (search and confirmation together) before giving up.
    #[arg(long, value_name = "N", default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub max_trials: u32,

    /// Wall-time budget of the whole search; no trial starts that would likely overrun it.
    #[arg(long, value_name = "DUR", default_value = "1800s", value_parser = parse_duration)]
    pub max_search_time: Duration,

    /// Pause between trials, so a target that was just overloaded drains its queues (and the
    /// client's closed sockets leave) before the next rate is judged.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = parse_duration)]
    pub trial_pause: Duration,
}

impl SloArgs {
    /// The pass/fail criteria these options describe.
    pub fn criteria(&self) -> Criteria {
        let quantiles = [("p99", 0.99, self.slo_p99), ("p99.9", 0.999, self.slo_p999)]
            .into_iter()
            .filter_map(|(label, quantile, bound)| {
                bound.map(|bound| QuantileBound {
                    label,
                    quantile,
                    bound,
                })
            })
            .collect();
        Criteria {
            max_latency: self.slo_max,
            quantiles,
            min_achieved: self.slo_min_achieved,
        }
    }

    /// The search these options describe. Inconsistent rate limits are reconciled rather than
    /// refused: the start rate is clamped into `[min_rate, max_rate]`.
    pub fn config(&self) -> SearchConfig {
        let max_rate = self.max_rate.map(|m| m.max(self.min_rate));
        let mut start_rate = self.start_rate.max(self.min_rate);
        if let Some(max) = max_rate {
            start_rate = start_rate.min(max);
        }
        SearchConfig {
            start_rate,
            growth: self.growth,
            min_rate: self.min_rate,
            max_rate,
            resolution: self.resolution,
            confirm: self.confirm,
            confirm_steps: self.confirm_steps,
            max_trials: self.max_trials,
            max_time: self.max_search_time,
            criteria: self.criteria(),
        }
    }
}

/// How close the passing and failing rates must be before bisection stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolution {
    /// Share of the passing rate (0.02 = 2%).
    pub relative: f64,
    /// Absolute rate per second.
    pub absolute: f64,
}

impl Resolution {
    /// Parses "2%" (relative) or "50" (per second).
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let bad = || format!("{s:?}: expected a percentage like 2% or a rate per second like 50");
        let (number, relative) = match s.strip_suffix('%') {
            Some(n) => (n, true),
            None => (s, false),
        };
        let value: f64 = number.trim().parse().map_err(|_| bad())?;
        if !value.is_finite() || value <= 0.0 || relative && value >= 100.0 {
            return Err(bad());
        }
        Ok(if relative {
            Self {
                relative: value / 100.0,
                absolute: 0.0,
            }
        } else {
            Self {
                relative: 0.0,
                absolute: value,
            }
        })
    }

    /// The bracket width at which bisection stops, around a passing rate `lo`.
    pub fn width(&self, lo: f64) -> f64 {
        (self.relative * lo).max(self.absolute)
    }
}

/// Parses "2s", "1.5s", "500ms", "250us"/"250µs", or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (number, unit) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a duration like 2s, 500ms or 250us"))?;
    let secs = value * unit;
    if !secs.is_finite() || !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("{s:?}: the duration must be between 0 and 86400 s"));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 1e9 => Ok(r),
        _ => Err(format!("{s:?}: expected a rate per second above 0")),
    }
}

fn parse_growth(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(g) if g.is_finite() && g > 1.0 && g <= 100.0 => Ok(g),
        _ => Err(format!("{s:?}: expected a factor above 1, like 2")),
    }
}

fn parse_share(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s:?}: expected a share between 0 and 1, like 0.95"
        )),
    }
}
