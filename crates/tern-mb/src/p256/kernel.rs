//! The 8-lane IFMA part of a P-256 nonce pair: `k·G` by a fixed-base window table, its affine
//! coordinates, and `k⁻¹ mod n`, for eight independent scalars `k`.
//!
//! # Arithmetic
//!
//! Elements mod p and mod n are five 52-bit limbs per lane (`[Vec8; 5]`), multiplied by the
//! RSA kernel's almost-Montgomery product (`ifma::mul`, `R = 2^260`). Both moduli are below
//! `2^256 = R/16`, so a product of two values below `4m` is below `2m` (`ifma.rs`). Every
//! value here is kept below `2m`: sums and differences are reduced into `[0, 2m)` at once by
//! one masked subtraction (or addition) of `2m`, and products are below `2m` by the bound.
//! The canonical form (below m) is made once, on the way out.
//!
//! # Fixed-base multiplication
//!
//! `k = Σ d_w·16^w` over 64 four-bit digits. The table holds `i·16^w·G` for `i = 1…15` and
//! every `w`, affine, in Montgomery form (`table.rs`), so `k·G = Σ table[w][d_w]`: 64 mixed
//! additions, no doubling. The addition is Renes–Costello–Batina's complete mixed formula for
//! a = −3 (eprint 2015/1060, Algorithm 5): no exceptional case (doubling, the identity as
//! the accumulator) needs a branch. A zero digit has no affine entry: the addition runs
//! anyway, on zeros, and a masked blend keeps the old accumulator.
//!
//! # Constant time
//!
//! Each digit is read at a public position (`vpsrlvq` by a loop counter); each window's
//! lookup reads all 15 entries (unmasked loads, see `scan`) and keeps the lane's own with
//! a compare mask, so neither addresses nor branches depend on `k`. The inversions are Fermat's (`a^(m−2)`), fixed
//! 4-bit windows over the public exponent: the same instruction sequence for every input.

use core::arch::x86_64::{
    _mm512_and_si512, _mm512_cmpeq_epi64_mask, _mm512_mask_blend_epi64, _mm512_or_si512,
    _mm512_set1_epi64, _mm512_setzero_si512, _mm512_srlv_epi64, _mm512_test_epi64_mask,
};

use super::scalar::U256;
use super::table::{self, ModConsts, Tables, ENTRIES, LIMBS, WINDOWS};
use super::Computed;
use crate::ifma::{self, lanes, unlanes, Vec8, LANES};

/// Per-lane values in radix 2^52, `[limb][lane]`.
pub(crate) type Lanes5 = [[u64; LANES]; LIMBS];

type Fe = [Vec8; LIMBS];

/// A projective point (X : Y : Z), coordinates in Montgomery form.
type Point = [Fe; 3];

/// The kernel's output per lane: affine `x`, `y` of `k·G` (mod p) and `k⁻¹ mod n`, all
/// canonical, `[limb][lane]`.
#[derive(Debug)]
pub(crate) struct Raw {
    pub(crate) x: Lanes5,
    pub(crate) y: Lanes5,
    pub(crate) kinv: Lanes5,
}

impl crate::ifma::Kernel {
    /// `x`, `y` of `k·G` and `k⁻¹ mod n` for eight scalars `1 ≤ k < n`, each canonical.
    #[allow(unsafe_code)]
    pub(crate) fn p256_nonces(&self, ks: &[U256; LANES], t: &Tables) -> [Computed; LANES] {
        let words: [[u64; LANES]; 4] = std::array::from_fn(|w| std::array::from_fn(|l| ks[l][w]));
        let per_lane: [[u64; LIMBS]; LANES] = std::array::from_fn(|l| table::limbs(&ks[l]));
        let limbs: Lanes5 = std::array::from_fn(|j| std::array::from_fn(|l| per_lane[l][j]));
        // SAFETY: `self` exists only if `Kernel::detect` saw avx512f and avx512ifma on this
        // CPU, the features `nonces_ifma` is compiled for; it takes references only.
        let raw = unsafe { nonces_ifma(&words, &limbs, t) };
        let lane = |v: &Lanes5, l: usize| table::words(&std::array::from_fn(|j| v[j][l]));
        std::array::from_fn(|l| Computed {
            x: lane(&raw.x, l),
            y: lane(&raw.y, l),
            kinv: lane(&raw.kinv, l),
        })
    }
}

/// A modulus in the registers.
struct Md {
    m: Fe,
    two_m: Fe,
    k0: Vec8,
    one: Fe,
}

