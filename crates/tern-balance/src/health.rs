//! The health state machine of one server: what active checks and passive observations do to
//! its UP/DOWN state, and when the next check is due.
//!
//! The data path runs the checks (it owns sockets and timers) and reports each result here; this
//! module only decides, so the same code runs under real time in the proxy and under a virtual
//! clock in the simulation. It follows HAProxy's model (`src/check.c`) exactly:
//!
//! - A health counter `h` runs from 0 to `rise + fall - 1`. The server is UP while `h >= rise`
//!   and DOWN while `h < rise`; at `rise + fall - 1` it is *fully healthy*, at 0 *fully down*.
//! - A **failed check** (when `h > 0`) decrements `h`; if that takes it below `rise`, `h` drops
//!   to 0 and an UP server goes DOWN. From full health that takes exactly `fall` consecutive
//!   failures (`rise + fall - 1 - fall = rise - 1`).
//! - A **passed check** (when not fully healthy) increments `h`; if that reaches `rise`, `h`
//!   jumps to `rise + fall - 1` and a DOWN server comes UP. From 0 that takes exactly `rise`
//!   consecutive successes.
//! - So progress towards the opposite state is never partial across a contrary result: one
//!   success among failures restores full health (the next `fall` failures are needed again),
//!   and one failure among successes of a DOWN server sends it back to 0.
//!
//! Passive observation (HAProxy's `observe` with `error-limit`) reports an [`OnError`] action
//! when the data path has seen too many errors in a row:
//!
//! - [`OnError::FastInterval`]: no change to the counter; the next check comes after
//!   `fast_interval`.
//! - [`OnError::FailCheck`]: exactly as one failed check.
//! - [`OnError::SuddenDeath`]: an UP server with more than one failure to go is left with one
//!   (`h = rise`); one already at its last is taken DOWN, since HAProxy applies it as "set
//!   `h` to `rise + 1` if higher, then fail one check".
//! - [`OnError::MarkDown`]: DOWN at once (`h = 0`).
//!
//! Every passive action also hurries the next check: after one, [`Health::next_delay`] is
//! `fast_interval` until the next check result (in transition it is `fast_interval` anyway).
//! Otherwise the delay is `interval` when fully healthy, `down_interval` when fully down, and
//! `fast_interval` in between (HAProxy's `inter`, `downinter`, `fastinter`; the caller fills the
//! last two with `interval` when they are not configured, as HAProxy does). A delay is never
//! below [`MIN_DELAY`], so a zero setting cannot make a checker spin.

use std::fmt;
use std::time::Duration;

/// The shortest delay [`Health::next_delay`] returns.
pub const MIN_DELAY: Duration = Duration::from_millis(1);

/// Check thresholds and intervals of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthSettings {
    /// Consecutive passed checks that bring a DOWN server UP (0 counts as 1).
    pub rise: u32,
    /// Consecutive failed checks that take an UP server DOWN (0 counts as 1).
    pub fall: u32,
    /// Delay between checks of a fully healthy server.
    pub interval: Duration,
    /// Delay while the server is in transition, or after a passive error.
    pub fast_interval: Duration,
    /// Delay between checks of a fully down server.
    pub down_interval: Duration,
}

impl HealthSettings {
    /// HAProxy's defaults around `interval`: rise 2, fall 3, the same delay in every state.
    pub fn new(interval: Duration) -> Self {
        Self {
            rise: 2,
            fall: 3,
            interval,
            fast_interval: interval,
            down_interval: interval,
        }
    }
}

impl Default for HealthSettings {
    /// HAProxy's defaults: `inter 2s rise 2 fall 3`.
    fn default() -> Self {
        Self::new(Duration::from_secs(2))
    }
}

/// What the data path does when a server's consecutive errors reach the limit (`on-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Check again soon (`fastinter`).
    FastInterval,
    /// Count as one failed check (`fail-check`, HAProxy's default).
    FailCheck,
    /// Leave the server one failed check away from DOWN (`sudden-death`).
    SuddenDeath,
    /// Mark the server DOWN at once (`mark-down`).
    MarkDown,
}

/// The state a server starts in (HAProxy's `init-state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitState {
    /// UP and fully healthy: `fall` failures to go DOWN ([`Health::new`]).
    FullyUp,
    /// UP but one failure from DOWN (HAProxy's default).
    Up,
    /// DOWN but one success from UP.
    Down,
    /// DOWN with no progress: `rise` successes to come UP.
    FullyDown,
}

/// What changed the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// An active check result.
    Check,
    /// A passive action.
    Passive(OnError),
}

/// A change of state, with what a log line needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The new state: UP (true) or DOWN.
    pub up: bool,
    /// The result that caused it.
    pub cause: Cause,
    /// Consecutive results of this direction that led here, this one included (passive
    /// failures count as failed checks): "DOWN after 3 failed checks".
    pub streak: u32,
}

