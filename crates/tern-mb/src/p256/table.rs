//! The kernel's constants: both moduli in radix 2^52 with their Montgomery constants
//! (`R = 2^260`), `b` in Montgomery form, and the fixed-base table `i·16^w·G` (`i = 1…15`,
//! `w = 0…63`, affine, Montgomery form).
//!
//! Built once per process, on first use. The table's 960 points are public and come from
//! aws-lc (`agreement::PrivateKey::from_private_key` on the scalar `i·16^w`, then its public
//! key: aws-lc's own fixed-base multiplication), converted by shifting (`radix52::shl_mod`).
//! That costs a few tens of milliseconds once and keeps a second scalar point arithmetic out
//! of the crate; the property tests check every table-driven result against aws-lc anyway.

use std::sync::OnceLock;

use aws_lc_rs::agreement::{PrivateKey, ECDH_P256};

use super::scalar::{self, U256};
use crate::radix52;

/// Limbs of an element in radix 2^52.
pub(crate) const LIMBS: usize = 5;

/// Four-bit windows of a 256-bit scalar.
pub(crate) const WINDOWS: usize = 64;
/// Non-zero digits, i.e. table entries per window.
pub(crate) const ENTRIES: usize = 15;

/// One modulus in radix 2^52.
#[derive(Debug)]
pub(crate) struct ModConsts {
    pub(crate) m: [u64; LIMBS],
    pub(crate) two_m: [u64; LIMBS],
    /// `−m⁻¹ mod 2^52`.
    pub(crate) k0: u64,
    /// `R mod m` (one in Montgomery form) and `R² mod m`.
    pub(crate) one: [u64; LIMBS],
    pub(crate) r2: [u64; LIMBS],
    /// `m − 2`, Fermat's inverse exponent, as 64-bit words.
    pub(crate) exp: U256,
}

/// Everything the kernel reads besides its inputs.
#[derive(Debug)]
pub(crate) struct Tables {
    pub(crate) field: ModConsts,
    pub(crate) order: ModConsts,
    /// `b·R mod p`.
    pub(crate) b: [u64; LIMBS],
    /// Entry `w·ENTRIES + i − 1` is `i·16^w·G` as `(x·R mod p, y·R mod p)`, limbs of x then y.
    pub(crate) base: Vec<[u64; 2 * LIMBS]>,
}

/// The tables, built on first use; `None` if aws-lc failed to compute a point (it does not
/// for these scalars, all in `[1, n)`).
pub(crate) fn tables() -> Option<&'static Tables> {
    static TABLES: OnceLock<Option<Tables>> = OnceLock::new();
    TABLES.get_or_init(build).as_ref()
}

fn build() -> Option<Tables> {
    let field = consts(&scalar::P);
    let order = consts(&scalar::N);
    let b = to_mont(&scalar::B, &field.m);
    let mut base = Vec::with_capacity(WINDOWS * ENTRIES);
    for w in 0..WINDOWS {
        for i in 1..=ENTRIES as u64 {
            let mut k = [0u64; 4];
            k[(4 * w) / 64] = i << ((4 * w) % 64);
            let (x, y) = multiple_of_g(&k)?;
            let mut entry = [0u64; 2 * LIMBS];
            entry[..LIMBS].copy_from_slice(&to_mont(&x, &field.m));
            entry[LIMBS..].copy_from_slice(&to_mont(&y, &field.m));
            base.push(entry);
        }
    }
    Some(Tables {
        field,
        order,
        b,
        base,
    })
}

/// The affine coordinates of `k·G` by aws-lc, for `1 ≤ k < n`.
fn multiple_of_g(k: &U256) -> Option<(U256, U256)> {
    let key = PrivateKey::from_private_key(&ECDH_P256, &scalar::to_be(k)).ok()?;
    let public = key.compute_public_key().ok()?;
    // Uncompressed SEC 1 encoding: 0x04 ‖ x ‖ y.
    let bytes: &[u8; 65] = public.as_ref().try_into().ok()?;
    let x: &[u8; 32] = bytes[1..33].try_into().ok()?;
    let y: &[u8; 32] = bytes[33..].try_into().ok()?;
    Some((scalar::from_be(x), scalar::from_be(y)))
}

fn consts(m: &U256) -> ModConsts {
    let limbs = limbs(m);
    let mut one = [0u64; LIMBS];
    one[0] = 1;
    let one = shl(&one, &limbs);
    let r2 = shl(&one, &limbs);
    let two = radix52::mul_add(&limbs, &[2], &[0]);
    let mut exp = *m;
    exp[0] -= 2; // m is odd and far above 2: no borrow
    ModConsts {
        m: limbs,
        two_m: std::array::from_fn(|j| two[j]),
        k0: radix52::mont_k0(limbs[0]),
        one,
        r2,
        exp,
    }
}

/// `x·R mod m` for `x < m`.
fn to_mont(x: &U256, m: &[u64; LIMBS]) -> [u64; LIMBS] {
    shl(&limbs(x), m)
}

/// `x·2^260 mod m`.
fn shl(x: &[u64; LIMBS], m: &[u64; LIMBS]) -> [u64; LIMBS] {
    let v = radix52::shl_mod(x, 52 * LIMBS, m);
    std::array::from_fn(|j| v[j])
}

/// 64-bit words as five 52-bit limbs.
pub(crate) fn limbs(x: &U256) -> [u64; LIMBS] {
    const MASK52: u64 = (1 << 52) - 1;
    std::array::from_fn(|j| {
        let bit = 52 * j;
        let (word, shift) = (bit / 64, bit % 64);
        let low = x[word] >> shift;
        let high = match (shift, x.get(word + 1)) {
            (0, _) | (_, None) => 0,
            (_, Some(next)) => next << (64 - shift),
        };
        (low | high) & MASK52
    })
}

/// Five 52-bit limbs (a value below 2^256) as 64-bit words.
pub(crate) fn words(x: &[u64; LIMBS]) -> U256 {
    std::array::from_fn(|w| {
        let bit = 64 * w;
        let (limb, shift) = (bit / 52, bit % 52);
        let mut value = x[limb] >> shift;
        let mut filled = 52 - shift;
        let mut next = limb + 1;
        while filled < 64 && next < LIMBS {
            value |= x[next] << filled;
            filled += 52;
            next += 1;
        }
        value
    })
}
