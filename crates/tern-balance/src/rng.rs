//! A small seeded pseudo-random generator (SplitMix64), so that every random choice replays
//! from its seed.
//!
//! Balancing needs speed and a fair spread, not unpredictability: nothing here is secret, and a
//! client cannot steer the sequence since it never sees it. SplitMix64 is one add and a few
//! multiply-xorshifts per draw, passes BigCrush, and any seed (even 0) is a good one.

/// SplitMix64 state.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose whole sequence is fixed by `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    /// A number in `0..n` (0 when `n` is 0), by multiply-shift: the bias is below n / 2^64.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// The SplitMix64 finalizer: a bijective mix in which every input bit affects every output bit.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests;
