//! The keys of a shared table changed since the peers were last sent its entries.
//!
//! The data path marks a key (one short lock, a hash insert) and the peers thread takes the
//! set every [`super::PUMP_EVERY`] and sends the entries' values as they are then: a key
//! changed a thousand times between two sends is sent once. The set holds at most the
//! table's `size` keys; a key marked when it is full is dropped and counted (its next change
//! sends it).

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Keys changed since the last [`Changes::take`].
#[derive(Debug)]
pub(crate) struct Changes<K> {
    keys: Mutex<HashSet<K>>,
    cap: usize,
    /// Keys dropped because the set was full.
    pub dropped: AtomicU64,
}

impl<K: Hash + Eq + Clone> Changes<K> {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            keys: Mutex::new(HashSet::new()),
            cap: cap.max(1),
            dropped: AtomicU64::new(0),
        }
    }

    /// Notes that `key` changed.
    pub(crate) fn mark(&self, key: &K) {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if keys.len() >= self.cap && !keys.contains(key) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        keys.insert(key.clone());
    }

    /// The keys changed since the last call.
    pub(crate) fn take(&self) -> Vec<K> {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *keys).into_iter().collect()
    }
}
