//! The IFMA kernels against num-bigint: Montgomery products, squares and exponentiations of random
//! 8-lane inputs (proptest) for 20, 30 and 40-limb moduli, and edge cases (zero, one, m - 1,
//! all-ones exponents, bases up to R²). Skipped, with a note, on CPUs without AVX-512 IFMA.

#![cfg(target_arch = "x86_64")]

use num_bigint::BigUint;
use proptest::prelude::*;
use tern_mb::ifma::{ExpJob, Kernel, Lanes, LANES, LIMB_BITS};

fn kernel() -> Option<Kernel> {
    let kernel = Kernel::detect();
    if kernel.is_none() {
        eprintln!("no AVX-512 IFMA on this CPU: kernel tests skipped");
    }
    kernel
}

/// A deterministic stream of 64-bit words from a seed (splitmix64).
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number of `bits` bits (top bit set when `top`).
    fn number(&mut self, bits: usize, top: bool) -> BigUint {
        let words: Vec<u64> = (0..bits.div_ceil(64)).map(|_| self.next()).collect();
        let mut x = BigUint::from_slice(
            &words
                .iter()
                .flat_map(|w| [*w as u32, (*w >> 32) as u32])
                .collect::<Vec<_>>(),
        );
        x %= BigUint::from(1u8) << bits;
        if top {
            x |= BigUint::from(1u8) << (bits - 1);
        }
        x
    }
}

fn limbs<const N: usize>(xs: &[BigUint]) -> Lanes<N> {
    let mut out = [[0u64; LANES]; N];
    let mask = BigUint::from((1u64 << LIMB_BITS) - 1);
    for (lane, x) in xs.iter().enumerate() {
        for (j, limb) in out.iter_mut().enumerate() {
            let value = (x >> (LIMB_BITS * j)) & &mask;
            limb[lane] = value.iter_u64_digits().next().unwrap_or(0);
        }
    }
    out
}

fn lane<const N: usize>(x: &Lanes<N>, lane: usize) -> BigUint {
    x.iter().rev().fold(BigUint::default(), |acc, limb| {
        (acc << LIMB_BITS) + limb[lane]
    })
}

fn k0(m: &BigUint) -> u64 {
    let r = BigUint::from(1u8) << LIMB_BITS;
    let inv = m.modinv(&r).expect("odd modulus");
    let k0 = &r - inv;
    k0.iter_u64_digits().next().unwrap_or(0)
}

/// Eight odd moduli of `bits` bits (the kernels' bound: at most 52N - 4).
fn moduli(stream: &mut Stream, bits: usize) -> Vec<BigUint> {
    (0..LANES)
        .map(|_| stream.number(bits, true) | BigUint::from(1u8))
        .collect()
}

/// One Montgomery product per lane, `a, b < 2m`: the result is below 2m and ≡ a·b·R⁻¹.
fn check_mont_mul<const N: usize>(kernel: &Kernel, seed: u64, bits: usize) {
    let mut stream = Stream(seed);
    let m = moduli(&mut stream, bits);
    let operand = |stream: &mut Stream| -> Vec<BigUint> {
        m.iter()
            .map(|m| stream.number(bits + 1, false) % (m << 1u8))
            .collect()
    };
    let (a, b) = (operand(&mut stream), operand(&mut stream));
    let k0s: [u64; LANES] = std::array::from_fn(|i| k0(&m[i]));
    let out = kernel.mont_mul::<N>(&limbs(&a), &limbs(&b), &limbs(&m), k0s);
    let square = kernel.mont_sqr::<N>(&limbs(&a), &limbs(&m), k0s);
    let r = BigUint::from(1u8) << (LIMB_BITS * N);
    for i in 0..LANES {
        let got = lane(&out, i);
        assert!(got < (&m[i] << 1u8), "lane {i}: not below 2m");
        assert_eq!(
            (&got * &r) % &m[i],
            (&a[i] * &b[i]) % &m[i],
            "lane {i}, seed {seed}"
        );
        let got = lane(&square, i);
        assert!(got < (&m[i] << 1u8), "lane {i}: square not below 2m");
        assert_eq!(
            (&got * &r) % &m[i],
            (&a[i] * &a[i]) % &m[i],
            "square, lane {i}, seed {seed}"
        );
    }
}

