//! The search itself: a state machine that proposes the next rate ([`Search::next`]) and
//! learns from each trial's outcome ([`Search::record`]).
//!
//! A state machine rather than a loop that owns the generator, so the caller keeps control
//! between trials (Ctrl-C, errors, progress lines) and the logic runs unchanged against a
//! simulated target in tests. It has no clock: the time budget is the sum of the trials'
//! reported `elapsed`.
//!
//! Invariants the tests check: every trial the search proposes lies strictly between the
//! highest passing and the lowest failing rate seen so far; the reported rate passed every
//! trial run at it and lies below every rate at which a trial failed; the search ends within
//! `max_trials` trials and does not start a trial expected to overrun `max_time`.

use std::time::Duration;

use super::args::Resolution;
use super::outcome::{Criteria, TrialOutcome, Verdict};
use super::result::{Confirmation, SearchFailed, SloResult, StopReason, Trial};

/// After a failed confirmation the rate drops by at least this share. The failure says the
/// rate sits where noise decides; stepping down by the (smaller) resolution alone would spend
/// the budget re-testing the same edge.
const CONFIRM_STEP: f64 = 0.05;

/// How to search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    /// First rate tried.
    pub start_rate: f64,
    /// Factor between rates while no bracket is known (> 1).
    pub growth: f64,
    /// Lowest rate ever tried.
    pub min_rate: f64,
    /// Highest rate ever tried.
    pub max_rate: Option<f64>,
    /// When bisection stops.
    pub resolution: Resolution,
    /// Confirmation runs at the best rate (all must pass).
    pub confirm: u32,
    /// Step-downs allowed after failed confirmations.
    pub confirm_steps: u32,
    /// Trial budget, confirmations included.
    pub max_trials: u32,
    /// Time budget (sum of the trials' `elapsed`).
    pub max_time: Duration,
    /// What passing means.
    pub criteria: Criteria,
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            start_rate: 100.0,
            growth: 2.0,
            min_rate: 1.0,
            max_rate: None,
            resolution: Resolution {
                relative: 0.02,
                absolute: 0.0,
            },
            confirm: 3,
            confirm_steps: 3,
            max_trials: 40,
            max_time: Duration::from_secs(1800),
            criteria: Criteria::default(),
        }
    }
}

/// Which part of the search a trial belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Multiplying the rate until the first failure.
    Grow,
    /// Dividing the rate until the first pass (the start rate failed).
    Descend,
    /// Halving the bracket between the best pass and the lowest failure.
    Bisect,
    /// A repeat run at the best rate.
    Confirm,
}

impl Phase {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Grow => "grow",
            Phase::Descend => "descend",
            Phase::Bisect => "bisect",
            Phase::Confirm => "confirm",
        }
    }
}

/// A trial the search wants run: pass it back to [`Search::record`] with its outcome.
#[derive(Debug)]
pub struct Planned {
    rate: f64,
    phase: Phase,
    seq: usize,
}

impl Planned {
    /// The rate to offer, per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Why this trial is run.
    pub fn phase(&self) -> Phase {
        self.phase
    }
}

/// Runs a whole search with `trial` as the target: `trial(rate)` runs one trial at `rate`.
pub fn search<E, F>(config: SearchConfig, mut trial: F) -> Result<SloResult, SearchFailed<E>>
where
    F: FnMut(f64) -> Result<TrialOutcome, E>,
{
    let mut search = Search::new(config);
    while let Some(plan) = search.next() {
        match trial(plan.rate()) {
            Ok(outcome) => {
                search.record(plan, outcome);
            }
            Err(error) => {
                search.stop(StopReason::Aborted);
                let partial = Box::new(search.finish());
                return Err(SearchFailed { error, partial });
            }
        }
    }
    Ok(search.finish())
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    /// Growing, descending or bisecting towards a bracket narrower than the resolution.
    Bracket,
    /// Repeat runs at `rate`; `achieved` holds the passing ones so far.
    Confirm {
        rate: f64,
        achieved: Vec<f64>,
    },
    Done(StopReason),
}

