//! What a search produced: every [`Trial`], the confirmed rate with its spread
//! ([`Confirmation`]), and why it stopped ([`StopReason`]).

use std::fmt;
use std::time::Duration;

use super::outcome::{TrialOutcome, Verdict};
use super::search::Phase;

/// One trial as run and judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// The rate the search asked for.
    pub rate: f64,
    /// Why it was run.
    pub phase: Phase,
    /// What it measured.
    pub outcome: TrialOutcome,
    /// How it was judged.
    pub verdict: Verdict,
}

/// Why the search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum StopReason {
    /// The bracket narrowed to the resolution (and the best rate was confirmed, if
    /// [`SloResult::confirmed`] is set).
    Converged,
    /// The target passed at `max_rate`, the highest rate allowed.
    Ceiling,
    /// The generator saturated at `rate`: the best rate is only a lower bound of the target's.
    ClientBound {
        /// The offered rate of the client-bound trial.
        rate: f64,
    },
    /// A trial could not be judged.
    Invalid {
        /// The offered rate of that trial.
        rate: f64,
        /// Why.
        reason: String,
    },
    /// Every rate down to `min_rate` failed.
    NothingPassed,
    /// Confirmation kept failing after the allowed step-downs.
    Unconfirmed,
    /// `max_trials` trials were run.
    TrialBudget,
    /// The next trial would have overrun `max_time`.
    TimeBudget,
    /// The caller stopped the search (Ctrl-C).
    Interrupted,
    /// A trial could not be run at all (see [`SearchFailed`]).
    Aborted,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Converged => f.write_str("converged to the resolution"),
            StopReason::Ceiling => f.write_str("passed at --max-rate, the highest rate allowed"),
            StopReason::ClientBound { rate } => write!(
                f,
                "the load generator saturated at {rate:.1}/s (client-bound): \
                 the target's maximum is at least the best rate, not known beyond it"
            ),
            StopReason::Invalid { rate, reason } => {
                write!(f, "the trial at {rate:.1}/s could not be judged: {reason}")
            }
            StopReason::NothingPassed => f.write_str("every rate failed, down to --min-rate"),
            StopReason::Unconfirmed => f.write_str(
                "confirmation runs kept failing after the allowed step-downs (--confirm-steps)",
            ),
            StopReason::TrialBudget => f.write_str("trial budget used up (--max-trials)"),
            StopReason::TimeBudget => f.write_str("time budget used up (--max-search-time)"),
            StopReason::Interrupted => f.write_str("interrupted"),
            StopReason::Aborted => f.write_str("a trial could not be run"),
        }
    }
}

/// The confirmation runs at the reported rate (all passed).
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    /// The offered rate that was confirmed.
    pub rate: f64,
    /// The achieved rate of each run, in order.
    pub achieved: Vec<f64>,
    /// Median achieved rate.
    pub median: f64,
    /// Lowest achieved rate.
    pub min: f64,
    /// Highest achieved rate.
    pub max: f64,
}

impl Confirmation {
    pub(super) fn new(rate: f64, achieved: Vec<f64>) -> Self {
        let mut sorted = achieved.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Self {
            rate,
            median,
            min: sorted.first().copied().unwrap_or(f64::NAN),
            max: sorted.last().copied().unwrap_or(f64::NAN),
            achieved,
        }
    }
}

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct SloResult {
    /// The maximum sustainable rate, confirmed by repeat runs (None if not confirmed).
    pub confirmed: Option<Confirmation>,
    /// The highest rate that passed below every failing rate (confirmed or not).
    pub best_passed: Option<f64>,
    /// The lowest rate at which a trial failed.
    pub lowest_failed: Option<f64>,
    /// Why the search ended.
    pub stop: StopReason,
    /// Every trial, in order.
    pub trials: Vec<Trial>,
    /// Sum of the trials' elapsed time.
    pub spent: Duration,
}

impl SloResult {
    /// The confirmed maximum rate, if any.
    pub fn max_rate(&self) -> Option<f64> {
        self.confirmed.as_ref().map(|c| c.rate)
    }

    /// Whether the generator, not the target, limited the search.
    pub fn client_bound(&self) -> bool {
        matches!(self.stop, StopReason::ClientBound { .. })
    }
}

/// A trial could not be run; the search so far is in `partial`.
#[derive(Debug)]
pub struct SearchFailed<E> {
    /// The trial's error.
    pub error: E,
    /// The trials before it ([`StopReason::Aborted`]), boxed to keep the `Result` small.
    pub partial: Box<SloResult>,
}