/// The nonce computation on transposed inputs: `k` as 64-bit words `[word][lane]` and as
/// limbs `[limb][lane]`, each lane `1 ≤ k < n`.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn nonces_ifma(words: &[[u64; LANES]; 4], limbs: &Lanes5, t: &Tables) -> Raw {
    let field = md(&t.field);
    let order = md(&t.order);
    let mut k = [_mm512_setzero_si512(); 4];
    for (v, w) in k.iter_mut().zip(words) {
        *v = lanes(*w);
    }
    let [x, y, z] = base_mul(&k, t, &field);
    let zinv = pow_public(&z, &t.field.exp, &field);
    let x = canonical(&mul(&x, &zinv, &field), &field);
    let y = canonical(&mul(&y, &zinv, &field), &field);
    let k_mont = mul(&load(limbs), &broadcast(&t.order.r2), &order);
    let kinv = canonical(&pow_public(&k_mont, &t.order.exp, &order), &order);
    Raw {
        x: store(&x),
        y: store(&y),
        kinv: store(&kinv),
    }
}

/// `Σ_w table[w][digit_w]` per lane (see the module docs).
#[target_feature(enable = "avx512f,avx512ifma")]
fn base_mul(k: &[Vec8; 4], t: &Tables, field: &Md) -> Point {
    let zero = [_mm512_setzero_si512(); LIMBS];
    let b = broadcast(&t.b);
    let mut acc: Point = [zero, field.one, zero];
    for w in 0..WINDOWS {
        let digit = nibble(k, w);
        let (x, y) = scan(&t.base[w * ENTRIES..(w + 1) * ENTRIES], digit);
        let sum = add_mixed(&acc, &x, &y, &b, field);
        let nonzero = _mm512_test_epi64_mask(digit, digit);
        for (a, s) in acc.iter_mut().zip(&sum) {
            for j in 0..LIMBS {
                a[j] = _mm512_mask_blend_epi64(nonzero, a[j], s[j]);
            }
        }
    }
    acc
}

/// Digit `w` (public) of every lane's scalar.
#[target_feature(enable = "avx512f,avx512ifma")]
fn nibble(k: &[Vec8; 4], w: usize) -> Vec8 {
    let shifted = _mm512_srlv_epi64(k[w / 16], _mm512_set1_epi64(4 * (w % 16) as i64));
    _mm512_and_si512(shifted, _mm512_set1_epi64(15))
}

/// Entry `digit − 1` of one window per lane (zeros for digit 0): every entry is read.
///
/// The selection is an AND with an all-ones-or-zero vector, not a masked blend: given
/// `blend(hit, out, broadcast(entry))`, the compiler emits a *masked* broadcast load
/// (`vpbroadcastq mem, zmm{k}`), and a load whose mask is all zero (no lane wants that
/// entry) need not touch memory: the cache lines read would depend on the digits. An
/// unmasked broadcast ANDed with the mask reads every entry for every window.
#[target_feature(enable = "avx512f,avx512ifma")]
fn scan(window: &[[u64; 2 * LIMBS]], digit: Vec8) -> (Fe, Fe) {
    let zero = _mm512_setzero_si512();
    let ones = _mm512_set1_epi64(-1);
    let mut out = [zero; 2 * LIMBS];
    for (i, entry) in window.iter().enumerate() {
        let hit = _mm512_cmpeq_epi64_mask(digit, _mm512_set1_epi64(i as i64 + 1));
        // Opaque to the optimizer, which otherwise folds the AND and OR back into a
        // merge-masked `vporq mem{1to8}` (masked again); with it, `vpternlogq` or
        // `vpandq` read each entry unmasked.
        let keep = core::hint::black_box(_mm512_mask_blend_epi64(hit, zero, ones));
        for (o, &limb) in out.iter_mut().zip(entry) {
            let value = _mm512_and_si512(_mm512_set1_epi64(limb as i64), keep);
            *o = _mm512_or_si512(*o, value);
        }
    }
    let mut x = [_mm512_setzero_si512(); LIMBS];
    let mut y = x;
    x.copy_from_slice(&out[..LIMBS]);
    y.copy_from_slice(&out[LIMBS..]);
    (x, y)
}

