//! Scalar (one lane, 64-bit words) arithmetic modulo P-256's p and n: what a signature does
//! per message (`s = k⁻¹·(z + r·d) mod n`) and the fault check of each nonce pair, which runs
//! on this code rather than the IFMA kernel's so that the two implementations check each
//! other.
//!
//! Numbers are four 64-bit words, least significant first. Multiplication is Montgomery's
//! (CIOS, `R = 2^256`) with a masked final subtraction; additions and subtractions select
//! their results with masks; comparisons return masks. No branch or address depends on a
//! value: every loop runs over the four words.

/// A number below 2^256, least significant word first.
pub(crate) type U256 = [u64; 4];

/// P-256's field prime p = 2^256 − 2^224 + 2^192 + 2^96 − 1.
pub(crate) const P: U256 = [
    0xffff_ffff_ffff_ffff,
    0x0000_0000_ffff_ffff,
    0x0000_0000_0000_0000,
    0xffff_ffff_0000_0001,
];

/// P-256's group order n.
pub(crate) const N: U256 = [
    0xf3b9_cac2_fc63_2551,
    0xbce6_faad_a717_9e84,
    0xffff_ffff_ffff_ffff,
    0xffff_ffff_0000_0000,
];

/// The curve's `b` (y² = x³ − 3x + b).
pub(crate) const B: U256 = [
    0x3bce_3c3e_27d2_604b,
    0x651d_06b0_cc53_b0f6,
    0xb3eb_bd55_7698_86bc,
    0x5ac6_35d8_aa3a_93e7,
];

/// A modulus and its Montgomery constants, computed at compile time.
#[derive(Debug)]
pub(crate) struct Modulus {
    pub(crate) m: U256,
    /// `−m⁻¹ mod 2^64`.
    k0: u64,
    /// `R² mod m`.
    r2: U256,
}

/// Arithmetic modulo p.
pub(crate) static FIELD: Modulus = Modulus::new(P);
/// Arithmetic modulo n.
pub(crate) static ORDER: Modulus = Modulus::new(N);

impl Modulus {
    /// The constants of an odd `m` above 2^255.
    const fn new(m: U256) -> Self {
        let mut inv = m[0]; // correct to 3 bits for odd m
        let mut i = 0;
        while i < 6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(inv)));
            i += 1;
        }
        // R² mod m by 512 doublings of 1 (m > 2^255, so 1 and each value stay below m).
        let mut r2 = [1, 0, 0, 0];
        let mut i = 0;
        while i < 512 {
            r2 = add_mod_const(&r2, &r2, &m);
            i += 1;
        }
        Self {
            m,
            k0: inv.wrapping_neg(),
            r2,
        }
    }

    /// `a·b·R⁻¹ mod m` for `a, b < m`, fully reduced.
    pub(crate) fn mul(&self, a: &U256, b: &U256) -> U256 {
        // CIOS: t holds up to 4 words plus two carry words.
        let mut t = [0u64; 6];
        for &ai in a {
            let mut carry = 0u128;
            for j in 0..4 {
                let v = u128::from(t[j]) + u128::from(ai) * u128::from(b[j]) + carry;
                t[j] = v as u64;
                carry = v >> 64;
            }
            let v = u128::from(t[4]) + carry;
            t[4] = v as u64;
            t[5] = (v >> 64) as u64;

            let q = t[0].wrapping_mul(self.k0);
            let v = u128::from(t[0]) + u128::from(q) * u128::from(self.m[0]);
            let mut carry = v >> 64;
            for j in 1..4 {
                let v = u128::from(t[j]) + u128::from(q) * u128::from(self.m[j]) + carry;
                t[j - 1] = v as u64;
                carry = v >> 64;
            }
            let v = u128::from(t[4]) + carry;
            t[3] = v as u64;
            t[4] = t[5] + (v >> 64) as u64;
        }
        // t < 2m: subtract m unless that borrows past the fifth word.
        let (diff, borrow) = sub_words(&[t[0], t[1], t[2], t[3]], &self.m);
        // t < m exactly when the high word is zero and the subtraction borrowed.
        let under = (borrow as u64) & !t[4] & 1;
        select(under.wrapping_neg(), &diff, &[t[0], t[1], t[2], t[3]])
    }

    /// `a·R mod m` (into Montgomery form) for `a < m`.
    pub(crate) fn to_mont(&self, a: &U256) -> U256 {
        self.mul(a, &self.r2)
    }

    /// `a·R⁻¹ mod m` (out of Montgomery form).
    #[cfg(test)]
    pub(crate) fn leave_mont(&self, a: &U256) -> U256 {
        self.mul(a, &[1, 0, 0, 0])
    }

    /// `a + b mod m` for `a, b < m`.
    pub(crate) fn add(&self, a: &U256, b: &U256) -> U256 {
        add_mod_const(a, b, &self.m)
    }

    /// `a − b mod m` for `a, b < m`.
    pub(crate) fn sub(&self, a: &U256, b: &U256) -> U256 {
        let (diff, borrow) = sub_words(a, b);
        let (wrapped, _) = add_words(&diff, &self.m);
        select((borrow as u64).wrapping_neg(), &diff, &wrapped)
    }

    /// `a mod m` for `a < 2m` (e.g. any 256-bit number: m > 2^255).
    pub(crate) fn reduce_once(&self, a: &U256) -> U256 {
        let (diff, borrow) = sub_words(a, &self.m);
        select((borrow as u64).wrapping_neg(), &diff, a)
    }
}

