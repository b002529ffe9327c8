//! Counters of one `[[resolvers]]` section, written by its resolution tasks and read by the
//! stats snapshot (`show stat`, Prometheus, JSON). Process-wide per generation, like the other
//! counters; a reload starts them again and `StatsSnapshot::absorb` adds the old ones.

use std::sync::atomic::{AtomicU64, Ordering};

/// The counters of one resolvers section.
#[derive(Debug, Default)]
pub(crate) struct ResolverCounters {
    pub name: String,
    /// Queries sent (tries included).
    pub sent: AtomicU64,
    /// Resolutions that ended with a NOERROR answer.
    pub valid: AtomicU64,
    /// Resolutions answered NXDOMAIN.
    pub nx: AtomicU64,
    /// Resolutions with no answer after every try.
    pub timeouts: AtomicU64,
    /// Resolutions answered REFUSED.
    pub refused: AtomicU64,
    /// Resolutions answered with another error code (SERVFAIL, ...).
    pub other: AtomicU64,
    /// Datagrams refused: not a DNS message, or not a response to the question asked.
    pub invalid: AtomicU64,
    /// Servers whose address changed, or that went out or came back, because of DNS.
    pub changes: AtomicU64,
}

impl ResolverCounters {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            ..Self::default()
        }
    }

    pub(crate) fn snapshot(&self) -> ResolverSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ResolverSnapshot {
            name: self.name.clone(),
            sent: get(&self.sent),
            valid: get(&self.valid),
            nx: get(&self.nx),
            timeouts: get(&self.timeouts),
            refused: get(&self.refused),
            other: get(&self.other),
            invalid: get(&self.invalid),
            changes: get(&self.changes),
        }
    }
}

/// Adds one to a counter.
pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// The counters of one resolvers section at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolverSnapshot {
    pub name: String,
    pub sent: u64,
    pub valid: u64,
    pub nx: u64,
    pub timeouts: u64,
    pub refused: u64,
    pub other: u64,
    pub invalid: u64,
    pub changes: u64,
}

impl ResolverSnapshot {
    /// `name=value` pairs, for the log line printed at exit and the other views.
    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("sent", self.sent),
            ("valid", self.valid),
            ("nx", self.nx),
            ("timeouts", self.timeouts),
            ("refused", self.refused),
            ("other", self.other),
            ("invalid", self.invalid),
            ("changes", self.changes),
        ]
    }

    /// Adds `other`'s counts (an older generation's section of the same name).
    pub fn absorb(&mut self, old: &ResolverSnapshot) {
        self.sent += old.sent;
        self.valid += old.valid;
        self.nx += old.nx;
        self.timeouts += old.timeouts;
        self.refused += old.refused;
        self.other += old.other;
        self.invalid += old.invalid;
        self.changes += old.changes;
    }
}
