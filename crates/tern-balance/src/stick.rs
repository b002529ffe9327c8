//! A stickiness table: which server a key (a client address, a session cookie) was sent to, so
//! that its next requests go to the same one, with HAProxy's `stick-table` limits: entries
//! expire `expire` after their last use, and a full table evicts the least recently used.
//!
//! Every operation is O(1) amortised and memory is bounded by `size`:
//!
//! - a `HashMap` from key to a slot of a slab holding the entries (the key, the server, the time
//!   and number of the last use);
//! - a FIFO of uses `(slot, use number)`, appended on every `get` and `put`. Only the newest use
//!   of an entry is current (its number matches the entry's), so the first current use from the
//!   front is the least recently used entry, and also the first to expire: eviction and expiry
//!   both pop from the front, skipping stale uses;
//! - repeated uses of busy keys would grow the FIFO without bound, so it is compacted (stale
//!   uses dropped, order kept) whenever it holds more than twice the entries plus a constant;
//!   each compaction is paid for by the uses that made it necessary.
//!
//! A `get` does not clone the key (lookups may borrow it, e.g. a `&[u8]` cookie value for a
//! `Vec<u8>` key); a new key is cloned once, into the slab. The map uses std's randomly seeded
//! hasher, because keys come from clients who could otherwise aim collisions at it: its seed
//! changes no result of this table (iteration order is never observable), so runs still replay.
//! Time only moves forward for the table: a `now` older than an entry's last use counts as that
//! same instant.

use std::borrow::Borrow;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::time::Duration;

use crate::context::Nanos;
use crate::ServerId;

/// Stale uses tolerated in the FIFO whatever the table size.
const SLACK: usize = 32;

/// One entry.
#[derive(Debug)]
struct Entry<K> {
    key: K,
    server: ServerId,
    /// Time of the last use.
    seen: Nanos,
    /// Number of the last use.
    touch: u64,
}

/// Key → server, with expiry and a size limit.
#[derive(Debug)]
pub struct StickTable<K: Hash + Eq + Clone> {
    size: usize,
    expire: Nanos,
    map: HashMap<K, u32>,
    entries: Vec<Option<Entry<K>>>,
    free: Vec<u32>,
    uses: VecDeque<(u32, u64)>,
    next_touch: u64,
}

impl<K: Hash + Eq + Clone> StickTable<K> {
    /// A table of at most `size` entries (0: remember nothing), each forgotten `expire` after
    /// its last use.
    pub fn new(size: usize, expire: Duration) -> Self {
        Self {
            size,
            expire: u64::try_from(expire.as_nanos()).unwrap_or(u64::MAX),
            map: HashMap::new(),
            entries: Vec::new(),
            free: Vec::new(),
            uses: VecDeque::new(),
            next_touch: 0,
        }
    }

    /// Entries held (some may have expired and not been purged yet: see [`StickTable::purge`]).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The most entries held at once.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The server of `key`, if it has a live entry; the use refreshes it (expiry and LRU).
    pub fn get<Q>(&mut self, key: &Q, now: Nanos) -> Option<ServerId>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.purge(now);
        let slot = *self.map.get(key)?;
        if self.entry(slot).is_some_and(|e| self.expired(e, now)) {
            self.release(slot);
            return None;
        }
        let server = self.touch(slot, now)?;
        self.compact();
        Some(server)
    }

    /// Records that `key` goes to `server` from `now`, evicting the least recently used entry
    /// when the table is full.
    pub fn put(&mut self, key: K, server: ServerId, now: Nanos) {
        self.purge(now);
        if let Some(&slot) = self.map.get(&key) {
            if let Some(Some(e)) = self.entries.get_mut(slot as usize) {
                e.server = server;
            }
            self.touch(slot, now);
            self.compact();
            return;
        }
        if self.size == 0 {
            return;
        }
        while self.map.len() >= self.size {
            if !self.evict_front() {
                break;
            }
        }
        let entry = Entry {
            key: key.clone(),
            server,
            seen: now,
            touch: 0,
        };
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => match u32::try_from(self.entries.len()) {
                Ok(slot) => {
                    self.entries.push(None);
                    slot
                }
                Err(_) => return,
            },
        };
        self.entries[slot as usize] = Some(entry);
        self.map.insert(key, slot);
        self.touch(slot, now);
        self.compact();
    }

    /// Forgets `key`; returns its server if it had an entry (expired or not).
    pub fn remove<Q>(&mut self, key: &Q) -> Option<ServerId>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = *self.map.get(key)?;
        let server = self.release(slot).map(|e| e.server);
        self.compact();
        server
    }

    /// Forgets every entry that points to `server` (it was removed from the backend). O(size).
    pub fn forget_server(&mut self, server: ServerId) {
        let slots: Vec<u32> = self
            .map
            .values()
            .copied()
            .filter(|&slot| self.entry(slot).is_some_and(|e| e.server == server))
            .collect();
        for slot in slots {
            self.release(slot);
        }
        self.compact();
    }

    /// Drops the entries that expired by `now` (they would be dropped on their next use or
    /// when they reach the front anyway; this bounds how long expired keys stay in memory).
    pub fn purge(&mut self, now: Nanos) {
        while let Some(&(slot, touch)) = self.uses.front() {
            match self.entry(slot) {
                Some(e) if e.touch == touch => {
                    if !self.expired(e, now) {
                        break;
                    }
                    self.release(slot);
                }
                _ => {}
            }
            self.uses.pop_front();
        }
    }

    fn entry(&self, slot: u32) -> Option<&Entry<K>> {
        self.entries.get(slot as usize)?.as_ref()
    }

    fn expired(&self, entry: &Entry<K>, now: Nanos) -> bool {
        now.saturating_sub(entry.seen) >= self.expire
    }

    /// Records a use of the entry at `slot`; returns its server.
    fn touch(&mut self, slot: u32, now: Nanos) -> Option<ServerId> {
        let touch = self.next_touch;
        let e = self.entries.get_mut(slot as usize)?.as_mut()?;
        e.seen = e.seen.max(now);
        e.touch = touch;
        self.next_touch += 1;
        self.uses.push_back((slot, touch));
        Some(e.server)
    }

    /// Evicts the least recently used entry; false when there is none.
    fn evict_front(&mut self) -> bool {
        while let Some((slot, touch)) = self.uses.pop_front() {
            if self.entry(slot).is_some_and(|e| e.touch == touch) {
                self.release(slot);
                return true;
            }
        }
        false
    }

    /// Frees the entry at `slot` and its key; its uses become stale.
    fn release(&mut self, slot: u32) -> Option<Entry<K>> {
        let entry = self.entries.get_mut(slot as usize)?.take()?;
        self.map.remove(&entry.key);
        self.free.push(slot);
        Some(entry)
    }

    /// Drops stale uses once they outnumber the entries.
    fn compact(&mut self) {
        if self.uses.len() <= 2 * self.map.len() + SLACK {
            return;
        }
        let entries = &self.entries;
        self.uses.retain(|&(slot, touch)| {
            matches!(entries.get(slot as usize), Some(Some(e)) if e.touch == touch)
        });
    }
}

#[cfg(test)]
mod tests;
