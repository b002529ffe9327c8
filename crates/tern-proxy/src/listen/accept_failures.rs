//! Reporting failed `accept`s without flooding the log.
//!
//! When the process runs out of file descriptors (or memory), every `accept` fails until
//! connections close, and the accept loop retries every 50 ms: one line per failure would be
//! twenty lines a second per listener and worker, hiding everything else. [`Failures`] logs
//! the first failure of a run with what it means for clients and what to do, then a summary
//! every [`REPEAT`] while the failures go on, and one line when an `accept` succeeds again.

use std::io;
use std::time::{Duration, Instant};

use tracing::warn;

/// How often a run of failures is summed up while it lasts.
pub(crate) const REPEAT: Duration = Duration::from_secs(10);

/// A listener's run of failed accepts, if one is going on.
#[derive(Debug, Default)]
pub(crate) struct Failures {
    run: Option<Run>,
}

#[derive(Debug)]
struct Run {
    started: Instant,
    reported: Instant,
    /// Failures since the run started.
    count: u64,
    /// Failures since the last line.
    unreported: u64,
    /// When an accept last succeeded in this run. Near the limit, accepts alternate between
    /// success and failure as connections close and open: such failures continue the run
    /// (summed up), until a whole [`REPEAT`] passes without one.
    recovered: Option<Instant>,
    /// Whether the recovery was logged (once per run).
    said_recovered: bool,
}

/// What a log line says about a run (also what the tests check).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Report {
    /// The first failure of a run.
    First,
    /// The run goes on: `failures` since the last line.
    Ongoing { failures: u64 },
    /// An accept succeeded after `failures` failures over `lasted`.
    Over { failures: u64, lasted: Duration },
}

impl Failures {
    /// Notes a failed accept at `now`; logs it when a line is due.
    pub(crate) fn failed(&mut self, frontend: &str, e: &io::Error, now: Instant) {
        match self.note_failure(now) {
            Some(Report::First) => warn!(
                frontend,
                error = %e,
                "accept failed: {}; retrying every 50 ms, repeats summed up every {}s",
                meaning(e),
                REPEAT.as_secs()
            ),
            Some(Report::Ongoing { failures }) => warn!(
                frontend,
                error = %e,
                failures,
                "accept still failing: {}",
                meaning(e)
            ),
            _ => {}
        }
    }

    /// Whether a run of failures is going on (an accept then ends it).
    pub(crate) fn active(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.recovered.is_none())
    }

    /// Notes a successful accept at `now`; logs the end of a run of failures.
    pub(crate) fn accepted(&mut self, frontend: &str, now: Instant) {
        if let Some(Report::Over { failures, lasted }) = self.note_success(now) {
            let secs = lasted.as_secs_f64();
            warn!(
                frontend,
                failures,
                "accepting connections again after {failures} failed accepts over {secs:.1}s"
            );
        }
    }

    /// The bookkeeping of [`Failures::failed`]: which line is due, if any.
    pub(crate) fn note_failure(&mut self, now: Instant) -> Option<Report> {
        let fresh = self.run.as_ref().is_none_or(|r| {
            r.recovered
                .is_some_and(|at| now.duration_since(at) >= REPEAT)
        });
        if fresh {
            self.run = Some(Run {
                started: now,
                reported: now,
                count: 1,
                unreported: 0,
                recovered: None,
                said_recovered: false,
            });
            return Some(Report::First);
        }
        let run = self.run.as_mut()?;
        run.recovered = None;
        run.count += 1;
        run.unreported += 1;
        if now.duration_since(run.reported) < REPEAT {
            return None;
        }
        run.reported = now;
        let failures = std::mem::take(&mut run.unreported);
        Some(Report::Ongoing { failures })
    }

    /// The bookkeeping of [`Failures::accepted`]: the recovery's line, once per run.
    pub(crate) fn note_success(&mut self, now: Instant) -> Option<Report> {
        let run = self.run.as_mut()?;
        if run.recovered.is_some() {
            return None;
        }
        run.recovered = Some(now);
        if std::mem::replace(&mut run.said_recovered, true) {
            return None;
        }
        Some(Report::Over {
            failures: run.count,
            lasted: now.duration_since(run.started),
        })
    }
}

/// What a failed accept means for clients, and what the operator can do.
fn meaning(e: &io::Error) -> &'static str {
    // EMFILE, ENFILE (the process's or the system's descriptor limit); ENOBUFS, ENOMEM.
    match e.raw_os_error() {
        Some(24 | 23) => {
            "out of file descriptors: new connections wait in the kernel's listen backlog until \
             connections close (raise LimitNOFILE / ulimit -n, or lower maxconn)"
        }
        Some(105 | 12) => "out of memory: new connections wait in the kernel's listen backlog",
        _ => "new connections wait in the kernel's listen backlog",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_run_is_reported_first_then_every_repeat_then_at_its_end() {
        let mut f = Failures::default();
        let t0 = Instant::now();
        assert_eq!(f.note_failure(t0), Some(Report::First));
        // Twenty a second for nearly the whole period: nothing more.
        for i in 1..199 {
            assert_eq!(f.note_failure(t0 + ms(50 * i)), None);
        }
        assert_eq!(
            f.note_failure(t0 + REPEAT),
            Some(Report::Ongoing { failures: 199 })
        );
        assert_eq!(f.note_failure(t0 + REPEAT + ms(50)), None);
        assert!(f.active());
        let over = f.note_success(t0 + REPEAT * 2);
        assert_eq!(
            over,
            Some(Report::Over {
                failures: 201,
                lasted: REPEAT * 2
            })
        );
        assert!(!f.active());
        // A new run, a whole period later, starts with a first line again.
        assert_eq!(f.note_failure(t0 + REPEAT * 4), Some(Report::First));
    }

    #[test]
    fn failing_and_succeeding_in_turn_near_the_limit_is_one_run() {
        let mut f = Failures::default();
        let t0 = Instant::now();
        assert_eq!(f.note_failure(t0), Some(Report::First));
        assert!(f.note_success(t0 + ms(50)).is_some());
        for i in 1..100 {
            assert_eq!(f.note_failure(t0 + ms(100 * i)), None);
            assert_eq!(f.note_success(t0 + ms(100 * i + 50)), None);
        }
    }

    #[test]
    fn accepts_without_failures_say_nothing() {
        let mut f = Failures::default();
        assert!(!f.active());
        assert_eq!(f.note_success(Instant::now()), None);
    }

    #[test]
    fn descriptor_exhaustion_is_named() {
        let e = io::Error::from_raw_os_error(24);
        assert!(meaning(&e).contains("file descriptors"));
        assert!(meaning(&io::Error::from_raw_os_error(23)).contains("file descriptors"));
        assert!(meaning(&io::Error::from_raw_os_error(12)).contains("memory"));
    }
}
