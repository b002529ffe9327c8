//! Backend protection: per-server `maxconn`, the `queue` in front of it, `retries`,
//! `redispatch` and `slowstart`.
//!
//! A queue only fills when every usable server is at its `maxconn`, so a `queue` table in a
//! backend where no server has `maxconn` would never be used; it is reported rather than
//! accepted, because the operator evidently expected a limit that is not there. Unlike
//! HAProxy's `maxqueue 0` (no limit), `max = 0` means "never queue": an absent `max` already
//! says "no limit", and a way to answer 503 at once is worth having.

#[cfg(test)]
mod tests;

use std::time::Duration;

use super::Checker;
use crate::locate::KeyPath;
use crate::model::QueueSettings;
use crate::raw::RawBackend;

/// Most requests in flight on one server, and most waiting in one backend's queue.
const MAX_LIMIT: i64 = 1_000_000;

impl Checker<'_> {
    /// A server's `maxconn`.
    pub(super) fn server_maxconn(&mut self, value: Option<i64>, path: &KeyPath) -> Option<u32> {
        self.opt_int_in(path, value, 1..=MAX_LIMIT)
            .map(|m| m as u32)
    }

    /// `queue`; its timeout defaults to the backend's connect timeout, like HAProxy's
    /// `timeout queue`.
    pub(super) fn queue(
        &mut self,
        raw: &RawBackend,
        connect: Duration,
        path: &KeyPath,
    ) -> QueueSettings {
        let Some(queue) = &raw.queue else {
            return QueueSettings {
                max: None,
                timeout: connect,
            };
        };
        let limited = raw
            .servers
            .iter()
            .flatten()
            .any(|server| server.maxconn.is_some());
        if !limited {
            self.issue(
                &path.key("queue"),
                "queue only applies when servers have `maxconn`; set `maxconn` on the servers \
                 or remove `queue`",
            );
        }
        QueueSettings {
            max: self
                .opt_int_in(&path.key("queue").key("max"), queue.max, 0..=MAX_LIMIT)
                .map(|m| m as usize),
            timeout: self.duration(
                &path.key("queue").key("timeout"),
                queue.timeout.as_ref(),
                connect,
            ),
        }
    }

    /// `retries`: connection attempts after the first failure.
    pub(super) fn retries(&mut self, value: Option<i64>, path: &KeyPath) -> u32 {
        self.int_in(&path.key("retries"), value, 0..=100, 3) as u32
    }
}
