//! The AVX-512 IFMA kernels: eight independent modular exponentiations at once.
//!
//! # Layout
//!
//! A number is held in radix 2^52, `N` limbs, least significant first. Eight numbers (one per
//! 64-bit lane, each with its own modulus) travel together: `[Vec8; N]` holds limb `j` of all
//! eight lanes in register `j`. `vpmadd52luq`/`vpmadd52huq` multiply the low 52 bits of two
//! lanes and add the low or high 52 bits of the 104-bit product to a 64-bit accumulator, so a
//! limb product never leaves its lane and the 12 spare bits of each accumulator absorb carries
//! for a whole multiplication (below).
//!
//! # Montgomery multiplication ("almost Montgomery", AMM)
//!
//! With `R = 2^(52N)` and odd moduli `m < R/16` (16·m < R holds for the CRT halves of RSA
//! keys this crate accepts: 1024-bit halves in 20 limbs, 1536 in 30, 2048 in 40), `mul`
//! returns `a·b·R⁻¹ mod m` *plus possibly one m*: for `a·b < 16m²` the result `(a·b + Q·m)/R`
//! is below `a·b/R + m < 2m`. Results are never reduced between multiplications; only the
//! final conversion out of Montgomery form subtracts `m` (masked, `sub_if_ge`).
//!
//! The product is accumulated operand-scanning, one limb of `a` per step, with the reduction
//! interleaved: per step each accumulator gains at most four 52-bit halves, so after `N ≤ 40`
//! steps it holds less than `4·40·2^52 < 2^60`: no carry is propagated until the end
//! (`normalize`).
//!
//! Squarings (five of every six multiplications of the exponentiation) of more than
//! `SQR_FROM_LIMBS` limbs go through `sqr`: the full square with each cross product
//! computed once and doubled, then the same reduction, `3N²` multiplies instead of `4N²`.
//!
//! # Constant time
//!
//! No branch and no address depends on a lane's data: the loops run over public sizes, the
//! exponent is read at public bit positions, the window table is scanned in full for every
//! lookup with a per-lane compare mask turned into an AND (`select`: unmasked loads of every
//! entry), and the final subtraction is a masked blend. IFMA, AND, add, shift, compare and blend instructions run in data-independent time.
//!
//! # Safety
//!
//! Every function here is compiled with `avx512f,avx512ifma` enabled; the intrinsics they call
//! take no pointers, so they are safe inside. Only the entry point, [`Kernel::mod_exp`] and
//! friends, call into that code from a context without the features, and they can be reached
//! only through a [`Kernel`], which exists only once `is_x86_feature_detected!` has seen both
//! features on the running CPU.

use core::arch::x86_64::{
    __m512i, _mm256_extract_epi64, _mm512_add_epi64, _mm512_and_si512, _mm512_cmpeq_epi64_mask,
    _mm512_extracti64x4_epi64, _mm512_madd52hi_epu64, _mm512_madd52lo_epu64,
    _mm512_mask_blend_epi64, _mm512_or_si512, _mm512_set1_epi64, _mm512_set_epi64,
    _mm512_setzero_si512, _mm512_srli_epi64, _mm512_sub_epi64,
};

/// Eight lanes of one limb.
pub(crate) type Vec8 = __m512i;

/// Lanes processed together.
pub const LANES: usize = 8;

/// Bits per limb.
pub const LIMB_BITS: usize = 52;

/// Exponent bits per window of the fixed-window exponentiation: a 32-entry table, 1/5 of a
/// multiplication per exponent bit, a table that fits in L1 (32 × 20 limbs × 64 bytes = 40 KiB
/// for 1024-bit moduli). Public, and the same for every lane.
pub const WINDOW: usize = 5;

const MASK52: u64 = (1 << LIMB_BITS) - 1;

/// Numbers of eight lanes in radix 2^52, limb-major: `[limb][lane]`.
pub type Lanes<const N: usize> = [[u64; LANES]; N];

/// Proof that the running CPU has AVX-512F and AVX-512 IFMA.
#[derive(Debug, Clone, Copy)]
pub struct Kernel(());

