//! Scalar numbers in radix 2^52 (the kernels' limbs): conversions from and to big-endian bytes,
//! and the few constant-time operations the key set-up and the CRT recombination need.
//!
//! Every function runs the same instructions for every value of its secret inputs: loops over
//! public lengths, borrows and selections computed arithmetically, never branched on. Key
//! set-up is rare, so it favours simplicity (`R² mod m` by 2·52N doublings) over speed.

use crate::ifma::LIMB_BITS;

const MASK52: u64 = (1 << LIMB_BITS) - 1;

/// `bytes` (big-endian, any leading zeros) as `limbs` limbs, or `None` if it does not fit.
/// The length check reads only the length and the value of leading bytes of public inputs;
/// for secrets the callers pass lengths that always fit.
pub fn from_be_bytes(bytes: &[u8], limbs: usize) -> Option<Vec<u64>> {
    let mut out = vec![0u64; limbs];
    for (i, &byte) in bytes.iter().rev().enumerate() {
        let bit = i * 8;
        let (limb, shift) = (bit / LIMB_BITS, bit % LIMB_BITS);
        let value = u64::from(byte);
        match out.get_mut(limb) {
            Some(slot) => *slot |= (value << shift) & MASK52,
            None if byte == 0 => continue,
            None => return None,
        }
        let spill = value >> (LIMB_BITS - shift).min(8);
        if shift + 8 > LIMB_BITS {
            match out.get_mut(limb + 1) {
                Some(slot) => *slot |= spill,
                None if spill == 0 => {}
                None => return None,
            }
        }
    }
    Some(out)
}

/// `limbs` as exactly `len` big-endian bytes (higher bits must be zero).
pub fn to_be_bytes(limbs: &[u64], len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    for (i, byte) in out.iter_mut().rev().enumerate() {
        let bit = i * 8;
        let (limb, shift) = (bit / LIMB_BITS, bit % LIMB_BITS);
        let mut value = limbs.get(limb).map_or(0, |l| l >> shift);
        if shift + 8 > LIMB_BITS {
            value |= limbs.get(limb + 1).map_or(0, |l| l << (LIMB_BITS - shift));
        }
        *byte = value as u8;
    }
    out
}

/// Big-endian bytes as 64-bit words, least significant first, `words` of them (exponents).
pub fn words_from_be_bytes(bytes: &[u8], words: usize) -> Vec<u64> {
    let mut out = vec![0u64; words];
    for (i, &byte) in bytes.iter().rev().enumerate() {
        if let Some(slot) = out.get_mut(i / 8) {
            *slot |= u64::from(byte) << (8 * (i % 8));
        }
    }
    out
}

/// `-m⁻¹ mod 2^52` for odd `m0` (Newton's iteration: each step doubles the correct bits).
pub fn mont_k0(m0: u64) -> u64 {
    let mut inv = m0; // correct to 3 bits: m0·m0 ≡ 1 (mod 8) for odd m0
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(m0.wrapping_mul(inv)));
    }
    inv.wrapping_neg() & MASK52
}

/// `x·2^shift mod m` for `x < m`, `m` odd with one spare bit in its limbs: one doubling and
/// one masked subtraction per bit.
pub fn shl_mod(x: &[u64], shift: usize, m: &[u64]) -> Vec<u64> {
    let mut v = x.to_vec();
    for _ in 0..shift {
        let mut carry = 0;
        for limb in v.iter_mut() {
            let doubled = (*limb << 1) | carry;
            carry = doubled >> LIMB_BITS;
            *limb = doubled & MASK52;
        }
        sub_if_ge(&mut v, m);
    }
    v
}

/// `x = x - m` if `x ≥ m`, chosen by a mask.
pub fn sub_if_ge(x: &mut [u64], m: &[u64]) {
    let (diff, borrow) = sub(x, m);
    let keep = borrow.wrapping_neg(); // all ones where x < m
    for (limb, d) in x.iter_mut().zip(diff) {
        *limb = (*limb & keep) | (d & !keep);
    }
}

/// `a - b` with the final borrow (0 or 1); `b` may be shorter.
fn sub(a: &[u64], b: &[u64]) -> (Vec<u64>, u64) {
    let mut out = vec![0; a.len()];
    let mut borrow = 0u64;
    for (i, slot) in out.iter_mut().enumerate() {
        let d = a[i]
            .wrapping_sub(b.get(i).copied().unwrap_or(0))
            .wrapping_sub(borrow);
        *slot = d & MASK52;
        borrow = d >> 63;
    }
    (out, borrow)
}

/// `a·b + c`, schoolbook, `a.len() + b.len()` limbs (the CRT recombination `m2 + h·q`).
pub fn mul_add(a: &[u64], b: &[u64], c: &[u64]) -> Vec<u64> {
    let mut acc = vec![0u128; a.len() + b.len() + 1];
    for (slot, &limb) in acc.iter_mut().zip(c) {
        *slot = u128::from(limb);
    }
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            acc[i + j] += u128::from(x) * u128::from(y);
        }
        // Keep every accumulator far from overflow: fold limb i's carry upwards now.
        let carry = acc[i] >> LIMB_BITS;
        acc[i] &= u128::from(MASK52);
        acc[i + 1] += carry;
    }
    let mut out = vec![0u64; acc.len()];
    let mut carry = 0u128;
    for (slot, value) in out.iter_mut().zip(acc) {
        let v = value + carry;
        *slot = (v as u64) & MASK52;
        carry = v >> LIMB_BITS;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    fn big(limbs: &[u64]) -> BigUint {
        limbs
            .iter()
            .rev()
            .fold(BigUint::default(), |acc, &l| (acc << LIMB_BITS) + l)
    }

    #[test]
    fn bytes_round_trip() {
        let bytes: Vec<u8> = (1..=128u8).collect();
        let limbs = from_be_bytes(&bytes, 20).expect("1024 bits fit in 20 limbs");
        assert_eq!(big(&limbs), BigUint::from_bytes_be(&bytes));
        assert_eq!(to_be_bytes(&limbs, 128), bytes);
        assert_eq!(from_be_bytes(&bytes, 19), None);
        assert!(from_be_bytes(&[0, 0, 1], 1).is_some());
    }

    #[test]
    fn k0_is_minus_inverse() {
        for m0 in [1u64, 3, 0xF_FFFF_FFFF_FFFF, 0x1234_5678_9ABD] {
            let k0 = mont_k0(m0);
            assert_eq!(m0.wrapping_mul(k0).wrapping_add(1) & MASK52, 0, "{m0:#x}");
        }
    }

    #[test]
    fn shl_mod_and_mul_add_match_bigint() {
        let m = from_be_bytes(&[0x7f, 0xff, 0x13, 0x57, 0x9b], 2).expect("fits");
        let x = from_be_bytes(&[0x01, 0x23, 0x45], 2).expect("fits");
        let r = shl_mod(&x, 150, &m);
        assert_eq!(big(&r), (big(&x) << 150u32) % big(&m));
        let product = mul_add(&m, &x, &r);
        assert_eq!(big(&product), big(&m) * big(&x) + big(&r));
    }
}
