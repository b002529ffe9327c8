//! Arithmetic modulo p = 2^255 − 19 for eight lanes at once, in radix 2^52 on AVX-512 IFMA.
//!
//! # Representation
//!
//! An element is five limbs of 52 bits (`[Vec8; 5]`, limb `j` of all eight lanes in vector
//! `j`), value `Σ f_j·2^(52j)`, 260 bits of room for 255-bit numbers. Every function returns
//! *loosely reduced* elements: limbs 0–3 below 2^52, limb 4 below 2^48 (so the value is below
//! 2^256, but not necessarily below p). That is exactly what `vpmadd52luq`/`vpmadd52huq`
//! need: they read only the low 52 bits of each operand, so every limb fed to a product must
//! be below 2^52, which is why additions and subtractions propagate their carries at once.
//!
//! # Products
//!
//! `mul` sums the 25 low and 25 high halves of the limb products into ten 64-bit
//! accumulators `c_0 … c_9` (position `k` gathers at most five low and five high halves:
//! below 10·2^52 < 2^56). Position `k ≥ 5` weighs `2^(52k) = 2^260·2^(52(k−5))`, and
//! `2^260 = 2^5·2^255 ≡ 2^5·19 = 608 (mod p)`, so it folds back as `608·c_k` at `k − 5`:
//! each high accumulator is split into its low 52 bits `l` and the rest `t < 16`, and
//! `608·l` is added as a low half at `k − 5` and a high half at `k − 4` (IFMA again),
//! `608·t` (which weighs one limb more) as a low half at `k − 4`; what lands on position 5
//! (from `c_9`) is below 2^15 and folds once more. The five positions are then below 2^57
//! and `reduce` brings them back to loose form.
//!
//! `reduce` first moves the bits of limb 4 at and above 2^47 (i.e. above 2^255) to limb 0
//! times 19, then carries limb 0 into 1, 1 into 2, … 3 into 4, in that order: the carries
//! into limb 4 are small (below 2^6), so limb 4 ends below 2^48 and every other limb below
//! 2^52, with no second pass.
//!
//! # Constant time
//!
//! Straight-line vector code: no branch, no table, no data-dependent address; IFMA, add,
//! subtract, shift, AND and blend run in data-independent time.

use core::arch::x86_64::{
    __mmask8, _mm512_add_epi64, _mm512_and_si512, _mm512_madd52hi_epu64, _mm512_madd52lo_epu64,
    _mm512_mask_blend_epi64, _mm512_set1_epi64, _mm512_setzero_si512, _mm512_srli_epi64,
    _mm512_sub_epi64, _mm512_test_epi64_mask,
};

use crate::ifma::Vec8;

/// One field element per lane.
pub type Fe = [Vec8; 5];

const MASK52: i64 = (1 << 52) - 1;
const MASK47: i64 = (1 << 47) - 1;

/// 2^260 mod p.
const FOLD: i64 = 608;

/// (A − 2)/4 for curve25519 (RFC 7748 §5).
const A24: i64 = 121_665;

/// 2p in limbs: added before a subtraction so that no limb goes negative (limbs of a loose
/// subtrahend are at most 2^52 − 1, and 2^48 − 1 for limb 4).
const TWO_P: [i64; 5] = [
    (1 << 53) - 38,
    (1 << 53) - 2,
    (1 << 53) - 2,
    (1 << 53) - 2,
    (1 << 48) - 2,
];

/// The element `v` (below 2^52) in every lane.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn small(v: u64) -> Fe {
    let zero = _mm512_setzero_si512();
    [_mm512_set1_epi64(v as i64), zero, zero, zero, zero]
}

