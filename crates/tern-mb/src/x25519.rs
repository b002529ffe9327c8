//! X25519 (RFC 7748) eight at a time: one Montgomery ladder per vector lane, each lane with its
//! own scalar and its own u-coordinate.
//!
//! A TLS 1.3 handshake with an ECDHE key share spends about a quarter of tern's CPU in X25519
//! (one key generation, one shared secret). aws-lc computes each alone on 64-bit scalar
//! multiplies; here eight run side by side in radix 2^52 on AVX-512 IFMA (`field.rs`), for
//! the handshake batching of docs/design/0004-batched-crypto.md.
//!
//! # The ladder (RFC 7748 §5)
//!
//! Per lane: clamp the scalar (clear bits 0–2 and 255, set bit 254), drop bit 255 of the
//! u-coordinate (a u at or above p is used as is: the arithmetic is mod p, and the result is
//! reduced), then 255 steps from bit 254 down to bit 0, each a conditional swap of
//! `(x2, z2)` with `(x3, z3)` and one differential addition-and-doubling (5 multiplications,
//! 4 squarings, one multiplication by a24 = 121665), a last swap, and `x2·z2^(p−2)`. A
//! low-order input gives the all-zero output, as RFC 7748 computes it (checking for it is the
//! caller's business, as it is with aws-lc's `X25519` function).
//!
//! # Constant time
//!
//! Every lane runs all 255 steps and the same fixed inversion chain, whatever its scalar.
//! The scalar bit of step `t` is read at a public position (word `t/64`, bit `t%64`) into a
//! mask register (`vptestmq`); the swap is a masked blend of both operands (`vpblendmq`),
//! never a branch or an address. The field arithmetic is straight-line code
//! (`field.rs`). Byte conversions loop over fixed lengths.
//!
//! # Safety
//!
//! The one `unsafe` call, [`Kernel::x25519`], enters `#[target_feature]` code; a [`Kernel`]
//! exists only once `is_x86_feature_detected!` has seen AVX-512F and IFMA.

#[cfg(target_arch = "x86_64")]
mod field;
#[cfg(all(test, target_arch = "x86_64"))]
mod tests;

use crate::ifma::{Kernel, LANES};

/// Bytes of a scalar, a u-coordinate and a result.
pub const LEN: usize = 32;

/// The u-coordinate of the base point (9), for key generation.
pub const BASE_POINT: [u8; LEN] = {
    let mut u = [0u8; LEN];
    u[0] = 9;
    u
};

/// `X25519(scalars[i], points[i])` for the eight lanes, or `None` when this CPU lacks
/// AVX-512 IFMA (the caller then asks aws-lc, one at a time).
pub fn x25519_x8(
    scalars: &[[u8; LEN]; LANES],
    points: &[[u8; LEN]; LANES],
) -> Option<[[u8; LEN]; LANES]> {
    Kernel::detect().map(|kernel| kernel.x25519(scalars, points))
}

/// Eight public keys, `X25519(scalars[i], 9)`, by the same ladder (no fixed-base tables), or
/// `None` without IFMA.
pub fn x25519_base_x8(scalars: &[[u8; LEN]; LANES]) -> Option<[[u8; LEN]; LANES]> {
    x25519_x8(scalars, &[BASE_POINT; LANES])
}

/// A clamped scalar as four 64-bit words, least significant first (RFC 7748 §5,
/// `decodeScalar25519`).
#[cfg(target_arch = "x86_64")]
fn scalar_words(scalar: &[u8; LEN]) -> [u64; 4] {
    let mut bytes = *scalar;
    bytes[0] &= 248;
    bytes[31] &= 127;
    bytes[31] |= 64;
    std::array::from_fn(|w| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[8 * w..8 * w + 8]);
        u64::from_le_bytes(word)
    })
}

#[cfg(target_arch = "x86_64")]
const MASK52: u64 = (1 << 52) - 1;

/// A u-coordinate with bit 255 cleared (RFC 7748 §5, `decodeUCoordinate`) as five 52-bit
/// limbs.
#[cfg(target_arch = "x86_64")]
fn u_limbs(u: &[u8; LEN]) -> [u64; 5] {
    let mut bytes = *u;
    bytes[31] &= 127;
    let mut limbs = [0u64; 5];
    for (i, &byte) in bytes.iter().enumerate() {
        let (limb, shift) = ((8 * i) / 52, (8 * i) % 52);
        limbs[limb] |= (u64::from(byte) << shift) & MASK52;
        if shift > 44 {
            limbs[limb + 1] |= u64::from(byte) >> (52 - shift);
        }
    }
    limbs
}

