//! Lazily allocated timers for the data path.
//!
//! Most reads and writes complete without ever waiting, so a timer is allocated only the first
//! time an operation goes pending, then re-armed in place (`Sleep::reset`) for the life of the
//! connection or body.

use std::future::Future;
use std::pin::Pin;
use std::task::Context;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// A timer slot that fires at a deadline.
#[derive(Debug, Default)]
pub(crate) struct Deadline {
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Deadline {
    /// Polls the timer set for `deadline` (re-arming it if the deadline moved); true once passed.
    pub(crate) fn expired(&mut self, deadline: Instant, cx: &mut Context<'_>) -> bool {
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.deadline() != deadline {
            sleep.as_mut().reset(deadline);
        }
        sleep.as_mut().poll(cx).is_ready()
    }
}

/// An inactivity timer: runs from the first pending poll after the last progress.
#[derive(Debug, Default)]
pub(crate) struct Inactivity {
    deadline: Deadline,
    since: Option<Instant>,
}

impl Inactivity {
    /// Polls the timer, starting it if no wait is in progress; true once `timeout` has passed
    /// without progress.
    pub(crate) fn expired(&mut self, timeout: Duration, cx: &mut Context<'_>) -> bool {
        let since = *self.since.get_or_insert_with(Instant::now);
        self.deadline.expired(since + timeout, cx)
    }

    /// Records progress: the next wait starts a new period.
    pub(crate) fn progress(&mut self) {
        self.since = None;
    }
}
