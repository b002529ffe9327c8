//! A stickiness table: which server a key (a client address, a session cookie) was sent to, so
//! that its next requests go to the same one, with HAProxy's `stick-table` limits: entries
//! expire `expire` after their last use, and a full table evicts the least recently used. The
//! value is generic (`V`, a [`ServerId`] by default): the data path also keeps per-key request
//! counters in it (HAProxy's `store`), with the same expiry and size bound.
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
struct Entry<K, V> {
    key: K,
    value: V,
    /// Time of the last use.
    seen: Nanos,
    /// Number of the last use.
    touch: u64,
}

/// Key → server (or any value `V`), with expiry and a size limit.
#[derive(Debug)]
pub struct StickTable<K: Hash + Eq + Clone, V = ServerId> {
    size: usize,
    expire: Nanos,
    map: HashMap<K, u32>,
    entries: Vec<Option<Entry<K, V>>>,
    free: Vec<u32>,
    uses: VecDeque<(u32, u64)>,
    next_touch: u64,
}

impl<K: Hash + Eq + Clone, V> StickTable<K, V> {
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

    /// The value of `key`, if it has a live entry; the use refreshes it (expiry and LRU).
    pub fn get<Q>(&mut self, key: &Q, now: Nanos) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Copy,
    {
        self.get_mut(key, now).map(|v| *v)
    }

    /// The value of `key`, if it has a live entry, without using it (no refresh): what a
    /// replica of the table (HAProxy's peers) is sent.
    pub fn peek<Q>(&self, key: &Q, now: Nanos) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let e = self.entry(*self.map.get(key)?)?;
        (!self.expired(e, now)).then_some(&e.value)
    }

    /// The value of `key` to change in place, if it has a live entry; the use refreshes it.
    pub fn get_mut<Q>(&mut self, key: &Q, now: Nanos) -> Option<&mut V>
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
        self.touch(slot, now)?;
        self.compact();
        self.value_mut(slot)
    }

    /// The value of `key`, made by `make` (evicting the least recently used entry when the
    /// table is full) when it has no live entry; the use refreshes it. `None` only for a table
    /// of size 0.
    pub fn get_or_insert_with(
        &mut self,
        key: &K,
        now: Nanos,
        make: impl FnOnce() -> V,
    ) -> Option<&mut V> {
        if self.get_mut(key, now).is_none() {
            self.insert(key.clone(), make(), now);
        }
        let slot = *self.map.get(key)?;
        self.value_mut(slot)
    }

    /// Records that `key` has `value` from `now` (the server it goes to), evicting the least
    /// recently used entry when the table is full.
    pub fn put(&mut self, key: K, value: V, now: Nanos) {
        self.purge(now);
        if let Some(&slot) = self.map.get(&key) {
            if let Some(Some(e)) = self.entries.get_mut(slot as usize) {
                e.value = value;
            }
            self.touch(slot, now);
            self.compact();
            return;
        }
        self.insert(key, value, now);
    }

    /// Every live entry at `now`, least recently used first, without refreshing any.
    pub fn iter(&self, now: Nanos) -> impl Iterator<Item = (&K, &V)> {
        self.uses.iter().filter_map(move |&(slot, touch)| {
            let e = self.entry(slot)?;
            (e.touch == touch && !self.expired(e, now)).then_some((&e.key, &e.value))
        })
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.map.clear();
        self.entries.clear();
        self.free.clear();
        self.uses.clear();
    }

    fn value_mut(&mut self, slot: u32) -> Option<&mut V> {
        Some(&mut self.entries.get_mut(slot as usize)?.as_mut()?.value)
    }

    /// Adds an entry for `key`, which has none.
    fn insert(&mut self, key: K, value: V, now: Nanos) {
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
            value,
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

    /// Forgets `key`; returns its value if it had an entry (expired or not).
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = *self.map.get(key)?;
        let value = self.release(slot).map(|e| e.value);
        self.compact();
        value
    }

    /// Forgets every entry whose value `gone` says so. O(size).
    pub fn forget_where(&mut self, gone: impl Fn(&V) -> bool) {
        let slots: Vec<u32> = self
            .map
            .values()
            .copied()
            .filter(|&slot| self.entry(slot).is_some_and(|e| gone(&e.value)))
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

    fn entry(&self, slot: u32) -> Option<&Entry<K, V>> {
        self.entries.get(slot as usize)?.as_ref()
    }

    fn expired(&self, entry: &Entry<K, V>, now: Nanos) -> bool {
        now.saturating_sub(entry.seen) >= self.expire
    }

    /// Records a use of the entry at `slot`; `None` when there is none.
    fn touch(&mut self, slot: u32, now: Nanos) -> Option<()> {
        let touch = self.next_touch;
        let e = self.entries.get_mut(slot as usize)?.as_mut()?;
        e.seen = e.seen.max(now);
        e.touch = touch;
        self.next_touch += 1;
        self.uses.push_back((slot, touch));
        Some(())
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
    fn release(&mut self, slot: u32) -> Option<Entry<K, V>> {
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

impl<K: Hash + Eq + Clone> StickTable<K, ServerId> {
    /// Forgets every entry that points to `server` (it was removed from the backend). O(size).
    pub fn forget_server(&mut self, server: ServerId) {
        self.forget_where(|&s| s == server);
    }
}

#[cfg(test)]
mod tests;
