//! What one trial measured ([`TrialOutcome`]) and whether it met the SLO ([`Criteria`] →
//! [`Verdict`]).
//!
//! The verdict separates the target failing from the measurement failing: a trial whose
//! generator ran out of CPU, or that the adapter flags invalid, is not evidence against the
//! target, so it gets its own verdict instead of counting as a failure.

use std::fmt;
use std::time::Duration;

/// Completions that may be missing from the window without counting as a shortfall: the
/// requests cut off at its two edges. It matters only at low rates (10/s over 10 s: 2%).
const EDGE_SLACK: f64 = 2.0;

/// The measurements of one trial at a fixed offered rate.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialOutcome {
    /// The rate the generator was asked to offer, per second.
    pub offered: f64,
    /// Successful completions per second of the measured window.
    pub achieved: f64,
    /// Successful completions in the window.
    pub completed: u64,
    /// Errors in the window: failed connects, handshakes, timeouts, I/O, protocol, 4xx/5xx.
    pub errors: u64,
    /// The slowest completed request.
    pub max_latency: Duration,
    /// The latency at each quantile the criteria ask for, as (quantile, latency).
    pub quantiles: Vec<(f64, Duration)>,
    /// Share of its usable CPUs the generator used over the window (1.0 = all), if known.
    pub client_cpu: Option<f64>,
    /// The generator itself was saturated (its CPU, or it could not keep to its schedule).
    pub client_bound: bool,
    /// Why the trial cannot be judged at all, if so.
    pub invalid: Option<String>,
    /// Length of the measured window.
    pub window: Duration,
    /// Wall time the trial took, warm-up included (counts against the search's time budget).
    pub elapsed: Duration,
}

impl TrialOutcome {
    /// The measured latency at `quantile`, if it was measured.
    pub fn quantile(&self, quantile: f64) -> Option<Duration> {
        self.quantiles
            .iter()
            .find(|(q, _)| (q - quantile).abs() < 1e-12)
            .map(|&(_, d)| d)
    }
}

/// A bound on one latency percentile.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantileBound {
    /// How reports name it, e.g. "p99.9".
    pub label: &'static str,
    /// The quantile, e.g. 0.999.
    pub quantile: f64,
    /// The highest acceptable latency at that quantile.
    pub bound: Duration,
}

/// When a trial passes: no errors, no request over `max_latency`, every percentile within its
/// bound, and at least `min_achieved` of the offered rate completed.
#[derive(Debug, Clone, PartialEq)]
pub struct Criteria {
    /// No request may be slower (seed 000: 2 s).
    pub max_latency: Duration,
    /// Optional percentile bounds.
    pub quantiles: Vec<QuantileBound>,
    /// Smallest acceptable achieved/offered ratio.
    pub min_achieved: f64,
}

impl Default for Criteria {
    fn default() -> Self {
        Self {
            max_latency: Duration::from_secs(2),
            quantiles: Vec::new(),
            min_achieved: 0.95,
        }
    }
}

impl Criteria {
    /// Judges one trial.
    pub fn judge(&self, outcome: &TrialOutcome) -> Verdict {
        if let Some(why) = &outcome.invalid {
            return Verdict::Invalid(why.clone());
        }
        let mut violations = Vec::new();
        if outcome.errors > 0 {
            violations.push(Violation::Errors(outcome.errors));
        }
        if outcome.max_latency > self.max_latency {
            violations.push(Violation::Slowest {
                measured: outcome.max_latency,
                bound: self.max_latency,
            });
        }
        for q in &self.quantiles {
            match outcome.quantile(q.quantile) {
                Some(measured) if measured > q.bound => violations.push(Violation::Quantile {
                    label: q.label,
                    measured,
                    bound: q.bound,
                }),
                Some(_) => {}
                None if outcome.completed == 0 => {} // the shortfall below says it all
                None => return Verdict::Invalid(format!("{} was not measured", q.label)),
            }
        }
        // NaN (a broken measurement) counts as a shortfall.
        let missing =
            (outcome.offered * self.min_achieved - outcome.achieved) * outcome.window.as_secs_f64();
        if outcome.achieved.is_nan() || missing > EDGE_SLACK {
            violations.push(Violation::Shortfall {
                achieved: outcome.achieved,
                offered: outcome.offered,
            });
        }
        match (violations.is_empty(), outcome.client_bound) {
            (true, _) => Verdict::Pass,
            (false, true) => Verdict::ClientBound(violations),
            (false, false) => Verdict::Fail(violations),
        }
    }
}

/// The judgement of one trial.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The target met the SLO at this rate. (A pass stays a pass even if the generator was
    /// busy: the target did hold the rate, and a busy client only adds latency.)
    Pass,
    /// The target missed the SLO at this rate.
    Fail(Vec<Violation>),
    /// The SLO was missed while the generator was saturated: the target may not be at fault.
    ClientBound(Vec<Violation>),
    /// The trial cannot be judged.
    Invalid(String),
}

impl Verdict {
    /// Whether the trial passed.
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    /// Whether the trial says nothing about the target (client-bound or invalid).
    pub fn inconclusive(&self) -> bool {
        matches!(self, Verdict::ClientBound(_) | Verdict::Invalid(_))
    }

    /// A short word for tables: "pass", "FAIL", "client-bound", "invalid".
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail(_) => "FAIL",
            Verdict::ClientBound(_) => "client-bound",
            Verdict::Invalid(_) => "invalid",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())?;
        match self {
            Verdict::Pass => Ok(()),
            Verdict::Fail(v) | Verdict::ClientBound(v) => {
                for (i, violation) in v.iter().enumerate() {
                    let sep = if i == 0 { ": " } else { "; " };
                    write!(f, "{sep}{violation}")?;
                }
                Ok(())
            }
            Verdict::Invalid(why) => write!(f, ": {why}"),
        }
    }
}

/// One way a trial missed the SLO.
#[derive(Debug, Clone, PartialEq)]
pub enum Violation {
    /// Requests or connections failed.
    Errors(u64),
    /// The slowest request exceeded the bound.
    Slowest {
        /// Its latency.
        measured: Duration,
        /// The bound.
        bound: Duration,
    },
    /// A percentile exceeded its bound.
    Quantile {
        /// e.g. "p99.9".
        label: &'static str,
        /// The measured latency.
        measured: Duration,
        /// The bound.
        bound: Duration,
    },
    /// Fewer completions than offered: the target (or the network) fell behind.
    Shortfall {
        /// Completions per second.
        achieved: f64,
        /// Offered per second.
        offered: f64,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Errors(n) => write!(f, "{n} errors"),
            Violation::Slowest { measured, bound } => {
                write!(f, "max {} > {}", ms(*measured), ms(*bound))
            }
            Violation::Quantile {
                label,
                measured,
                bound,
            } => write!(f, "{label} {} > {}", ms(*measured), ms(*bound)),
            Violation::Shortfall { achieved, offered } => {
                write!(f, "achieved {achieved:.1}/s of {offered:.1}/s")
            }
        }
    }
}

/// A latency in milliseconds for reports.
pub(crate) fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}
