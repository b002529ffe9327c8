//! SLO search (`tern bench --find-max`): the highest rate a target sustains for a whole
//! measured window with zero errors and no request slower than a bound.
//!
//! Why a search and not one run: a fixed-concurrency run reports what the target did under that
//! load, not how much load it can take. Seed 000 defines capacity as "the maximum connection rate
//! sustained for the whole run with no request over 2 seconds", and the benchmarking rules ask
//! for that rate confirmed by repeat runs with its median and spread. Finding it by hand means
//! dozens of runs; this module does it the same way every time.
//!
//! How it searches ([`search`]): trials at a fixed arrival rate, starting at `--start-rate` and
//! multiplying by `--growth` until one fails (or dividing, if the start rate already fails);
//! then bisection between the highest passing and the lowest failing rate until they are within
//! `--resolution`; then `--confirm` fresh runs at the best rate. A failed confirmation means the
//! rate sits on a noisy edge: it becomes a failing rate and the search steps down and confirms
//! again, at most `--confirm-steps` times. A rate at which any trial failed is never reported.
//! `--max-trials` and `--max-search-time` bound the whole search so it always ends.
//!
//! What "fails" means is [`Criteria`]: any error, the slowest request over `--slo-max`, a
//! percentile over its `--slo-p99`/`--slo-p99.9` bound, or fewer completions than offered (the
//! target fell behind). A trial in which the load generator itself ran out of CPU cannot say
//! anything about the target: the search stops there and reports the best rate as a lower bound
//! ("client-bound") instead of as the target's maximum.
//!
//! The search is pure logic with no clock and no I/O (a state machine fed with
//! [`TrialOutcome`]s), so it is tested against simulated servers with seeded noise; [`find_max`]
//! is the thin adapter that runs each trial with the real generator.

mod args;
mod find;
mod outcome;
mod result;
mod search;

pub use args::{parse_duration, Resolution, SloArgs};
pub use find::{find_max, run, FindMaxReport};
pub use outcome::{Criteria, QuantileBound, TrialOutcome, Verdict, Violation};
pub use result::{Confirmation, SearchFailed, SloResult, StopReason, Trial};
pub use search::{search, Phase, Planned, Search, SearchConfig};

#[cfg(test)]
mod tests;
