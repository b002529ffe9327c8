//! Reference models the simulation checks the core against, written independently of it.

use std::collections::BTreeMap;

use tern_balance::{Nanos, OnError, ServerId, Ticket};

/// Health as HAProxy documents it, by consecutive results only: UP goes DOWN after `fall`
/// failures in a row, DOWN comes UP after `rise` successes in a row.
#[derive(Debug, Clone)]
pub struct Streak {
    pub rise: u32,
    pub fall: u32,
    pub up: bool,
    pub fails: u32,
    pub passes: u32,
}

impl Streak {
    pub fn new(rise: u32, fall: u32) -> Self {
        Self {
            rise,
            fall,
            up: true,
            fails: 0,
            passes: 0,
        }
    }

    /// One result; whether the state changed.
    pub fn result(&mut self, passed: bool) -> bool {
        let (count, limit) = match (self.up, passed) {
            (true, true) => {
                self.fails = 0;
                return false;
            }
            (false, false) => {
                self.passes = 0;
                return false;
            }
            (true, false) => (&mut self.fails, self.fall),
            (false, true) => (&mut self.passes, self.rise),
        };
        *count += 1;
        if *count < limit {
            return false;
        }
        self.up = !self.up;
        self.fails = 0;
        self.passes = 0;
        true
    }

    /// A passive action of the kinds the simulation uses.
    pub fn passive(&mut self, action: OnError) -> bool {
        match action {
            OnError::FailCheck => self.result(false),
            _ => false,
        }
    }

    /// Whether the server is at an end of the counter (fully healthy or fully down).
    pub fn stable(&self) -> bool {
        (self.up && self.fails == 0) || (!self.up && self.passes == 0)
    }
}

/// A queued request as the simulation sees it.
#[derive(Debug, Clone, Copy)]
pub struct Waiter {
    pub want: Option<ServerId>,
    pub deadline: Nanos,
    pub ticket: Ticket,
}

/// The queue as a plain ordered map (request ids grow with arrival), with counts for the
/// capacity invariant.
#[derive(Debug, Default)]
pub struct Waiting {
    pub by_id: BTreeMap<u64, Waiter>,
    pub unpinned: usize,
    pub pinned: BTreeMap<ServerId, usize>,
}

impl Waiting {
    pub fn insert(&mut self, id: u64, w: Waiter) {
        match w.want {
            None => self.unpinned += 1,
            Some(s) => *self.pinned.entry(s).or_default() += 1,
        }
        self.by_id.insert(id, w);
    }

    pub fn remove(&mut self, id: u64) -> Option<Waiter> {
        let w = self.by_id.remove(&id)?;
        match w.want {
            None => self.unpinned -= 1,
            Some(s) => {
                if let Some(n) = self.pinned.get_mut(&s) {
                    *n -= 1;
                    if *n == 0 {
                        self.pinned.remove(&s);
                    }
                }
            }
        }
        Some(w)
    }

    /// The oldest waiter `server` may serve.
    pub fn oldest_for(&self, server: ServerId) -> Option<u64> {
        self.by_id
            .iter()
            .find(|(_, w)| w.want.is_none_or(|s| s == server))
            .map(|(&id, _)| id)
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn clear(&mut self) -> Vec<u64> {
        self.unpinned = 0;
        self.pinned.clear();
        std::mem::take(&mut self.by_id).into_keys().collect()
    }
}

/// A slow-start ramp in progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ramp {
    /// Bumped on every UP and DOWN, so a step of an older ramp is ignored.
    pub generation: u64,
    pub since: Nanos,
    pub last: u32,
    pub done: bool,
}