/// The health of one server.
#[derive(Debug, Clone)]
pub struct Health {
    settings: HealthSettings,
    /// The counter, `0..=full`.
    health: u32,
    /// `rise + fall - 1`.
    full: u32,
    up: bool,
    /// The next check is due after `fast_interval` (a passive action was reported).
    hurry: bool,
    /// Consecutive results: whether they passed, and how many.
    streak: (bool, u32),
}

impl Health {
    /// A server that starts UP and fully healthy.
    pub fn new(settings: HealthSettings) -> Self {
        Self::with_state(settings, InitState::FullyUp)
    }

    /// A server that starts in `init`.
    pub fn with_state(mut settings: HealthSettings, init: InitState) -> Self {
        settings.rise = settings.rise.max(1);
        settings.fall = settings.fall.max(1);
        let full = settings.rise.saturating_add(settings.fall - 1);
        let health = match init {
            InitState::FullyUp => full,
            InitState::Up => settings.rise,
            InitState::Down => settings.rise - 1,
            InitState::FullyDown => 0,
        };
        Self {
            settings,
            health,
            full,
            up: health >= settings.rise,
            hurry: false,
            streak: (true, 0),
        }
    }

    /// The settings (with `rise` and `fall` at least 1).
    pub fn settings(&self) -> &HealthSettings {
        &self.settings
    }

    /// Whether the server is UP.
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// The counter and its maximum, `(h, rise + fall - 1)`: UP while `h >= rise`.
    pub fn counter(&self) -> (u32, u32) {
        (self.health, self.full)
    }

    /// One active check result.
    pub fn on_check(&mut self, passed: bool) -> Option<Transition> {
        self.hurry = false;
        self.record(passed);
        if passed {
            self.pass(Cause::Check)
        } else {
            self.fail(Cause::Check)
        }
    }

    /// The passive error limit was reached and the configured action is `action`.
    pub fn on_passive(&mut self, action: OnError) -> Option<Transition> {
        let cause = Cause::Passive(action);
        let transition = match action {
            OnError::FastInterval => None,
            OnError::FailCheck => {
                self.record(false);
                self.fail(cause)
            }
            OnError::SuddenDeath => {
                self.record(false);
                if self.health > self.settings.rise {
                    self.health = self.settings.rise + 1;
                }
                self.fail(cause)
            }
            OnError::MarkDown => {
                self.record(false);
                self.health = self.settings.rise;
                self.fail(cause)
            }
        };
        self.hurry = true;
        transition
    }

    /// The delay until the next check (at least [`MIN_DELAY`]).
    pub fn next_delay(&self) -> Duration {
        let s = &self.settings;
        let delay = if self.hurry {
            s.fast_interval
        } else if self.health == self.full {
            s.interval
        } else if self.health == 0 {
            s.down_interval
        } else {
            s.fast_interval
        };
        delay.max(MIN_DELAY)
    }

    fn record(&mut self, passed: bool) {
        self.streak = match self.streak {
            (p, n) if p == passed => (p, n.saturating_add(1)),
            _ => (passed, 1),
        };
    }

    fn pass(&mut self, cause: Cause) -> Option<Transition> {
        if self.health < self.full {
            self.health += 1;
            if self.health >= self.settings.rise {
                self.health = self.full;
            }
        }
        self.settle(cause)
    }

    fn fail(&mut self, cause: Cause) -> Option<Transition> {
        if self.health > 0 {
            self.health -= 1;
            if self.health < self.settings.rise {
                self.health = 0;
            }
        }
        self.settle(cause)
    }

    /// Brings the state in line with the counter, reporting a change.
    fn settle(&mut self, cause: Cause) -> Option<Transition> {
        let up = self.health >= self.settings.rise;
        if up == self.up {
            return None;
        }
        self.up = up;
        Some(Transition {
            up,
            cause,
            streak: self.streak.1,
        })
    }
}

impl fmt::Display for Health {
    /// HAProxy's status: `UP`, `UP 2/3` (two more failures to go DOWN, of `fall`), `DOWN`,
    /// `DOWN 1/2` (one success of the `rise` needed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.settings;
        match (self.up, self.health) {
            (true, h) if h == self.full => f.write_str("UP"),
            (true, h) => write!(f, "UP {}/{}", h - s.rise + 1, s.fall),
            (false, 0) => f.write_str("DOWN"),
            (false, h) => write!(f, "DOWN {}/{}", h, s.rise),
        }
    }
}

/// The offset of the first check of server `index` of `count`, so that their checks are spread
/// evenly over one `interval` instead of all firing at start-up (`index` is taken modulo
/// `count`; zero when `count` is 0).
pub fn spread(index: usize, count: usize, interval: Duration) -> Duration {
    if count == 0 {
        return Duration::ZERO;
    }
    let (total, k, n) = (interval.as_nanos(), (index % count) as u128, count as u128);
    // total × k / n without overflow: k < n < 2^64, so (total mod n) × k < 2^128.
    let nanos = total / n * k + total % n * k / n;
    let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
    Duration::new(secs, (nanos % 1_000_000_000) as u32)
}

#[cfg(test)]
mod tests;
