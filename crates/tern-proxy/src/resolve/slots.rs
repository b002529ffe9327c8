//! Which server holds which answer: the pure part of discovery, with no socket and no clock
//! of its own, so its rules are tested directly.
//!
//! The servers of one run (the slots of a template, or a single server) each hold
//! at most one entry (an address, with the SRV weight when it came from one). After a good
//! answer:
//! - a server whose entry is still in the answer keeps it (only its weight may change), so
//!   traffic never moves between servers that are still there;
//! - a server whose entry is gone keeps it for `hold obsolete` after it was last seen, then
//!   takes a new entry if one is free, else leaves balancing (its slot goes to maintenance);
//! - entries nobody holds fill the free servers in slot order (the entries sorted, so two
//!   nodes of a fleet fill slots the same way from the same records);
//! - with more entries than servers, the extra entries are not used.

use std::time::{Duration, Instant};

use super::answer::Entry;

/// What one server holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Held {
    pub entry: Option<Entry>,
    /// When its entry was last in an answer (`None`: never, e.g. an address from `libc`).
    pub seen: Option<Instant>,
}

/// What a good answer changes for one server (by index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// A new entry (a new address, or a weight change on the same address).
    Take(Entry),
    /// No entry any more: out of balancing.
    Out,
}

/// Applies a good answer's `entries` to `held`; returns the changes, in server order.
pub(crate) fn assign(
    held: &mut [Held],
    entries: &[Entry],
    now: Instant,
    obsolete: Duration,
) -> Vec<(usize, Change)> {
    let mut changes = Vec::new();
    let mut free: Vec<Entry> = Vec::new();
    let mut sorted = entries.to_vec();
    sorted.sort_by_key(|e| e.address);
    sorted.dedup_by_key(|e| e.address);
    for entry in &sorted {
        let holder = held
            .iter_mut()
            .enumerate()
            .find(|(_, h)| h.entry.is_some_and(|e| e.address == entry.address));
        match holder {
            Some((i, h)) => {
                h.seen = Some(now);
                if h.entry != Some(*entry) {
                    h.entry = Some(*entry);
                    changes.push((i, Change::Take(*entry)));
                }
            }
            None => free.push(*entry),
        }
    }
    let mut free = free.into_iter();
    for (i, h) in held.iter_mut().enumerate() {
        let fresh = h.seen == Some(now);
        let kept = h.entry.is_some() && h.seen.is_some_and(|t| now.duration_since(t) < obsolete);
        if fresh || kept {
            continue;
        }
        match free.next() {
            Some(entry) => {
                *h = Held {
                    entry: Some(entry),
                    seen: Some(now),
                };
                changes.push((i, Change::Take(entry)));
            }
            None if h.entry.is_some() => {
                *h = Held::default();
                changes.push((i, Change::Out));
            }
            None => {}
        }
    }
    changes.sort_by_key(|(i, _)| *i);
    changes
}

#[cfg(test)]
mod tests;
