//! When an HTTP/2 connection with no stream open gives its memory back, and when it is closed.
//!
//! An idle connection held 33 kB of resident memory, 22.6 kB more than an idle HTTP/1.1 one
//! over TLS, and HAProxy 2.6 holds 20.8 kB (BENCHMARKS.md, "Memory per idle HTTP/2
//! connection"). Most of the difference was the `h2` crate's read and write buffers (24 KiB
//! allocated, about 9 kB of it touched) and its stream tables (3.5 kB), kept for the
//! connection's life. `h2::server::Connection::release_idle_memory` (tern's patch,
//! vendor/h2/PATCHES.md) frees them; they are allocated again by the next bytes.
//!
//! HAProxy frees its buffers as soon as they are empty; here that would be an allocation and a
//! free of 24 KiB per request on a connection that serves one stream at a time. So the release
//! waits until the connection has had no stream open for [`RELEASE_AFTER`], on the timer that
//! already closes it after `keep_alive`: the timer fires every `RELEASE_AFTER` while streams
//! come and go, once to release, and once to close.

use std::time::Duration;

use tokio::time::Instant;

/// How long a connection has had no stream open before its buffers are released.
pub(super) const RELEASE_AFTER: Duration = Duration::from_secs(1);

/// A connection's idle time, checked each time its timer fires.
#[derive(Debug)]
pub(super) struct IdleClock {
    keep_alive: Duration,
    /// No stream was seen open since then.
    since: Instant,
    /// The buffers were released since `since`.
    released: bool,
}

/// What the timer's firing asks of the connection.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Tick {
    /// Set the timer to fire again then.
    Rearm(Instant),
    /// Release the connection's buffers, and set the timer to fire again then.
    Release(Instant),
    /// Idle for `keep_alive`: close the connection.
    Close,
}

impl IdleClock {
    /// A clock for a connection idle since `now`, and when its timer first fires.
    pub(super) fn start(keep_alive: Duration, now: Instant) -> (Self, Instant) {
        let clock = IdleClock {
            keep_alive,
            since: now,
            released: false,
        };
        (clock, now + RELEASE_AFTER.min(keep_alive))
    }

    /// The timer fired at `now`; `busy`: a stream was open since it was set.
    pub(super) fn tick(&mut self, now: Instant, busy: bool) -> Tick {
        if busy {
            self.since = now;
            self.released = false;
            return Tick::Rearm(now + RELEASE_AFTER.min(self.keep_alive));
        }
        let close_at = self.since + self.keep_alive;
        if now >= close_at {
            Tick::Close
        } else if !std::mem::replace(&mut self.released, true) {
            Tick::Release(close_at)
        } else {
            Tick::Rearm(close_at)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn an_idle_connection_releases_after_a_second_and_closes_at_keep_alive() {
        let t0 = Instant::now();
        let (mut clock, first) = IdleClock::start(10 * SEC, t0);
        assert_eq!(first, t0 + RELEASE_AFTER);
        assert_eq!(clock.tick(first, false), Tick::Release(t0 + 10 * SEC));
        assert_eq!(clock.tick(t0 + 10 * SEC, false), Tick::Close);
    }

    #[test]
    fn a_stream_restarts_the_idle_time() {
        let t0 = Instant::now();
        let (mut clock, first) = IdleClock::start(10 * SEC, t0);
        assert_eq!(clock.tick(first, true), Tick::Rearm(first + RELEASE_AFTER));
        let second = first + RELEASE_AFTER;
        assert_eq!(clock.tick(second, false), Tick::Release(first + 10 * SEC));
        // Released once per idle period; a stream starts a new one.
        assert_eq!(
            clock.tick(second + SEC, false),
            Tick::Rearm(first + 10 * SEC)
        );
        assert_eq!(
            clock.tick(second + 2 * SEC, true),
            Tick::Rearm(second + 3 * SEC)
        );
        assert_eq!(
            clock.tick(second + 3 * SEC, false),
            Tick::Release(second + 12 * SEC)
        );
    }

    #[test]
    fn a_keep_alive_shorter_than_the_release_delay_closes_without_releasing() {
        let t0 = Instant::now();
        let (mut clock, first) = IdleClock::start(SEC / 2, t0);
        assert_eq!(first, t0 + SEC / 2);
        assert_eq!(clock.tick(first, false), Tick::Close);
    }
}