/// Five limbs of a canonical element (below p < 2^255) as 32 little-endian bytes.
#[cfg(target_arch = "x86_64")]
fn limbs_bytes(limbs: &[u64; 5]) -> [u8; LEN] {
    std::array::from_fn(|i| {
        let (limb, shift) = ((8 * i) / 52, (8 * i) % 52);
        let mut value = limbs[limb] >> shift;
        if shift > 44 {
            value |= limbs[limb + 1] << (52 - shift);
        }
        value as u8
    })
}

/// Lane-major inputs transposed to `[word][lane]`.
#[cfg(target_arch = "x86_64")]
fn transpose<const N: usize>(rows: [[u64; N]; LANES]) -> [[u64; LANES]; N] {
    std::array::from_fn(|j| std::array::from_fn(|lane| rows[lane][j]))
}

#[cfg(target_arch = "x86_64")]
impl Kernel {
    /// `X25519(scalars[i], points[i])` per lane (RFC 7748 §5), each lane independent.
    #[allow(unsafe_code)]
    pub fn x25519(
        &self,
        scalars: &[[u8; LEN]; LANES],
        points: &[[u8; LEN]; LANES],
    ) -> [[u8; LEN]; LANES] {
        let k = transpose(std::array::from_fn(|lane| scalar_words(&scalars[lane])));
        let u = transpose(std::array::from_fn(|lane| u_limbs(&points[lane])));
        // SAFETY: `self` exists only if `Kernel::detect` saw avx512f and avx512ifma on this
        // CPU, the features `ladder_ifma` is compiled for; it takes references only.
        let out = unsafe { ladder_ifma(&k, &u) };
        std::array::from_fn(|lane| limbs_bytes(&std::array::from_fn(|j| out[j][lane])))
    }
}

/// The ladder on transposed inputs: clamped scalar words `[word][lane]`, u limbs
/// `[limb][lane]`; canonical result limbs `[limb][lane]`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma")]
fn ladder_ifma(k: &[[u64; LANES]; 4], u: &[[u64; LANES]; 5]) -> [[u64; LANES]; 5] {
    use core::arch::x86_64::_mm512_setzero_si512;

    use crate::ifma::{lanes, unlanes};
    use field::{add, add_a24_mul, bit_mask, canonical, cswap, invert, mul, small, sqr, sub};

    // Loops, not `map`: a `#[target_feature]` function is not a closure.
    let mut words = [_mm512_setzero_si512(); 4];
    for (word, k) in words.iter_mut().zip(k) {
        *word = lanes(*k);
    }
    let mut x1 = small(0);
    for (limb, u) in x1.iter_mut().zip(u) {
        *limb = lanes(*u);
    }
    let (mut x2, mut z2) = (small(1), small(0));
    let (mut x3, mut z3) = (x1, small(1));
    let mut swap = 0u8;
    for t in (0..255).rev() {
        let bit = bit_mask(words[t / 64], (t % 64) as u32);
        (x2, x3) = cswap(swap ^ bit, &x2, &x3);
        (z2, z3) = cswap(swap ^ bit, &z2, &z3);
        swap = bit;

        let a = add(&x2, &z2);
        let aa = sqr(&a);
        let b = sub(&x2, &z2);
        let bb = sqr(&b);
        let e = sub(&aa, &bb);
        let c = add(&x3, &z3);
        let d = sub(&x3, &z3);
        let da = mul(&d, &a);
        let cb = mul(&c, &b);
        x3 = sqr(&add(&da, &cb));
        z3 = mul(&x1, &sqr(&sub(&da, &cb)));
        x2 = mul(&aa, &bb);
        z2 = mul(&e, &add_a24_mul(&aa, &e));
    }
    (x2, _) = cswap(swap, &x2, &x3);
    (z2, _) = cswap(swap, &z2, &z3);
    let result = canonical(&mul(&x2, &invert(&z2)));
    let mut out = [[0u64; LANES]; 5];
    for (limb, v) in out.iter_mut().zip(result) {
        *limb = unlanes(v);
    }
    out
}
