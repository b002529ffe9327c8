//! Taking servers out of the picks for the length of one
//! [`Balancer::select_with`](crate::Balancer::select_with) call, and putting them back as they
//! were.
//!
//! The data path refuses some picks: a server at its global `maxconn` (counted over every
//! worker, which a worker's algorithm cannot see), or the server whose connect just failed when
//! a request is retried. Marking such a server unusable and usable again would do, but costs a
//! table or ring rebuild for `static-rr` and the hashes, on every refused pick, and would move a
//! round-robin server to a new place in the cycle. So each algorithm offers a cheap exclusion
//! that leaves its balancing state as it was:
//!
//! | algorithm | exclude | restore | the excluded server |
//! |---|---|---|---|
//! | `roundrobin` | out of the heap | back at its deadline before the pick | keeps its turn |
//! | `leastconn` | out of the heap | back with its exact key | keeps its place |
//! | `first` | out of the open set | re-evaluated | keeps its place |
//! | `static-rr` | flagged, skipped by the table walk | flags cleared | loses the skipped entries |
//! | hashes | flagged: the walk goes to the next table entry or ring point | flags cleared | keeps its keys |
//! | `random`, `ewma` | weight 0 in the draw tree | weight restored | keeps its share |
//!
//! `static-rr` consumes the entries it skips, as HAProxy's map does: its table position is one
//! counter, and giving the refused server its entry back would give the accepted one an extra
//! turn instead. Exclusion never touches the health and weight state ([`Slots`]), so it cannot
//! undo a `set_usable` or `set_weight`.
//!
//! [`Slots`]: crate::slots::Slots

use crate::ServerId;

/// Temporary exclusion of servers from an algorithm's picks.
pub(crate) trait Exclude {
    /// Takes `server`, which the last `pick` returned, out of the picks until
    /// [`Exclude::restore`].
    fn exclude(&mut self, server: ServerId);

    /// Puts back every excluded server.
    fn restore(&mut self);
}

/// A set of excluded servers: O(1) membership, and a list to clear it in O(excluded).
#[derive(Debug, Clone, Default)]
pub(crate) struct Excluded {
    /// Allocated on the first exclusion, so algorithms never refused pay nothing.
    flags: Vec<bool>,
    list: Vec<ServerId>,
}

impl Excluded {
    /// Adds `server` (a valid tier index, so the flags stay as small as the tier).
    pub(crate) fn insert(&mut self, server: ServerId) {
        if self.flags.len() <= server {
            self.flags.resize(server + 1, false);
        }
        if !self.flags[server] {
            self.flags[server] = true;
            self.list.push(server);
        }
    }

    pub(crate) fn contains(&self, server: ServerId) -> bool {
        self.flags.get(server).copied().unwrap_or(false)
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Empties the set, calling `f` on each server that was in it.
    pub(crate) fn clear_each(&mut self, mut f: impl FnMut(ServerId)) {
        for server in self.list.drain(..) {
            if let Some(flag) = self.flags.get_mut(server) {
                *flag = false;
            }
            f(server);
        }
    }
}
