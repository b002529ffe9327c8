//! The cache of successful checks: a keyed hash of the credentials → the user's index.
//!
//! Two generations of at most [`GENERATION`] entries: entries go to the young one; when it is
//! full the old one is dropped and the young one becomes old. A hit in the old generation is
//! copied to the young one, so credentials in use stay while unused ones age out, with
//! memory bounded by `2 × GENERATION` keys (about 350 KiB) and no per-entry bookkeeping.

use std::collections::HashMap;
use std::sync::Mutex;

use aws_lc_rs::hmac;
use aws_lc_rs::rand::{SecureRandom, SystemRandom};

use crate::basic::Credentials;

/// Entries of one generation.
pub const GENERATION: usize = 4096;

/// The key of one (userlist, user, password): HMAC-SHA-256 under the cache's own key.
pub type Key = [u8; 32];

#[derive(Debug, Default)]
struct Generations {
    young: HashMap<Key, usize>,
    old: HashMap<Key, usize>,
}

/// Successful checks, keyed by [`Cache::key`].
#[derive(Debug)]
pub struct Cache {
    mac: hmac::Key,
    entries: Mutex<Generations>,
}

impl Default for Cache {
    fn default() -> Self {
        Self::new()
    }
}

impl Cache {
    /// An empty cache with a fresh random key.
    pub fn new() -> Self {
        let mut secret = [0u8; 32];
        // The system's random source does not fail on Linux once booted; were it to, a key
        // of zeroes still keeps wrong passwords out (they hash to other keys).
        let _ = SystemRandom::new().fill(&mut secret);
        Self {
            mac: hmac::Key::new(hmac::HMAC_SHA256, &secret),
            entries: Mutex::default(),
        }
    }

    /// The key of `creds` for userlist `list`. Lengths are included, so no two different
    /// (user, password) pairs give the same message.
    pub fn key(&self, list: usize, creds: &Credentials) -> Key {
        let mut ctx = hmac::Context::with_key(&self.mac);
        ctx.update(&(list as u64).to_le_bytes());
        ctx.update(&(creds.user().len() as u64).to_le_bytes());
        ctx.update(creds.user());
        ctx.update(creds.password());
        let mut key = [0u8; 32];
        key.copy_from_slice(ctx.sign().as_ref());
        key
    }

    /// The user index cached for `key`.
    pub fn get(&self, key: &Key) -> Option<usize> {
        let mut g = self.entries.lock().ok()?;
        if let Some(&user) = g.young.get(key) {
            return Some(user);
        }
        let user = g.old.remove(key)?;
        g.insert(*key, user);
        Some(user)
    }

    /// Remembers a successful check.
    pub fn put(&self, key: Key, user: usize) {
        if let Ok(mut g) = self.entries.lock() {
            g.insert(key, user);
        }
    }

    /// Entries held (both generations).
    pub fn len(&self) -> usize {
        self.entries
            .lock()
            .map_or(0, |g| g.young.len() + g.old.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Generations {
    fn insert(&mut self, key: Key, user: usize) {
        if self.young.len() >= GENERATION {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(key, user);
    }
}
