//! Timers for the data path, armed only when an operation has to wait.
//!
//! Most reads and writes complete without waiting, so the clock is read and a timer set only
//! when one goes pending. Each side of a connection has one [`Timer`], allocated the first time
//! it is needed and then re-armed in place for every later wait (`Sleep::reset`; tokio moves a
//! later deadline without touching its wheel until the old one comes due). An [`Idle`] records
//! when the current wait began, so a timeout measures inactivity: any progress starts it over.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// A reusable timer slot.
#[derive(Debug, Default)]
pub(crate) struct Timer {
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Timer {
    /// Polls the timer for `deadline` (arming or moving it first); ready once it has passed.
    pub(crate) fn poll_at(&mut self, deadline: Instant, cx: &mut Context<'_>) -> Poll<()> {
        let sleep = match &mut self.sleep {
            Some(sleep) => {
                if sleep.deadline() != deadline {
                    sleep.as_mut().reset(deadline);
                }
                sleep
            }
            empty => empty.insert(Box::pin(tokio::time::sleep_until(deadline))),
        };
        sleep.as_mut().poll(cx)
    }
}

/// When the current wait on one side began, if one is in progress.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Idle {
    since: Option<Instant>,
}

impl Idle {
    /// Progress was made: the next wait starts a new period.
    pub(crate) fn progress(&mut self) {
        self.since = None;
    }

    /// The deadline of the wait in progress (started now if none is).
    pub(crate) fn deadline(&mut self, timeout: Duration) -> Instant {
        *self.since.get_or_insert_with(Instant::now) + timeout
    }
}
