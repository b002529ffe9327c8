//! Slow start: a server that just came UP gets its share back gradually.
//!
//! A server returning from a failure often starts cold (empty caches, JIT warm-up, connection
//! pools to refill), and its full share at once can knock it straight back down. As in HAProxy's
//! `slowstart`, its effective weight grows linearly from (almost) nothing to its configured
//! weight over a window. The core does not track time: the data path remembers when the server
//! came up, and every [`slow_start_step`] pushes [`slow_start_weight`] into the balancer with
//! `set_weight`, until the window has passed.
//!
//! The ramp is `ceil(weight × elapsed / window)`, at least 1: linear, never decreasing while
//! `elapsed` grows, never 0 (weight 0 would drain the server, and with every server ramping
//! from 0 at once the backend would look empty), and exactly `weight` from the end of the window.

use std::time::Duration;

/// The shortest step [`slow_start_step`] returns.
pub const MIN_STEP: Duration = Duration::from_millis(10);

/// The effective weight of a server of configured `weight`, `elapsed` after it came UP, with a
/// slow-start `window`: from 1 up to `weight`, reached at `elapsed >= window` (at once for a
/// zero window). A weight of 0 stays 0.
pub fn slow_start_weight(weight: u32, elapsed: Duration, window: Duration) -> u32 {
    if weight == 0 || elapsed >= window {
        return weight;
    }
    let (elapsed, window) = (elapsed.as_nanos(), window.as_nanos());
    // elapsed < window, so the quotient is below weight and fits.
    let ramped = (u128::from(weight) * elapsed).div_ceil(window);
    u32::try_from(ramped).unwrap_or(weight).clamp(1, weight)
}

/// How often the data path should recompute a ramping weight: a twentieth of the window (steps
/// of 5% of the weight), at least [`MIN_STEP`] so that short windows do not cost a timer per
/// millisecond.
pub fn slow_start_step(window: Duration) -> Duration {
    (window / 20).max(MIN_STEP)
}

#[cfg(test)]
mod tests;