/// One exponentiation per lane of a base up to R² (given as lo + hi·R).
fn check_mod_exp<const N: usize>(
    kernel: &Kernel,
    m: &[BigUint],
    base: &[BigUint],
    exponent: &[BigUint],
) {
    let r_bits = LIMB_BITS * N;
    let r = BigUint::from(1u8) << r_bits;
    let lo: Vec<BigUint> = base.iter().map(|b| b % &r).collect();
    let hi: Vec<BigUint> = base.iter().map(|b| b >> r_bits).collect();
    let r2: Vec<BigUint> = m.iter().map(|m| (&r * &r) % m).collect();
    let r3: Vec<BigUint> = m.iter().map(|m| (&r * &r * &r) % m).collect();
    let words = r_bits.div_ceil(64);
    let mut exp_words = vec![[0u64; LANES]; words];
    for (lane, e) in exponent.iter().enumerate() {
        for (w, digit) in e.iter_u64_digits().enumerate().take(words) {
            exp_words[w][lane] = digit;
        }
    }
    let (modulus, r2, r3, base_lo, base_hi) = (
        limbs::<N>(m),
        limbs::<N>(&r2),
        limbs::<N>(&r3),
        limbs::<N>(&lo),
        limbs::<N>(&hi),
    );
    let job = ExpJob {
        modulus: &modulus,
        k0: std::array::from_fn(|i| k0(&m[i])),
        r2: &r2,
        r3: &r3,
        base_lo: &base_lo,
        base_hi: &base_hi,
        exponent: &exp_words,
    };
    let out = kernel.mod_exp(&job);
    for i in 0..LANES {
        let expected = base[i].modpow(&exponent[i], &m[i]);
        assert_eq!(lane(&out, i), expected, "lane {i}");
    }
}

fn random_exp<const N: usize>(kernel: &Kernel, seed: u64, bits: usize) {
    let mut stream = Stream(seed);
    let m = moduli(&mut stream, bits);
    let base: Vec<BigUint> = (0..LANES).map(|_| stream.number(2 * bits, false)).collect();
    let exponent: Vec<BigUint> = (0..LANES).map(|_| stream.number(bits, false)).collect();
    check_mod_exp::<N>(kernel, &m, &base, &exponent);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn mont_mul_matches_bigint(seed in any::<u64>()) {
        if let Some(kernel) = kernel() {
            check_mont_mul::<20>(&kernel, seed, 1024);
            check_mont_mul::<30>(&kernel, seed, 1536);
            check_mont_mul::<40>(&kernel, seed, 2048);
            // The bound: moduli up to 52N - 4 bits.
            check_mont_mul::<20>(&kernel, seed, 1036);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn mod_exp_matches_bigint(seed in any::<u64>()) {
        if let Some(kernel) = kernel() {
            random_exp::<20>(&kernel, seed, 1024);
            random_exp::<30>(&kernel, seed, 1536);
        }
    }
}

#[test]
fn mod_exp_4096_halves() {
    if let Some(kernel) = kernel() {
        random_exp::<40>(&kernel, 7, 2048);
    }
}

#[test]
fn mod_exp_edge_cases() {
    let Some(kernel) = kernel() else { return };
    let mut stream = Stream(42);
    let m = moduli(&mut stream, 1024);
    let one = BigUint::from(1u8);
    let zero = BigUint::default();
    let r2_max = (BigUint::from(1u8) << (2 * LIMB_BITS * 20)) - 1u8;
    // Per lane: (base, exponent).
    let cases: Vec<(BigUint, BigUint)> = vec![
        (zero.clone(), stream.number(1024, true)),
        (stream.number(1000, false), zero.clone()),
        (zero.clone(), zero.clone()),
        (one.clone(), stream.number(1024, true)),
        (&m[4] - 1u8, stream.number(1024, true)),
        (m[5].clone(), stream.number(1024, true)),
        (r2_max, (BigUint::from(1u8) << (LIMB_BITS * 20)) - 1u8),
        (stream.number(2048, true), one.clone()),
    ];
    let (base, exponent): (Vec<_>, Vec<_>) = cases.into_iter().unzip();
    check_mod_exp::<20>(&kernel, &m, &base, &exponent);
}
