//! Targets other than x86-64: no kernel. [`Kernel::detect`] always answers `None`, so
//! [`crate::Batcher`] sends everything to aws-lc-rs; the type cannot be built, so its methods
//! are unreachable by construction (an uninhabited field, not a panic).

/// Lanes processed together.
pub const LANES: usize = 8;
/// Bits per limb.
pub const LIMB_BITS: usize = 52;
/// Numbers of eight lanes in radix 2^52, limb-major: `[limb][lane]`.
pub type Lanes<const N: usize> = [[u64; LANES]; N];

#[derive(Debug, Clone, Copy)]
enum Never {}

/// Never built on this target.
#[derive(Debug, Clone, Copy)]
pub struct Kernel(Never);

/// See the x86-64 kernel.
#[derive(Debug, Clone)]
pub struct ExpJob<'a, const N: usize> {
    pub modulus: &'a Lanes<N>,
    pub k0: [u64; LANES],
    pub r2: &'a Lanes<N>,
    pub r3: &'a Lanes<N>,
    pub base_lo: &'a Lanes<N>,
    pub base_hi: &'a Lanes<N>,
    pub exponent: &'a [[u64; LANES]],
}

impl Kernel {
    pub fn detect() -> Option<Self> {
        None
    }

    pub fn mod_exp<const N: usize>(&self, _job: &ExpJob<'_, N>) -> Lanes<N> {
        match self.0 {}
    }

    pub fn garner_h<const N: usize>(
        &self,
        _m1: &Lanes<N>,
        _m2: &Lanes<N>,
        _p: &Lanes<N>,
        _k0: [u64; LANES],
        _qinv_r: &Lanes<N>,
    ) -> Lanes<N> {
        match self.0 {}
    }

    pub fn lookup<const N: usize>(&self, _table: &[Lanes<N>], _idx: [u64; LANES]) -> Lanes<N> {
        match self.0 {}
    }

    pub fn mont_sqr<const N: usize>(
        &self,
        _a: &Lanes<N>,
        _m: &Lanes<N>,
        _k0: [u64; LANES],
    ) -> Lanes<N> {
        match self.0 {}
    }

    pub fn mont_mul<const N: usize>(
        &self,
        _a: &Lanes<N>,
        _b: &Lanes<N>,
        _m: &Lanes<N>,
        _k0: [u64; LANES],
    ) -> Lanes<N> {
        match self.0 {}
    }

    pub fn x25519(
        &self,
        _scalars: &[[u8; crate::x25519::LEN]; LANES],
        _points: &[[u8; crate::x25519::LEN]; LANES],
    ) -> [[u8; crate::x25519::LEN]; LANES] {
        match self.0 {}
    }

    pub(crate) fn p256_nonces(
        &self,
        _ks: &[[u64; 4]; LANES],
        _t: &crate::p256::table::Tables,
    ) -> [crate::p256::Computed; LANES] {
        match self.0 {}
    }
}