/// `a + b mod m` for `a, b < m` (const: also builds the constants).
const fn add_mod_const(a: &U256, b: &U256, m: &U256) -> U256 {
    let (sum, carry) = add_words(a, b);
    let (diff, borrow) = sub_words(&sum, m);
    // Keep the sum when it is below m: no carry out and the subtraction borrowed.
    let keep = (!carry & borrow) as u64;
    select(keep.wrapping_neg(), &diff, &sum)
}

const fn add_words(a: &U256, b: &U256) -> (U256, bool) {
    let mut out = [0u64; 4];
    let mut carry = false;
    let mut i = 0;
    while i < 4 {
        let (s1, c1) = a[i].overflowing_add(b[i]);
        let (s2, c2) = s1.overflowing_add(carry as u64);
        out[i] = s2;
        carry = c1 | c2;
        i += 1;
    }
    (out, carry)
}

const fn sub_words(a: &U256, b: &U256) -> (U256, bool) {
    let mut out = [0u64; 4];
    let mut borrow = false;
    let mut i = 0;
    while i < 4 {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        out[i] = d2;
        borrow = b1 | b2;
        i += 1;
    }
    (out, borrow)
}

/// `if_set` where `mask` is all ones, `if_clear` where it is zero.
const fn select(mask: u64, if_clear: &U256, if_set: &U256) -> U256 {
    let mut out = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        out[i] = (if_set[i] & mask) | (if_clear[i] & !mask);
        i += 1;
    }
    out
}

/// All ones if `a == b`, else zero.
pub(crate) fn eq_mask(a: &U256, b: &U256) -> u64 {
    let diff = a.iter().zip(b).fold(0u64, |acc, (x, y)| acc | (x ^ y));
    // diff | −diff has its top bit set exactly when diff ≠ 0.
    ((diff | diff.wrapping_neg()) >> 63).wrapping_sub(1)
}

/// All ones if `a < b`, else zero.
pub(crate) fn lt_mask(a: &U256, b: &U256) -> u64 {
    (sub_words(a, b).1 as u64).wrapping_neg()
}

/// Big-endian bytes as words.
pub(crate) fn from_be(bytes: &[u8; 32]) -> U256 {
    std::array::from_fn(|w| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[32 - 8 * (w + 1)..32 - 8 * w]);
        u64::from_be_bytes(word)
    })
}

/// Words as big-endian bytes.
pub(crate) fn to_be(words: &U256) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (w, word) in words.iter().enumerate() {
        out[32 - 8 * (w + 1)..32 - 8 * w].copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use num_bigint::BigUint;

    use super::*;

    fn big(a: &U256) -> BigUint {
        BigUint::from_bytes_be(&to_be(a))
    }

    fn words(x: &BigUint) -> U256 {
        let bytes = x.to_bytes_be();
        let mut padded = [0u8; 32];
        padded[32 - bytes.len()..].copy_from_slice(&bytes);
        from_be(&padded)
    }

    #[test]
    fn montgomery_matches_bigint() {
        for modulus in [&FIELD, &ORDER] {
            let m = big(&modulus.m);
            let r = BigUint::from(1u8) << 256u32;
            let samples = [
                BigUint::from(0u8),
                BigUint::from(1u8),
                &m - 1u8,
                &m - 2u8,
                (&m >> 1u32) + 12345u32,
                BigUint::from(0xdead_beef_u64) << 190u32,
            ];
            for a in &samples {
                for b in &samples {
                    let (wa, wb) = (words(a), words(b));
                    let product = modulus.mul(&modulus.to_mont(&wa), &wb);
                    assert_eq!(modulus.leave_mont(&modulus.to_mont(&wa)), wa);
                    assert_eq!(big(&product), a * b % &m);
                    assert_eq!(big(&modulus.mul(&wa, &wb)) * &r % &m, a * b % &m);
                    assert_eq!(big(&modulus.add(&wa, &wb)), (a + b) % &m);
                    assert_eq!(big(&modulus.sub(&wa, &wb)), (a + &m - b) % &m);
                }
            }
            let top = [u64::MAX; 4];
            assert_eq!(big(&modulus.reduce_once(&top)), big(&top) % &m);
        }
    }

    #[test]
    fn masks() {
        assert_eq!(eq_mask(&N, &N), u64::MAX);
        assert_eq!(eq_mask(&N, &P), 0);
        assert_eq!(lt_mask(&N, &P), u64::MAX);
        assert_eq!(lt_mask(&P, &N), 0);
        assert_eq!(lt_mask(&N, &N), 0);
        assert_eq!(from_be(&to_be(&B)), B);
    }
}
