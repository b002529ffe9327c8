//! The backend queue: requests waiting for a server slot when every usable server is at its
//! `maxconn`, generic over what waits (the data path stores a way to wake the waiting request).
//!
//! Order is first come, first served over the whole backend, with one exception taken from
//! HAProxy: a waiter that must go to one particular server (persistence: a stickiness entry or
//! a cookie) is served only by that server, while the others are served by any. When a slot
//! frees on a server, [`Queue::take_for`] hands it the oldest waiter that wants any server or
//! that one. A waiter pinned to a server that stays full waits until it gives up
//! ([`Queue::remove`]) or its deadline passes ([`Queue::pop_expired`]); when the server goes
//! down, the caller takes its waiters out ([`Queue::take_pinned`]) to place them elsewhere.
//!
//! Layout, so that every operation is O(1) amortised except expiry (O(log n)):
//!
//! - waiters live in a slab (a vector of slots reused through a free list); a [`Ticket`] names
//!   a slot and the waiter's arrival number, so a stale ticket (its waiter gone, the slot reused)
//!   is recognised and ignored;
//! - one FIFO of references for waiters that want any server and one per server that has
//!   pinned waiters; `take_for` compares the fronts of two FIFOs by arrival number;
//! - a min-heap of `(deadline, reference)` for expiry.
//!
//! Removing a waiter from the middle (it gave up, it expired, it was taken through the other
//! FIFO) leaves stale references behind, skipped when they reach a front. So that they cannot
//! pile up, FIFOs and heap are compacted whenever they hold more than twice the live waiters
//! (plus a constant): memory stays proportional to the waiters, and each compaction is paid for
//! by the removals that made it necessary.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use crate::context::Nanos;
use crate::ServerId;

/// Slack before compaction: stale references tolerated whatever the queue length.
const SLACK: usize = 32;

/// The receipt of a queued waiter, to take it out again with [`Queue::remove`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket {
    seq: u64,
    slot: u32,
}

/// A waiter (what it waits for is recorded by the FIFO and the heap that hold it).
#[derive(Debug)]
struct Entry<T> {
    seq: u64,
    item: T,
}

/// A queue of waiters for the servers of one backend.
#[derive(Debug)]
pub struct Queue<T> {
    max: Option<usize>,
    slots: Vec<Option<Entry<T>>>,
    free: Vec<u32>,
    len: usize,
    next_seq: u64,
    /// Waiters that take any server, oldest first.
    any: VecDeque<Ticket>,
    /// Waiters pinned to one server, oldest first.
    pinned: HashMap<ServerId, VecDeque<Ticket>>,
    /// References in `any` and `pinned` together, live or stale.
    refs: usize,
    deadlines: BinaryHeap<Reverse<(Nanos, u64, u32)>>,
}

impl<T> Queue<T> {
    /// An empty queue holding at most `max` waiters (`None`: no limit; `Some(0)`: never
    /// queue).
    pub fn new(max: Option<usize>) -> Self {
        Self {
            max,
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
            next_seq: 0,
            any: VecDeque::new(),
            pinned: HashMap::new(),
            refs: 0,
            deadlines: BinaryHeap::new(),
        }
    }

    /// Waiters in the queue.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no one waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The limit given to [`Queue::new`].
    pub fn max(&self) -> Option<usize> {
        self.max
    }

