//! An indexed binary min-heap: servers keyed by a value that changes in place.
//!
//! `std`'s `BinaryHeap` cannot find an element to change or remove it, so an algorithm whose
//! keys move (round-robin deadlines, least-connections loads) would need lazy deletion or a
//! balanced tree; a tree costs allocation and pointer chasing on every update. Here the heap
//! stores `(key, server)` pairs inline in one vector and a second vector records where each
//! server sits, so changing a server's key is one sift, O(log n), with no allocation once built.
//! Ties between equal keys go to the lower server index, so the order is fully deterministic.

/// Position marker of a server that is not in the heap.
const ABSENT: u32 = u32::MAX;

/// A min-heap of servers `0..n` keyed by `K`.
#[derive(Debug, Clone)]
pub(crate) struct IndexedHeap<K> {
    items: Vec<(K, u32)>,
    pos: Vec<u32>,
}

impl<K: Ord + Copy> IndexedHeap<K> {
    /// An empty heap for servers `0..n`.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            items: Vec::with_capacity(n),
            pos: vec![ABSENT; n],
        }
    }

    /// The server with the smallest key, and its key.
    pub(crate) fn peek(&self) -> Option<(K, usize)> {
        self.items.first().map(|&(k, s)| (k, s as usize))
    }

    /// The key of `server`, if it is in the heap.
    pub(crate) fn key(&self, server: usize) -> Option<K> {
        let &at = self.pos.get(server)?;
        if at == ABSENT {
            return None;
        }
        self.items.get(at as usize).map(|&(k, _)| k)
    }

    /// Number of servers in the heap.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Inserts `server` with `key`, or changes its key. Ignores servers out of range.
    pub(crate) fn set(&mut self, server: usize, key: K) {
        let (Some(&at), Ok(id)) = (self.pos.get(server), u32::try_from(server)) else {
            return;
        };
        if at == ABSENT {
            self.items.push((key, id));
            let last = self.items.len() - 1;
            self.place(last);
            self.sift_up(last);
        } else if at == 0 {
            self.replace_top(key);
        } else {
            let at = at as usize;
            self.items[at].0 = key;
            let at = self.sift_up(at);
            self.sift_down(at);
        }
    }

    /// Changes the key of the smallest element. The picked server usually moves far down (its
    /// next deadline or its load just grew), so this uses Floyd's variant: the hole left at the
    /// top descends along the smaller children to a leaf (one comparison per level instead of
    /// two, and that one a branch-free selection), then the item sifts up from there, usually
    /// not at all.
    pub(crate) fn replace_top(&mut self, key: K) {
        let n = self.items.len();
        let Some(&(_, server)) = self.items.first() else {
            return;
        };
        let mut hole = 0;
        loop {
            let left = 2 * hole + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = left + usize::from(right < n && self.less(right, left));
            self.items[hole] = self.items[child];
            self.place(hole);
            hole = child;
        }
        self.items[hole] = (key, server);
        self.sift_up(hole);
    }

    /// Takes `server` out of the heap (no-op when absent).
    pub(crate) fn remove(&mut self, server: usize) {
        let Some(at) = self.pos.get_mut(server) else {
            return;
        };
        if *at == ABSENT {
            return;
        }
        let at = std::mem::replace(at, ABSENT) as usize;
        let last = self.items.len() - 1;
        self.items.swap(at, last);
        self.items.pop();
        if at < self.items.len() {
            self.place(at);
            let at = self.sift_up(at);
            self.sift_down(at);
        }
    }

    fn less(&self, a: usize, b: usize) -> bool {
        self.items[a] < self.items[b]
    }

    /// Records where the item at `i` sits.
    fn place(&mut self, i: usize) {
        let server = self.items[i].1 as usize;
        // i < items.len() <= pos.len() = n < u32::MAX, so it fits.
        self.pos[server] = i as u32;
    }

    fn sift_up(&mut self, mut i: usize) -> usize {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.less(i, parent) {
                break;
            }
            self.items.swap(i, parent);
            self.place(i);
            i = parent;
        }
        self.place(i);
        i
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.items.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.less(right, left) {
                right
            } else {
                left
            };
            if !self.less(child, i) {
                break;
            }
            self.items.swap(i, child);
            self.place(i);
            i = child;
        }
        if i < n {
            self.place(i);
        }
    }
}

#[cfg(test)]
mod tests;