/// One batch of eight exponentiations `base^exp mod m`, one per lane, for `N`-limb moduli.
#[derive(Debug, Clone)]
pub struct ExpJob<'a, const N: usize> {
    /// The odd moduli, each below `2^(52N-4)`.
    pub modulus: &'a Lanes<N>,
    /// `-m⁻¹ mod 2^52` per lane.
    pub k0: [u64; LANES],
    /// `R² mod m` and `R³ mod m`, fully reduced.
    pub r2: &'a Lanes<N>,
    pub r3: &'a Lanes<N>,
    /// The base as `lo + hi·R`, both below `R` (so bases up to `R²`, e.g. a full RSA input).
    pub base_lo: &'a Lanes<N>,
    pub base_hi: &'a Lanes<N>,
    /// The exponents, 64-bit words least significant first, `[word][lane]`; bits past `52N`
    /// are ignored.
    pub exponent: &'a [[u64; LANES]],
}

impl Kernel {
    /// The kernel, if this CPU can run it.
    pub fn detect() -> Option<Self> {
        let ifma = is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512ifma");
        ifma.then_some(Kernel(()))
    }

    /// `base^exp mod m` per lane, fully reduced (`< m`).
    #[allow(unsafe_code)]
    pub fn mod_exp<const N: usize>(&self, job: &ExpJob<'_, N>) -> Lanes<N> {
        // SAFETY: `self` exists only if `detect` saw avx512f and avx512ifma on this CPU, the
        // features `mod_exp_ifma` is compiled for; it takes references only.
        unsafe { mod_exp_ifma(job) }
    }

    /// Garner's `h = (m1 - m2)·qInv mod p` per lane, from `m1 < p`, `m2 < q < 2p` and
    /// `qinv_r = qInv·R mod p`; fully reduced.
    #[allow(unsafe_code)]
    pub fn garner_h<const N: usize>(
        &self,
        m1: &Lanes<N>,
        m2: &Lanes<N>,
        p: &Lanes<N>,
        k0: [u64; LANES],
        qinv_r: &Lanes<N>,
    ) -> Lanes<N> {
        // SAFETY: as in `mod_exp`: the token proves the CPU features; references only.
        unsafe { garner_h_ifma(m1, m2, p, k0, qinv_r) }
    }

    /// `table[idx]` per lane by the exponentiation's masked full scan (for the timing test
    /// of the scan alone: examples/ct.rs).
    #[allow(unsafe_code)]
    pub fn lookup<const N: usize>(&self, table: &[Lanes<N>], idx: [u64; LANES]) -> Lanes<N> {
        // SAFETY: as in `mod_exp`: the token proves the CPU features; references only.
        unsafe { lookup_ifma(table, idx) }
    }

    /// The raw Montgomery square `a²·R⁻¹ (mod m)`, below `2m`, for the property tests.
    #[allow(unsafe_code)]
    pub fn mont_sqr<const N: usize>(
        &self,
        a: &Lanes<N>,
        m: &Lanes<N>,
        k0: [u64; LANES],
    ) -> Lanes<N> {
        // SAFETY: as in `mod_exp`: the token proves the CPU features; references only.
        unsafe { mont_sqr_ifma(a, m, k0) }
    }