enum Step {
    Try(f64, Phase),
    End(StopReason),
}

/// The search as a state machine: `while let Some(p) = s.next() { s.record(p, run(p.rate())) }`.
#[derive(Debug, Clone)]
pub struct Search {
    config: SearchConfig,
    /// Highest passing rate of the bracket phase, then the rate being confirmed.
    lo: Option<f64>,
    /// Lowest failing rate.
    hi: Option<f64>,
    state: State,
    /// Why the bracket phase ended, reported once confirmation succeeds.
    ended_by: StopReason,
    steps_taken: u32,
    confirmed: Option<Confirmation>,
    trials: Vec<Trial>,
    spent: Duration,
}

impl Search {
    /// A search that has run nothing yet.
    pub fn new(config: SearchConfig) -> Self {
        Self {
            config,
            lo: None,
            hi: None,
            state: State::Bracket,
            ended_by: StopReason::Converged,
            steps_taken: 0,
            confirmed: None,
            trials: Vec::new(),
            spent: Duration::ZERO,
        }
    }

    /// The next trial to run, or None when the search is over. Calling it again before
    /// [`record`](Self::record) plans the same trial.
    #[allow(clippy::should_implement_trait)] // not an iterator: it needs `record` in between
    pub fn next(&mut self) -> Option<Planned> {
        loop {
            match &self.state {
                State::Done(_) => return None,
                State::Confirm { rate, .. } => {
                    let rate = *rate;
                    return self.plan(rate, Phase::Confirm);
                }
                State::Bracket => match self.bracket_step() {
                    Step::Try(rate, phase) => return self.plan(rate, phase),
                    Step::End(reason) => self.end_bracket(reason),
                },
            }
        }
    }

    /// Records the outcome of a planned trial and returns its verdict. A plan that is stale
    /// (another trial was recorded since it was made) is kept in the trial list but does not
    /// steer the search.
    pub fn record(&mut self, plan: Planned, outcome: TrialOutcome) -> Verdict {
        let verdict = self.config.criteria.judge(&outcome);
        self.spent += outcome.elapsed;
        let achieved = outcome.achieved;
        let current = plan.seq == self.trials.len();
        self.trials.push(Trial {
            rate: plan.rate,
            phase: plan.phase,
            outcome,
            verdict: verdict.clone(),
        });
        if current {
            match &self.state {
                State::Bracket => self.learn_bracket(plan.rate, &verdict),
                State::Confirm { .. } => self.learn_confirm(achieved, &verdict),
                State::Done(_) => {}
            }
        }
        verdict
    }

    /// Ends the search now (e.g. on Ctrl-C); later calls to `next` return None.
    pub fn stop(&mut self, reason: StopReason) {
        if !matches!(self.state, State::Done(_)) {
            self.state = State::Done(reason);
        }
    }

    /// The trials so far.
    pub fn trials(&self) -> &[Trial] {
        &self.trials
    }

    /// The result. A search that has not ended counts as interrupted.
    pub fn finish(self) -> SloResult {
        let stop = match self.state {
            State::Done(reason) => reason,
            _ => StopReason::Interrupted,
        };
        let lowest_failed = self
            .trials
            .iter()
            .filter(|t| matches!(t.verdict, Verdict::Fail(_)))
            .map(|t| t.rate)
            .min_by(f64::total_cmp);
        let best_passed = self
            .trials
            .iter()
            .filter(|t| t.verdict.passed() && lowest_failed.is_none_or(|f| t.rate < f))
            .map(|t| t.rate)
            .max_by(f64::total_cmp);
        SloResult {
            confirmed: self.confirmed,
            best_passed,
            lowest_failed,
            stop,
            trials: self.trials,
            spent: self.spent,
        }
    }

