//! A Fenwick (binary indexed) tree over server weights, for weighted random sampling in
//! O(log n) with weights that change at runtime in O(log n).
//!
//! An alias table would sample in O(1) but costs O(n) to rebuild on every weight change (health
//! flaps, slow-start ramps); a prefix-sum tree keeps both operations logarithmic. Sampling
//! descends the tree: with `r` uniform in `0..total`, the server whose weight interval holds `r`
//! is found in one pass over log2(n) levels, and a server of weight 0 has an empty interval, so it
//! is never returned.

/// Prefix sums of `values`, 1-indexed internally.
#[derive(Debug, Clone)]
pub(crate) struct Fenwick {
    tree: Vec<u64>,
    values: Vec<u32>,
    total: u64,
    /// Highest power of two not above `values.len()` (0 when empty).
    top: usize,
}

impl Fenwick {
    pub(crate) fn new(values: impl IntoIterator<Item = u32>) -> Self {
        let values: Vec<u32> = values.into_iter().collect();
        let n = values.len();
        let mut tree = vec![0u64; n + 1];
        for (i, &v) in values.iter().enumerate() {
            tree[i + 1] += u64::from(v);
        }
        // Linear construction: push each node's sum to its parent.
        for i in 1..=n {
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                tree[parent] += tree[i];
            }
        }
        let total = values.iter().map(|&v| u64::from(v)).sum();
        let top = if n == 0 { 0 } else { 1 << n.ilog2() };
        Self {
            tree,
            values,
            total,
            top,
        }
    }

    /// Sum of all values.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Sets value `i` (ignored when out of range).
    pub(crate) fn set(&mut self, i: usize, value: u32) {
        let Some(old) = self.values.get_mut(i) else {
            return;
        };
        let (old_v, new_v) = (u64::from(*old), u64::from(value));
        *old = value;
        self.total = self.total - old_v + new_v;
        let mut k = i + 1;
        while k < self.tree.len() {
            self.tree[k] = self.tree[k] - old_v + new_v;
            k += k & k.wrapping_neg();
        }
    }

    /// The index whose interval `[prefix(i), prefix(i) + value(i))` holds `r`; `r` must be below
    /// [`Fenwick::total`], so the result always has a non-zero value.
    pub(crate) fn find(&self, mut r: u64) -> usize {
        let mut pos = 0;
        let mut step = self.top;
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && self.tree[next] <= r {
                pos = next;
                r -= self.tree[next];
            }
            step >>= 1;
        }
        pos
    }
}

#[cfg(test)]
mod tests;