/// Loose form from limbs below 2^57 (see the module docs).
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
fn reduce(mut r: Fe) -> Fe {
    let mask = _mm512_set1_epi64(MASK52);
    let top = _mm512_srli_epi64::<47>(r[4]);
    r[4] = _mm512_and_si512(r[4], _mm512_set1_epi64(MASK47));
    r[0] = _mm512_madd52lo_epu64(r[0], top, _mm512_set1_epi64(19));
    for j in 0..4 {
        let carry = _mm512_srli_epi64::<52>(r[j]);
        r[j] = _mm512_and_si512(r[j], mask);
        r[j + 1] = _mm512_add_epi64(r[j + 1], carry);
    }
    r
}

/// Folds the ten product positions back to five (below 2^57 each) and reduces.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
fn fold(c: [Vec8; 10]) -> Fe {
    let mask = _mm512_set1_epi64(MASK52);
    let fold = _mm512_set1_epi64(FOLD);
    let mut r = [c[0], c[1], c[2], c[3], c[4]];
    let mut over = _mm512_setzero_si512();
    for k in 0..5 {
        let low = _mm512_and_si512(c[k + 5], mask);
        let rest = _mm512_srli_epi64::<52>(c[k + 5]);
        r[k] = _mm512_madd52lo_epu64(r[k], low, fold);
        if k < 4 {
            r[k + 1] = _mm512_madd52hi_epu64(r[k + 1], low, fold);
            r[k + 1] = _mm512_madd52lo_epu64(r[k + 1], rest, fold);
        } else {
            over = _mm512_madd52hi_epu64(over, low, fold);
            over = _mm512_madd52lo_epu64(over, rest, fold);
        }
    }
    r[0] = _mm512_madd52lo_epu64(r[0], over, fold);
    reduce(r)
}

/// `a·b`.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn mul(a: &Fe, b: &Fe) -> Fe {
    let mut c = [_mm512_setzero_si512(); 10];
    for i in 0..5 {
        for j in 0..5 {
            c[i + j] = _mm512_madd52lo_epu64(c[i + j], a[i], b[j]);
            c[i + j + 1] = _mm512_madd52hi_epu64(c[i + j + 1], a[i], b[j]);
        }
    }
    fold(c)
}

/// `a²`: each cross product once, doubled, then the squares (15 limb products, not 25).
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn sqr(a: &Fe) -> Fe {
    let mut c = [_mm512_setzero_si512(); 10];
    for i in 0..5 {
        for j in i + 1..5 {
            c[i + j] = _mm512_madd52lo_epu64(c[i + j], a[i], a[j]);
            c[i + j + 1] = _mm512_madd52hi_epu64(c[i + j + 1], a[i], a[j]);
        }
    }
    for k in c.iter_mut() {
        *k = _mm512_add_epi64(*k, *k);
    }
    for i in 0..5 {
        c[2 * i] = _mm512_madd52lo_epu64(c[2 * i], a[i], a[i]);
        c[2 * i + 1] = _mm512_madd52hi_epu64(c[2 * i + 1], a[i], a[i]);
    }
    fold(c)
}

/// `a` squared `n` times (a public count).
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn sqr_n(a: &Fe, n: usize) -> Fe {
    let mut x = *a;
    for _ in 0..n {
        x = sqr(&x);
    }
    x
}

/// `a + b` (limbs below 2^53 before the carries).
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn add(a: &Fe, b: &Fe) -> Fe {
    let mut r = *a;
    for j in 0..5 {
        r[j] = _mm512_add_epi64(a[j], b[j]);
    }
    reduce(r)
}

/// `a − b`, as `a + 2p − b` (limbs positive and below 2^54 before the carries).
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn sub(a: &Fe, b: &Fe) -> Fe {
    let mut r = *a;
    for j in 0..5 {
        let biased = _mm512_add_epi64(a[j], _mm512_set1_epi64(TWO_P[j]));
        r[j] = _mm512_sub_epi64(biased, b[j]);
    }
    reduce(r)
}

