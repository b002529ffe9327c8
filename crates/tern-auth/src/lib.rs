//! HTTP basic authentication against userlists (`[[userlist]]`): the check behind
//! `http_auth(L)`, `http_auth_group(L)` and the control API's `userlist`.
//!
//! A password check is slow by design: bcrypt at cost 10 takes ~50 ms of CPU, SHA-512 crypt
//! at its default 5000 rounds ~2 ms. An event loop must not run one, so an [`Authenticator`]
//!
//! 1. answers from a cache of successful checks first ([`cache`]): the key is HMAC-SHA-256 of
//!    (userlist, user, password) under a random key made at start, so a hit costs one HMAC
//!    and one lookup (about a microsecond), a wrong password can never hit (it has another
//!    key), and the cache holds no password nor anything that can be attacked offline without
//!    the process's key. The cache is bounded (two generations of [`cache::GENERATION`]
//!    entries each) and lives as long as the configuration's generation: a reload that
//!    changes a password starts empty.
//! 2. runs a miss on tokio's blocking pool (`spawn_blocking`), at most [`Limits::checks`]
//!    at once over all workers; up to [`Limits::waiting`] more wait for a slot, and beyond
//!    that a check fails at once (counted in `overloaded`). A flood of guessed passwords thus
//!    costs at most `checks` CPUs and never delays requests that carry no credentials or
//!    cached ones.
//!
//! The crates compare hashes in constant time (sha-crypt's `ctutils`, bcrypt's `subtle`);
//! plain-text `insecure_password`s are compared with aws-lc's constant-time compare.
//! A user name that no user has fails at once: as in HAProxy, the time of an answer tells
//! whether a user exists.

#![forbid(unsafe_code)]

pub mod basic;
pub mod cache;
mod verify;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use tern_config::{Password, Userlist};
use tokio::sync::Semaphore;

pub use basic::Credentials;
use cache::Cache;

/// How many checks run at once, and how many may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Checks running at once (threads of the blocking pool busy with them).
    pub checks: usize,
    /// Checks waiting for a slot; more fail at once.
    pub waiting: usize,
}

impl Limits {
    /// Half the CPUs (at least one) check at once, and 64 more wait: enough for every
    /// legitimate first login of a burst, while guesses leave half the machine alone.
    pub fn for_machine() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Self {
            checks: (cpus / 2).max(1),
            waiting: 64,
        }
    }
}

/// Counters of one authenticator (summed by the stats readers).
#[derive(Debug, Default)]
pub struct AuthStats {
    /// Credentials accepted (from the cache or a check).
    pub accepted: AtomicU64,
    /// Credentials refused: unknown user, wrong password, or a check that could not run.
    pub failed: AtomicU64,
    /// Accepted from the cache, without a check.
    pub cache_hits: AtomicU64,
    /// Refused because too many checks were running and waiting.
    pub overloaded: AtomicU64,
}

/// A snapshot of [`AuthStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuthCounts {
    pub accepted: u64,
    pub failed: u64,
    pub cache_hits: u64,
    pub overloaded: u64,
}

impl AuthCounts {
    /// Adds `other`'s counts to these (a retired generation's, after a reload).
    pub fn add(&mut self, other: &Self) {
        self.accepted += other.accepted;
        self.failed += other.failed;
        self.cache_hits += other.cache_hits;
        self.overloaded += other.overloaded;
    }
}

impl AuthStats {
    pub fn counts(&self) -> AuthCounts {
        AuthCounts {
            accepted: self.accepted.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            overloaded: self.overloaded.load(Ordering::Relaxed),
        }
    }
}

/// Checks credentials against the userlists of one configuration.
#[derive(Debug)]
pub struct Authenticator {
    lists: Arc<[Userlist]>,
    cache: Cache,
    gate: Arc<Semaphore>,
    waiting: AtomicUsize,
    limits: Limits,
    stats: Arc<AuthStats>,
}

impl Authenticator {
    /// An authenticator for `lists` (a configuration's userlists, in its order).
    pub fn new(lists: &[Userlist], limits: Limits) -> Self {
        Self {
            lists: lists.into(),
            cache: Cache::new(),
            gate: Arc::new(Semaphore::new(limits.checks.max(1))),
            waiting: AtomicUsize::new(0),
            limits,
            stats: Arc::default(),
        }
    }

    /// The counters (shared with whoever reports them).
    pub fn stats(&self) -> &Arc<AuthStats> {
        &self.stats
    }

    /// The userlists checked against.
    pub fn lists(&self) -> &[Userlist] {
        &self.lists
    }

    /// The index of the user of userlist `list` whose credentials these are, once checked;
    /// `None` when they are not a user's (or `list` is not a userlist).
    pub async fn check(&self, list: usize, creds: &Credentials) -> Option<usize> {
        let accepted = self.check_uncounted(list, creds).await;
        let counter = if accepted.is_some() {
            &self.stats.accepted
        } else {
            &self.stats.failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
        accepted
    }

    async fn check_uncounted(&self, list: usize, creds: &Credentials) -> Option<usize> {
        let (index, user) = self
            .lists
            .get(list)?
            .users
            .iter()
            .enumerate()
            .find(|(_, u)| u.name.as_bytes() == creds.user())?;
        let hash = match &user.password {
            Password::Insecure(plain) => {
                return verify::same(plain.as_bytes(), creds.password()).then_some(index)
            }
            Password::Crypt { scheme, hash } => (*scheme, hash),
        };
        let key = self.cache.key(list, creds);
        if self.cache.get(&key) == Some(index) {
            self.stats.cache_hits.fetch_add(1, Ordering::Relaxed);
            return Some(index);
        }
        if !self.slow_check(hash.0, hash.1, creds.password()).await {
            return None;
        }
        self.cache.put(key, index);
        Some(index)
    }

    /// The crypt(3) check, on the blocking pool under the gate.
    async fn slow_check(
        &self,
        scheme: tern_config::CryptScheme,
        hash: &str,
        password: &[u8],
    ) -> bool {
        let Some(queued) = Queued::enter(&self.waiting, self.limits.waiting) else {
            self.stats.overloaded.fetch_add(1, Ordering::Relaxed);
            return false;
        };
        // The semaphore is never closed, so acquiring fails only if it were.
        let Ok(_slot) = self.gate.clone().acquire_owned().await else {
            return false;
        };
        drop(queued);
        let (hash, password) = (hash.to_owned(), password.to_vec());
        match tokio::task::spawn_blocking(move || verify::crypt(scheme, &hash, &password)).await {
            Ok(ok) => ok,
            Err(e) => {
                tracing::warn!("a password check failed to run: {e}");
                false
            }
        }
    }
}

/// A place among the checks waiting for a slot, given back when dropped.
struct Queued<'a>(&'a AtomicUsize);

impl<'a> Queued<'a> {
    fn enter(waiting: &'a AtomicUsize, max: usize) -> Option<Self> {
        let taken = waiting.fetch_add(1, Ordering::AcqRel);
        let place = Queued(waiting);
        (taken < max).then_some(place)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