    /// Queues `item`, to be served by any server (`want` = `None`) or only by `want`, and to
    /// give up at `deadline`. Gives the item back when the queue is full.
    pub fn push(&mut self, item: T, want: Option<ServerId>, deadline: Nanos) -> Result<Ticket, T> {
        if self.max.is_some_and(|max| self.len >= max) {
            return Err(item);
        }
        let seq = self.next_seq;
        let entry = Entry { seq, item };
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => match u32::try_from(self.slots.len()) {
                Ok(slot) => {
                    self.slots.push(None);
                    slot
                }
                Err(_) => return Err(entry.item),
            },
        };
        self.slots[slot as usize] = Some(entry);
        self.next_seq += 1;
        self.len += 1;
        let ticket = Ticket { seq, slot };
        match want {
            None => self.any.push_back(ticket),
            Some(server) => self.pinned.entry(server).or_default().push_back(ticket),
        }
        self.refs += 1;
        self.deadlines.push(Reverse((deadline, seq, slot)));
        self.compact();
        Ok(ticket)
    }

    /// The oldest waiter that `server` may serve (it wants any server, or this one), taken out
    /// of the queue. O(1) amortised.
    pub fn take_for(&mut self, server: ServerId) -> Option<(Ticket, T)> {
        let any = self.front_of_any();
        let pinned = self.front_of_pinned(server);
        let ticket = match (any, pinned) {
            (Some(a), Some(p)) if p.seq < a.seq => self.pop_pinned(server),
            (Some(_), _) => self.any.pop_front(),
            (None, Some(_)) => self.pop_pinned(server),
            (None, None) => None,
        }?;
        self.refs -= 1;
        let entry = self.release(ticket)?;
        self.compact();
        Some((ticket, entry.item))
    }

    /// Takes out every waiter pinned to `server`, oldest first: the server went down, so they
    /// must be placed elsewhere (persistence never waits for a server that is down).
    pub fn take_pinned(&mut self, server: ServerId) -> Vec<T> {
        let Some(fifo) = self.pinned.remove(&server) else {
            return Vec::new();
        };
        self.refs -= fifo.len();
        let taken = fifo
            .into_iter()
            .filter_map(|t| self.release(t))
            .map(|e| e.item)
            .collect();
        self.compact();
        taken
    }

    /// Takes a waiter out (it gave up); `None` if it is no longer queued.
    pub fn remove(&mut self, ticket: Ticket) -> Option<T> {
        let entry = self.release(ticket)?;
        self.compact();
        Some(entry.item)
    }

    /// The earliest deadline among the waiters.
    pub fn next_deadline(&mut self) -> Option<Nanos> {
        self.clean_deadlines();
        self.deadlines
            .peek()
            .map(|Reverse((deadline, _, _))| *deadline)
    }

    /// The waiter with the earliest deadline, if that deadline is at or before `now`, taken out
    /// of the queue (the caller answers it with a timeout). O(log n).
    pub fn pop_expired(&mut self, now: Nanos) -> Option<(Ticket, T)> {
        self.clean_deadlines();
        let &Reverse((deadline, seq, slot)) = self.deadlines.peek()?;
        if deadline > now {
            return None;
        }
        self.deadlines.pop();
        let ticket = Ticket { seq, slot };
        let entry = self.release(ticket)?;
        self.compact();
        Some((ticket, entry.item))
    }

    /// Every waiter whose deadline is at or before `now`, taken out, earliest deadline first.
    pub fn expired(&mut self, now: Nanos) -> Vec<T> {
        std::iter::from_fn(|| self.pop_expired(now))
            .map(|(_, item)| item)
            .collect()
    }

    /// Empties the queue (the backend went down), returning the waiters oldest first. The
    /// queue is empty as soon as this returns, whether or not the iterator is consumed.
    pub fn drain(&mut self) -> impl Iterator<Item = T> {
        let mut entries: Vec<Entry<T>> = self.slots.drain(..).flatten().collect();
        entries.sort_unstable_by_key(|e| e.seq);
        self.free.clear();
        self.any.clear();
        self.pinned.clear();
        self.deadlines.clear();
        self.refs = 0;
        self.len = 0;
        entries.into_iter().map(|e| e.item)
    }

    /// Whether `ticket` names a queued waiter.
    fn is_live(&self, ticket: Ticket) -> bool {
        live(&self.slots, ticket)
    }

    /// Frees the waiter's slot; its references become stale.
    fn release(&mut self, ticket: Ticket) -> Option<Entry<T>> {
        if !self.is_live(ticket) {
            return None;
        }
        let entry = self.slots.get_mut(ticket.slot as usize)?.take()?;
        self.free.push(ticket.slot);
        self.len -= 1;
        Some(entry)
    }

    fn front_of_any(&mut self) -> Option<Ticket> {
        while let Some(&t) = self.any.front() {
            if self.is_live(t) {
                return Some(t);
            }
            self.any.pop_front();
            self.refs -= 1;
        }
        None
    }

    fn front_of_pinned(&mut self, server: ServerId) -> Option<Ticket> {
        let fifo = self.pinned.get_mut(&server)?;
        let mut found = None;
        while let Some(&t) = fifo.front() {
            if live(&self.slots, t) {
                found = Some(t);
                break;
            }
            fifo.pop_front();
            self.refs -= 1;
        }
        if fifo.is_empty() {
            self.pinned.remove(&server);
        }
        found
    }

    fn pop_pinned(&mut self, server: ServerId) -> Option<Ticket> {
        let fifo = self.pinned.get_mut(&server)?;
        let ticket = fifo.pop_front();
        if fifo.is_empty() {
            self.pinned.remove(&server);
        }
        ticket
    }

    fn clean_deadlines(&mut self) {
        while let Some(&Reverse((_, seq, slot))) = self.deadlines.peek() {
            if self.is_live(Ticket { seq, slot }) {
                break;
            }
            self.deadlines.pop();
        }
    }

    /// Drops stale references once they outnumber the live waiters.
    fn compact(&mut self) {
        let bound = 2 * self.len + SLACK;
        if self.refs > bound {
            let slots = &self.slots;
            self.any.retain(|&t| live(slots, t));
            self.pinned.retain(|_, fifo| {
                fifo.retain(|&t| live(slots, t));
                !fifo.is_empty()
            });
            self.refs = self.any.len() + self.pinned.values().map(VecDeque::len).sum::<usize>();
        }
        if self.deadlines.len() > bound {
            let slots = &self.slots;
            self.deadlines
                .retain(|&Reverse((_, seq, slot))| live(slots, Ticket { seq, slot }));
        }
        if self.slots.len() > bound && self.free.len() == self.slots.len() {
            self.slots.clear();
            self.free.clear();
        }
    }
}

/// Whether `ticket` names a waiter held in `slots`.
fn live<T>(slots: &[Option<Entry<T>>], ticket: Ticket) -> bool {
    matches!(slots.get(ticket.slot as usize), Some(Some(e)) if e.seq == ticket.seq)
}

#[cfg(test)]
mod tests;