    fn bracket_step(&self) -> Step {
        let c = &self.config;
        match (self.lo, self.hi) {
            (None, None) => Step::Try(c.start_rate, Phase::Grow),
            (Some(lo), None) => match c.max_rate {
                Some(max) if lo >= max => Step::End(StopReason::Ceiling),
                max => Step::Try(
                    (lo * c.growth).min(max.unwrap_or(f64::INFINITY)),
                    Phase::Grow,
                ),
            },
            (None, Some(hi)) => {
                let next = hi / c.growth;
                if next >= c.min_rate {
                    Step::Try(next, Phase::Descend)
                } else if hi > c.min_rate {
                    Step::Try(c.min_rate, Phase::Descend)
                } else {
                    Step::End(StopReason::NothingPassed)
                }
            }
            (Some(lo), Some(hi)) if hi - lo <= c.resolution.width(lo) => {
                Step::End(StopReason::Converged)
            }
            (Some(lo), Some(hi)) => Step::Try((lo + hi) / 2.0, Phase::Bisect),
        }
    }

    /// Leaves the bracket phase: confirm the best rate if there is one, else stop.
    fn end_bracket(&mut self, reason: StopReason) {
        self.state = match self.lo {
            Some(rate) => {
                self.ended_by = reason;
                State::Confirm {
                    rate,
                    achieved: Vec::new(),
                }
            }
            None => State::Done(reason),
        };
    }

    /// Applies the budgets to a trial the search wants to run.
    fn plan(&mut self, rate: f64, phase: Phase) -> Option<Planned> {
        let c = &self.config;
        let seq = self.trials.len();
        let next_cost = self
            .trials
            .last()
            .map_or(Duration::ZERO, |t| t.outcome.elapsed);
        let reason = if seq >= c.max_trials as usize {
            StopReason::TrialBudget
        } else if self.spent >= c.max_time || self.spent + next_cost > c.max_time {
            StopReason::TimeBudget
        } else {
            return Some(Planned { rate, phase, seq });
        };
        self.state = State::Done(reason);
        None
    }

    fn learn_bracket(&mut self, rate: f64, verdict: &Verdict) {
        match verdict {
            Verdict::Pass => self.lo = Some(self.lo.map_or(rate, |lo| lo.max(rate))),
            Verdict::Fail(_) => self.hi = Some(self.hi.map_or(rate, |hi| hi.min(rate))),
            Verdict::ClientBound(_) => self.end_bracket(StopReason::ClientBound { rate }),
            Verdict::Invalid(why) => self.end_bracket(StopReason::Invalid {
                rate,
                reason: why.clone(),
            }),
        }
    }

    fn learn_confirm(&mut self, achieved_now: f64, verdict: &Verdict) {
        let State::Confirm { rate, achieved } = &mut self.state else {
            return;
        };
        let rate = *rate;
        match verdict {
            Verdict::Pass => {
                achieved.push(achieved_now);
                if achieved.len() >= self.config.confirm as usize {
                    self.confirmed = Some(Confirmation::new(rate, std::mem::take(achieved)));
                    self.state = State::Done(self.ended_by.clone());
                }
            }
            Verdict::Fail(_) => {
                self.hi = Some(self.hi.map_or(rate, |hi| hi.min(rate)));
                self.steps_taken += 1;
                let c = &self.config;
                let next = rate - c.resolution.width(rate).max(rate * CONFIRM_STEP);
                self.state = if self.steps_taken > c.confirm_steps || next < c.min_rate {
                    State::Done(StopReason::Unconfirmed)
                } else {
                    self.lo = Some(next);
                    State::Confirm {
                        rate: next,
                        achieved: Vec::new(),
                    }
                };
            }
            Verdict::ClientBound(_) => {
                self.state = State::Done(StopReason::ClientBound { rate });
            }
            Verdict::Invalid(why) => {
                self.state = State::Done(StopReason::Invalid {
                    rate,
                    reason: why.clone(),
                });
            }
        }
    }
}