    /// The raw Montgomery product `a·b·R⁻¹ (mod m)`, below `2m`, for the property tests.
    #[allow(unsafe_code)]
    pub fn mont_mul<const N: usize>(
        &self,
        a: &Lanes<N>,
        b: &Lanes<N>,
        m: &Lanes<N>,
        k0: [u64; LANES],
    ) -> Lanes<N> {
        // SAFETY: as in `mod_exp`: the token proves the CPU features; references only.
        unsafe { mont_mul_ifma(a, b, m, k0) }
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn mont_mul_ifma<const N: usize>(
    a: &Lanes<N>,
    b: &Lanes<N>,
    m: &Lanes<N>,
    k0: [u64; LANES],
) -> Lanes<N> {
    let mut out = [_mm512_setzero_si512(); N];
    mul(&mut out, &load(a), &load(b), &load(m), lanes(k0));
    store(&out)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn mont_sqr_ifma<const N: usize>(a: &Lanes<N>, m: &Lanes<N>, k0: [u64; LANES]) -> Lanes<N> {
    let mut out = [_mm512_setzero_si512(); N];
    sqr(&mut out, &load(a), &load(m), lanes(k0));
    store(&out)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn lookup_ifma<const N: usize>(table: &[Lanes<N>], idx: [u64; LANES]) -> Lanes<N> {
    let table: Vec<[Vec8; N]> = table.iter().map(|entry| load(entry)).collect();
    let mut out = [_mm512_setzero_si512(); N];
    select(&mut out, &table, lanes(idx));
    store(&out)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn mod_exp_ifma<const N: usize>(job: &ExpJob<'_, N>) -> Lanes<N> {
    let zero = _mm512_setzero_si512();
    let m = load(job.modulus);
    let k0 = lanes(job.k0);
    let r2 = load(job.r2);
    // x·R = lo·R + hi·R² (mod m): each product is below 2m, their sum below 4m < R.
    let mut lo = [zero; N];
    let mut hi = [zero; N];
    mul(&mut lo, &load(job.base_lo), &r2, &m, k0);
    mul(&mut hi, &load(job.base_hi), &load(job.r3), &m, k0);
    let base = add(&lo, &hi);
    // 1·R = R² · R⁻¹.
    let mut unit = [zero; N];
    unit[0] = _mm512_set1_epi64(1);
    let mut one_r = [zero; N];
    mul(&mut one_r, &unit, &r2, &m, k0);

    let mut table = vec![[zero; N]; 1 << WINDOW];
    table[0] = one_r;
    table[1] = base;
    for k in 2..table.len() {
        let mut next = [zero; N];
        mul(&mut next, &table[k - 1], &base, &m, k0);
        table[k] = next;
    }

    let windows = (LIMB_BITS * N).div_ceil(WINDOW);
    let mut acc = [zero; N];
    select(
        &mut acc,
        &table,
        window(job.exponent, (windows - 1) * WINDOW),
    );
    let mut tmp = [zero; N];
    for w in (0..windows - 1).rev() {
        for _ in 0..WINDOW {
            if N > SQR_FROM_LIMBS {
                sqr(&mut tmp, &acc, &m, k0);
            } else {
                mul(&mut tmp, &acc, &acc, &m, k0);
            }
            acc = tmp;
        }
        let mut entry = [zero; N];
        select(&mut entry, &table, window(job.exponent, w * WINDOW));
        mul(&mut tmp, &acc, &entry, &m, k0);
        acc = tmp;
    }
    // Out of Montgomery form: acc·1·R⁻¹ ≤ m; then below m.
    mul(&mut tmp, &acc, &unit, &m, k0);
    sub_if_ge(&mut tmp, &m);
    store(&tmp)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn garner_h_ifma<const N: usize>(
    m1: &Lanes<N>,
    m2: &Lanes<N>,
    p: &Lanes<N>,
    k0: [u64; LANES],
    qinv_r: &Lanes<N>,
) -> Lanes<N> {
    let p = load(p);
    let mut m2 = load(m2);
    sub_if_ge(&mut m2, &p);
    let diff = sub_mod(&load(m1), &m2, &p);
    let mut h = [_mm512_setzero_si512(); N];
    // diff·(qInv·R)·R⁻¹ = diff·qInv, below p + p²/R; then below p.
    mul(&mut h, &diff, &load(qinv_r), &p, lanes(k0));
    sub_if_ge(&mut h, &p);
    store(&h)
}

/// `out = a·b·R⁻¹ mod m` (below `2m` when `a·b < 16m²`), normalized limbs.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn mul<const N: usize>(
    out: &mut [Vec8; N],
    a: &[Vec8; N],
    b: &[Vec8; N],
    m: &[Vec8; N],
    k0: Vec8,
) {
    let zero = _mm512_setzero_si512();
    let mut acc = [zero; N];
    for &ai in a {
        for j in 0..N {
            acc[j] = _mm512_madd52lo_epu64(acc[j], ai, b[j]);
        }
        // q makes the lowest limb a multiple of 2^52 (only its low 52 bits are read).
        let q = _mm512_madd52lo_epu64(zero, acc[0], k0);
        for j in 0..N {
            acc[j] = _mm512_madd52lo_epu64(acc[j], q, m[j]);
        }
        let carry = _mm512_srli_epi64::<52>(acc[0]);
        // Shift down one limb; the high halves of limb j's products weigh j+1, i.e. j after.
        for j in 0..N - 1 {
            let t = _mm512_madd52hi_epu64(acc[j + 1], ai, b[j]);
            acc[j] = _mm512_madd52hi_epu64(t, q, m[j]);
        }
        let t = _mm512_madd52hi_epu64(zero, ai, b[N - 1]);
        acc[N - 1] = _mm512_madd52hi_epu64(t, q, m[N - 1]);
        acc[0] = _mm512_add_epi64(acc[0], carry);
    }
    normalize(out, &acc);
}

/// Squarings use [`sqr`] above this many limbs. Up to it, `mul`'s `N` accumulators stay in
/// the 32 vector registers while `sqr`'s `2N` spill to memory, and `sqr` lost: RSA-2048
/// (20 limbs) signed ~17% slower with it; RSA-4096 (40 limbs, where `mul` spills too) ~9%
/// faster (`tern speed rsa`, one busy machine: indicative only). A public, compile-time
/// choice per `N`.
const SQR_FROM_LIMBS: usize = 24;

/// Largest limb count of the kernels (RSA-4096's halves): bounds `sqr`'s double-width array.
const MAX_LIMBS: usize = 40;

/// `out = a²·R⁻¹ mod m` (below `2m` when `a < 4m`), as [`mul`] computes it but with the
/// full square first, cross products computed once and doubled (`N² + N` instead of `2N²`
/// multiplies), then a separate Montgomery reduction. Accumulators: the square leaves at most
/// `4N·2^52` in a limb, the reduction adds `2N·2^52` more: below `2^60` for `N ≤ 40`.
// Limb positions `i + j` are the algorithm: indices read clearer than iterator chains.
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx512f,avx512ifma")]
fn sqr<const N: usize>(out: &mut [Vec8; N], a: &[Vec8; N], m: &[Vec8; N], k0: Vec8) {
    const { assert!(N <= MAX_LIMBS) };
    let zero = _mm512_setzero_si512();
    let mut acc = [zero; 2 * MAX_LIMBS];
    for i in 0..N {
        for j in i + 1..N {
            acc[i + j] = _mm512_madd52lo_epu64(acc[i + j], a[i], a[j]);
            acc[i + j + 1] = _mm512_madd52hi_epu64(acc[i + j + 1], a[i], a[j]);
        }
    }
    for i in 0..N {
        let k = 2 * i;
        acc[k] = _mm512_madd52lo_epu64(_mm512_add_epi64(acc[k], acc[k]), a[i], a[i]);
        let doubled = _mm512_add_epi64(acc[k + 1], acc[k + 1]);
        acc[k + 1] = _mm512_madd52hi_epu64(doubled, a[i], a[i]);
    }
    for i in 0..N {
        let q = _mm512_madd52lo_epu64(zero, acc[i], k0);
        for j in 0..N {
            acc[i + j] = _mm512_madd52lo_epu64(acc[i + j], q, m[j]);
            acc[i + j + 1] = _mm512_madd52hi_epu64(acc[i + j + 1], q, m[j]);
        }
        acc[i + 1] = _mm512_add_epi64(acc[i + 1], _mm512_srli_epi64::<52>(acc[i]));
    }
    let mut high = [zero; N];
    high.copy_from_slice(&acc[N..2 * N]);
    normalize(out, &high);
}

/// Carries propagated so that every limb is below 2^52 (the value must fit in `N` limbs).
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn normalize<const N: usize>(out: &mut [Vec8; N], acc: &[Vec8; N]) {
    let mask = _mm512_set1_epi64(MASK52 as i64);
    let mut carry = _mm512_setzero_si512();
    for j in 0..N {
        let v = _mm512_add_epi64(acc[j], carry);
        out[j] = _mm512_and_si512(v, mask);
        carry = _mm512_srli_epi64::<52>(v);
    }
}

/// `a + b`, normalized (the sum must fit in `N` limbs).
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn add<const N: usize>(a: &[Vec8; N], b: &[Vec8; N]) -> [Vec8; N] {
    let mut sum = [_mm512_setzero_si512(); N];
    for j in 0..N {
        sum[j] = _mm512_add_epi64(a[j], b[j]);
    }
    let mut out = sum;
    normalize(&mut out, &sum);
    out
}

/// `a - b` limb by limb with borrows; returns the difference mod `R` and the final borrow
/// (1 where `a < b`) per lane.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn sub<const N: usize>(a: &[Vec8; N], b: &[Vec8; N]) -> ([Vec8; N], Vec8) {
    let mask = _mm512_set1_epi64(MASK52 as i64);
    let mut out = [_mm512_setzero_si512(); N];
    let mut borrow = _mm512_setzero_si512();
    for j in 0..N {
        // Limbs below 2^52: a negative difference wraps and sets bit 63.
        let d = _mm512_sub_epi64(_mm512_sub_epi64(a[j], b[j]), borrow);
        out[j] = _mm512_and_si512(d, mask);
        borrow = _mm512_srli_epi64::<63>(d);
    }
    (out, borrow)
}

/// `x = x - m` in the lanes where `x ≥ m`, by a masked blend (no branch).
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn sub_if_ge<const N: usize>(x: &mut [Vec8; N], m: &[Vec8; N]) {
    let (diff, borrow) = sub(x, m);
    let ge = _mm512_cmpeq_epi64_mask(borrow, _mm512_setzero_si512());
    for j in 0..N {
        x[j] = _mm512_mask_blend_epi64(ge, x[j], diff[j]);
    }
}

/// `a - b mod m` for `a, b < m`, fully reduced.
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn sub_mod<const N: usize>(a: &[Vec8; N], b: &[Vec8; N], m: &[Vec8; N]) -> [Vec8; N] {
    let (diff, borrow) = sub(a, b);
    // Where a < b the difference wrapped mod R: adding m (dropping the carry out) fixes it.
    let mut wrapped = add(&diff, m);
    let lt = _mm512_cmpeq_epi64_mask(borrow, _mm512_set1_epi64(1));
    for j in 0..N {
        wrapped[j] = _mm512_mask_blend_epi64(lt, diff[j], wrapped[j]);
    }
    wrapped
}

/// `out = table[idx]` per lane: every entry is read, the lane's own entry kept by a compare
/// mask, so neither the addresses touched nor the time depend on `idx`.
///
/// The selection is an AND with an all-ones-or-zero vector, not a masked blend: from
/// `blend(hit, out, entry)` the compiler may emit a merge-masked load (`vmovdqa64 mem,
/// zmm{k}`), and a load whose mask is all zero (no lane wants that entry) need not touch
/// memory, so the cache lines read could depend on the exponents. The keep vector goes
/// through `black_box`, which stops the optimizer from folding the AND and OR back into a
/// masked load; every entry is then read unmasked (as in the P-256 kernel's `scan`).
#[target_feature(enable = "avx512f,avx512ifma")]
fn select<const N: usize>(out: &mut [Vec8; N], table: &[[Vec8; N]], idx: Vec8) {
    let zero = _mm512_setzero_si512();
    let ones = _mm512_set1_epi64(-1);
    *out = [zero; N];
    for (k, entry) in table.iter().enumerate() {
        let hit = _mm512_cmpeq_epi64_mask(idx, _mm512_set1_epi64(k as i64));
        let keep = core::hint::black_box(_mm512_mask_blend_epi64(hit, zero, ones));
        for j in 0..N {
            out[j] = _mm512_or_si512(out[j], _mm512_and_si512(entry[j], keep));
        }
    }
}

/// The `WINDOW` exponent bits starting at bit `pos` (public), per lane.
#[target_feature(enable = "avx512f,avx512ifma")]
fn window(exponent: &[[u64; LANES]], pos: usize) -> Vec8 {
    let mut idx = [0u64; LANES];
    let (word, shift) = (pos / 64, pos % 64);
    for (lane, slot) in idx.iter_mut().enumerate() {
        let low = exponent.get(word).map_or(0, |w| w[lane] >> shift);
        let high = match (shift, exponent.get(word + 1)) {
            (0, _) | (_, None) => 0,
            (_, Some(w)) => w[lane] << (64 - shift),
        };
        *slot = (low | high) & ((1 << WINDOW) - 1);
    }
    lanes(idx)
}

#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn lanes(x: [u64; LANES]) -> Vec8 {
    _mm512_set_epi64(
        x[7] as i64,
        x[6] as i64,
        x[5] as i64,
        x[4] as i64,
        x[3] as i64,
        x[2] as i64,
        x[1] as i64,
        x[0] as i64,
    )
}

#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn unlanes(v: Vec8) -> [u64; LANES] {
    let low = _mm512_extracti64x4_epi64::<0>(v);
    let high = _mm512_extracti64x4_epi64::<1>(v);
    [
        _mm256_extract_epi64::<0>(low) as u64,
        _mm256_extract_epi64::<1>(low) as u64,
        _mm256_extract_epi64::<2>(low) as u64,
        _mm256_extract_epi64::<3>(low) as u64,
        _mm256_extract_epi64::<0>(high) as u64,
        _mm256_extract_epi64::<1>(high) as u64,
        _mm256_extract_epi64::<2>(high) as u64,
        _mm256_extract_epi64::<3>(high) as u64,
    ]
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn load<const N: usize>(x: &Lanes<N>) -> [Vec8; N] {
    let mut out = [_mm512_setzero_si512(); N];
    for (slot, limb) in out.iter_mut().zip(x) {
        *slot = lanes(*limb);
    }
    out
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn store<const N: usize>(x: &[Vec8; N]) -> Lanes<N> {
    let mut out = [[0u64; LANES]; N];
    for (slot, v) in out.iter_mut().zip(x) {
        *slot = unlanes(*v);
    }
    out
}