/// `p + (x2, y2)` for a projective `p` and an affine point: Renes–Costello–Batina
/// Algorithm 5 (a = −3), 13 products; complete for every `p`, the identity included.
#[target_feature(enable = "avx512f,avx512ifma")]
fn add_mixed(p: &Point, x2: &Fe, y2: &Fe, b: &Fe, f: &Md) -> Point {
    let [x1, y1, z1] = p;
    let xx = mul(x1, x2, f);
    let yy = mul(y1, y2, f);
    let xy = sub(
        &mul(&add(x1, y1, f), &add(x2, y2, f), f),
        &add(&xx, &yy, f),
        f,
    );
    let yz = add(&mul(y2, z1, f), y1, f);
    let xz = add(&mul(x2, z1, f), x1, f);
    let bz3 = triple(&sub(&xz, &mul(b, z1, f), f), f);
    let yy_minus = sub(&yy, &bz3, f);
    let yy_plus = add(&yy, &bz3, f);
    let z3 = triple(z1, f);
    let bxz3 = triple(&sub(&mul(b, &xz, f), &add(&z3, &xx, f), f), f);
    let xx3 = sub(&triple(&xx, f), &z3, f);
    [
        sub(&mul(&yy_plus, &xy, f), &mul(&yz, &bxz3, f), f),
        add(&mul(&yy_plus, &yy_minus, f), &mul(&xx3, &bxz3, f), f),
        add(&mul(&yy_minus, &yz, f), &mul(&xy, &xx3, f), f),
    ]
}

/// `a^e` (Montgomery form) for a public exponent `e`: fixed 4-bit windows, the table
/// indexed by the exponent's digits (public), so the sequence is the same for every `a`.
#[target_feature(enable = "avx512f,avx512ifma")]
fn pow_public(a: &Fe, e: &[u64; 4], f: &Md) -> Fe {
    let mut table = [f.one; 16];
    table[1] = *a;
    for i in 2..16 {
        table[i] = mul(&table[i - 1], a, f);
    }
    let mut acc = f.one;
    for w in (0..64).rev() {
        for _ in 0..4 {
            acc = mul(&acc, &acc, f);
        }
        let digit = (e[w / 16] >> (4 * (w % 16))) & 15;
        if digit != 0 {
            acc = mul(&acc, &table[digit as usize], f);
        }
    }
    acc
}

/// Out of Montgomery form and below m.
#[target_feature(enable = "avx512f,avx512ifma")]
fn canonical(a: &Fe, f: &Md) -> Fe {
    let mut unit = [_mm512_setzero_si512(); LIMBS];
    unit[0] = _mm512_set1_epi64(1);
    // a·1·R⁻¹ ≤ m for a < 2m (see ifma.rs); one masked subtraction leaves it below m.
    let mut out = mul(a, &unit, f);
    ifma::sub_if_ge(&mut out, &f.m);
    out
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn mul(a: &Fe, b: &Fe, f: &Md) -> Fe {
    let mut out = [_mm512_setzero_si512(); LIMBS];
    ifma::mul(&mut out, a, b, &f.m, f.k0);
    out
}

/// `a + b`, below 2m for `a, b < 2m`.
#[target_feature(enable = "avx512f,avx512ifma")]
fn add(a: &Fe, b: &Fe, f: &Md) -> Fe {
    let mut sum = ifma::add(a, b);
    ifma::sub_if_ge(&mut sum, &f.two_m);
    sum
}

/// `a − b (mod m)`, below 2m for `a, b < 2m`.
#[target_feature(enable = "avx512f,avx512ifma")]
fn sub(a: &Fe, b: &Fe, f: &Md) -> Fe {
    ifma::sub_mod(a, b, &f.two_m)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn triple(a: &Fe, f: &Md) -> Fe {
    add(&add(a, a, f), a, f)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn md(c: &ModConsts) -> Md {
    Md {
        m: broadcast(&c.m),
        two_m: broadcast(&c.two_m),
        k0: _mm512_set1_epi64(c.k0 as i64),
        one: broadcast(&c.one),
    }
}

/// The same value in every lane.
#[target_feature(enable = "avx512f,avx512ifma")]
fn broadcast(x: &[u64; LIMBS]) -> Fe {
    let mut out = [_mm512_setzero_si512(); LIMBS];
    for (o, &limb) in out.iter_mut().zip(x) {
        *o = _mm512_set1_epi64(limb as i64);
    }
    out
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn load(x: &Lanes5) -> Fe {
    let mut out = [_mm512_setzero_si512(); LIMBS];
    for (o, limb) in out.iter_mut().zip(x) {
        *o = lanes(*limb);
    }
    out
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn store(x: &Fe) -> Lanes5 {
    let mut out = [[0u64; LANES]; LIMBS];
    for (o, v) in out.iter_mut().zip(x) {
        *o = unlanes(*v);
    }
    out
}