/// `aa + a24·e`: the ladder's `AA + a24·E`, the small product accumulated into `aa` directly.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn add_a24_mul(aa: &Fe, e: &Fe) -> Fe {
    let a24 = _mm512_set1_epi64(A24);
    let mut r = *aa;
    let mut over = _mm512_setzero_si512();
    for j in 0..5 {
        r[j] = _mm512_madd52lo_epu64(r[j], e[j], a24);
        if j < 4 {
            r[j + 1] = _mm512_madd52hi_epu64(r[j + 1], e[j], a24);
        } else {
            over = _mm512_madd52hi_epu64(over, e[j], a24);
        }
    }
    // `over` (below 2^17) sits at 2^260.
    r[0] = _mm512_madd52lo_epu64(r[0], over, _mm512_set1_epi64(FOLD));
    reduce(r)
}

/// `a` where `swap` is clear and `b` where it is set, per lane; and the other one.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn cswap(swap: __mmask8, a: &Fe, b: &Fe) -> (Fe, Fe) {
    let mut x = *a;
    let mut y = *b;
    for j in 0..5 {
        x[j] = _mm512_mask_blend_epi64(swap, a[j], b[j]);
        y[j] = _mm512_mask_blend_epi64(swap, b[j], a[j]);
    }
    (x, y)
}

/// `a^(p−2) = a⁻¹` (0 for 0) by a fixed chain of 254 squarings and 11 multiplications:
/// the same instructions for every input.
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn invert(a: &Fe) -> Fe {
    // Names give the exponent: `e_n_m` = a^(2^n − 2^m).
    let a2 = sqr(a);
    let a9 = mul(&sqr_n(&a2, 2), a);
    let a11 = mul(&a9, &a2);
    let e_5_0 = mul(&sqr(&a11), &a9); // a^31
    let e_10_0 = mul(&sqr_n(&e_5_0, 5), &e_5_0);
    let e_20_0 = mul(&sqr_n(&e_10_0, 10), &e_10_0);
    let e_40_0 = mul(&sqr_n(&e_20_0, 20), &e_20_0);
    let e_50_0 = mul(&sqr_n(&e_40_0, 10), &e_10_0);
    let e_100_0 = mul(&sqr_n(&e_50_0, 50), &e_50_0);
    let e_200_0 = mul(&sqr_n(&e_100_0, 100), &e_100_0);
    let e_250_0 = mul(&sqr_n(&e_200_0, 50), &e_50_0);
    // (2^250 − 1)·2^5 + 11 = 2^255 − 21 = p − 2.
    mul(&sqr_n(&e_250_0, 5), &a11)
}

/// The canonical representative (below p) of a loose element.
#[target_feature(enable = "avx512f,avx512ifma")]
pub fn canonical(a: &Fe) -> Fe {
    // One more reduce: limb 4 below 2^47 + 2^6, so the value is below 2^255 + 2^214 < 2p.
    let x = reduce(*a);
    // x ≥ p exactly when x + 19 reaches 2^255; then x − p = x + 19 − 2^255.
    let mut y = x;
    y[0] = _mm512_add_epi64(y[0], _mm512_set1_epi64(19));
    let mask = _mm512_set1_epi64(MASK52);
    for j in 0..4 {
        let carry = _mm512_srli_epi64::<52>(y[j]);
        y[j] = _mm512_and_si512(y[j], mask);
        y[j + 1] = _mm512_add_epi64(y[j + 1], carry);
    }
    let ge = _mm512_test_epi64_mask(y[4], _mm512_set1_epi64(1 << 47));
    y[4] = _mm512_and_si512(y[4], _mm512_set1_epi64(MASK47));
    let mut out = x;
    for j in 0..5 {
        out[j] = _mm512_mask_blend_epi64(ge, x[j], y[j]);
    }
    out
}

/// Per lane, whether bit `bit` (public, below 64) of `word` is set: the ladder's swap mask.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
pub fn bit_mask(word: Vec8, bit: u32) -> __mmask8 {
    _mm512_test_epi64_mask(word, _mm512_set1_epi64(1i64.wrapping_shl(bit)))
}
