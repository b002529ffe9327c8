//! Profiling's clock: the CPU's time-stamp counter through `quanta`, read in ~11 ns where
//! `Instant::now()` (the vDSO's `CLOCK_MONOTONIC`) takes ~25 ns and the thread CPU clock, a
//! system call, ~250 ns (`clock_costs` in `tests.rs` measures them). With four to five reads
//! per request, the difference is about 1% of a small keep-alive request's CPU.
//!
//! `quanta` calibrates the counter against the monotonic clock once per process, which can
//! take up to 200 ms: [`prepare`] does it when profiling is switched on (at start-up or from
//! the runtime API), never on a worker's poll. Where the counter is not invariant (some
//! virtual machines), `quanta` reads the monotonic clock instead.

use std::sync::OnceLock;

static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();

/// Calibrates the clock if that was not done yet.
pub(super) fn prepare() {
    CLOCK.get_or_init(quanta::Clock::new);
}

/// The clock, once [`prepare`] ran.
#[inline]
pub(super) fn get() -> Option<&'static quanta::Clock> {
    CLOCK.get()
}
