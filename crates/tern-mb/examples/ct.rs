//! dudect: a statistical test that the kernels' time does not depend on secret data.
//!
//! An example, not a bench: dudect's own command line refuses the `--bench` flag that
//! `cargo bench` passes. Run (release build; about a minute; an idle, pinned core lowers the
//! noise):
//!
//! ```text
//! cargo run --release -p tern-mb --example ct
//! cargo run --release -p tern-mb --example ct -- --continuous table_scan   # until interrupted
//! ```
//!
//! Each bench times one operation on inputs of two classes that differ only in the secret:
//!
//! - `table_scan`: the window-table lookup with every lane's index 0 (Left) or random (Right);
//! - `exp_exponent`: an 8-lane 1024-bit exponentiation (an RSA-2048 CRT half) with exponent
//!   0, which selects table entry 0 at every window (Left), or a random exponent (Right);
//! - `exp_base`: the same with base 0 (Left) or a random base (Right), the exponent fixed.
//! - `x25519_scalar`: eight X25519 ladders with every scalar zero before clamping (Left) or
//!   random scalars (Right), the u-coordinates fixed;
//! - `x25519_point`: the same with every u zero (Left) or random (Right), the scalars fixed;
//! - `x25519_scalar_fixed`, `x25519_point_fixed`: the scalars (or u's) fixed but not zero
//!   (Left) or random (Right): tells a dependence on the value in general from one on
//!   all-zero inputs (see the design note);
//! - `p256_scalar`: eight P-256 nonce computations (fixed-base `k·G` with its masked table
//!   scans, both inversions) with every `k = 1` (Left) or random `k` (Right);
//!   `p256_scalar_fixed`: a fixed random-looking `k` per lane (Left) against random ones.
//!
//! dudect prints `max t`: |t| above 5 says the two classes' timings differ (not constant
//! time); below 5 after many samples is evidence, not proof, that they do not. Without
//! AVX-512 IFMA the benches print a note and measure nothing.

#[cfg(target_arch = "x86_64")]
// The set-up walks `[limb][lane]` arrays lane by lane: indices read clearer than zips here.
#[allow(clippy::needless_range_loop)]
mod benches {
    use dudect_bencher::{BenchRng, Class, CtRunner};
    use tern_mb::ifma::{ExpJob, Kernel, Lanes, LANES};

    const N: usize = 20;
    const MASK52: u64 = (1 << 52) - 1;

    /// splitmix64: inputs from a fixed seed, so runs are comparable.
    struct Stream(u64);

    impl Stream {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// Random limbs below 2^(52N - 8): below any of the moduli made by `modulus`.
        fn lanes(&mut self) -> Lanes<N> {
            let mut out = [[0u64; LANES]; N];
            for (j, limb) in out.iter_mut().enumerate() {
                for value in limb.iter_mut() {
                    let top = if j == N - 1 { MASK52 >> 8 } else { MASK52 };
                    *value = self.next() & top;
                }
            }
            out
        }

        fn class(&mut self) -> Class {
            if self.next() & 1 == 0 {
                Class::Left
            } else {
                Class::Right
            }
        }
    }

    /// Odd moduli of 52N - 4 bits, with their Montgomery constants (computed naively: the
    /// set-up is not timed).
    struct Moduli {
        m: Lanes<N>,
        k0: [u64; LANES],
        r2: Lanes<N>,
        r3: Lanes<N>,
    }

    fn moduli(stream: &mut Stream) -> Moduli {
        let mut m = stream.lanes();
        for lane in 0..LANES {
            m[0][lane] |= 1;
            m[N - 1][lane] |= 1 << (52 - 5);
        }
        let k0 = std::array::from_fn(|lane| {
            let m0 = m[0][lane];
            let mut inv = m0;
            for _ in 0..5 {
                inv = inv.wrapping_mul(2u64.wrapping_sub(m0.wrapping_mul(inv)));
            }
            inv.wrapping_neg() & MASK52
        });
        let mut one = [[0u64; LANES]; N];
        one[0] = [1; LANES];
        Moduli {
            r2: shl_mod(&one, 2 * 52 * N, &m),
            r3: shl_mod(&one, 3 * 52 * N, &m),
            m,
            k0,
        }
    }

    /// `x·2^shift mod m` per lane by doubling (set-up only).
    fn shl_mod(x: &Lanes<N>, shift: usize, m: &Lanes<N>) -> Lanes<N> {
        let mut v = *x;
        for _ in 0..shift {
            for lane in 0..LANES {
                let mut carry = 0;
                for limb in v.iter_mut() {
                    let doubled = (limb[lane] << 1) | carry;
                    carry = doubled >> 52;
                    limb[lane] = doubled & MASK52;
                }
                let mut diff = [0u64; N];
                let mut borrow = 0;
                for j in 0..N {
                    let d = v[j][lane].wrapping_sub(m[j][lane]).wrapping_sub(borrow);
                    diff[j] = d & MASK52;
                    borrow = d >> 63;
                }
                if borrow == 0 {
                    for j in 0..N {
                        v[j][lane] = diff[j];
                    }
                }
            }
        }
        v
    }

    fn kernel() -> Option<Kernel> {
        let kernel = Kernel::detect();
        if kernel.is_none() {
            eprintln!("no AVX-512 IFMA on this CPU: nothing to measure");
        }
        kernel
    }

    pub fn table_scan(runner: &mut CtRunner, _rng: &mut BenchRng) {
        let Some(kernel) = kernel() else { return };
        let mut stream = Stream(1);
        let table: Vec<Lanes<N>> = (0..32).map(|_| stream.lanes()).collect();
        for _ in 0..200_000 {
            let class = stream.class();
            let idx: [u64; LANES] = match class {
                Class::Left => [0; LANES],
                Class::Right => std::array::from_fn(|_| stream.next() % 32),
            };
            runner.run_one(class, || kernel.lookup(&table, idx));
        }
    }

    fn run_exp(runner: &mut CtRunner, left_zero_exponent: bool) {
        let Some(kernel) = kernel() else { return };
        let mut stream = Stream(2);
        let m = moduli(&mut stream);
        let zero = [[0u64; LANES]; N];
        let (fixed_base, fixed_exp) = (stream.lanes(), stream.lanes());
        for _ in 0..4_000 {
            let class = stream.class();
            let random = stream.lanes();
            let (base, exponent) = match (class, left_zero_exponent) {
                (Class::Left, true) => (fixed_base, zero),
                (Class::Left, false) => (zero, fixed_exp),
                (Class::Right, true) => (fixed_base, random),
                (Class::Right, false) => (random, fixed_exp),
            };
            // Exponent limbs are radix 2^52; the kernel reads 64-bit words: repack.
            let words = pack_words(&exponent);
            let job = ExpJob {
                modulus: &m.m,
                k0: m.k0,
                r2: &m.r2,
                r3: &m.r3,
                base_lo: &base,
                base_hi: &zero,
                exponent: &words,
            };
            runner.run_one(class, || kernel.mod_exp(&job));
        }
    }

    fn pack_words(x: &Lanes<N>) -> Vec<[u64; LANES]> {
        let mut words = vec![[0u64; LANES]; (52 * N).div_ceil(64)];
        for (j, limb) in x.iter().enumerate() {
            for lane in 0..LANES {
                let bit = 52 * j;
                words[bit / 64][lane] |= limb[lane] << (bit % 64);
                if bit % 64 > 12 {
                    if let Some(next) = words.get_mut(bit / 64 + 1) {
                        next[lane] |= limb[lane] >> (64 - bit % 64);
                    }
                }
            }
        }
        words
    }

    pub fn exp_exponent(runner: &mut CtRunner, _rng: &mut BenchRng) {
        run_exp(runner, true);
    }

    pub fn exp_base(runner: &mut CtRunner, _rng: &mut BenchRng) {
        run_exp(runner, false);
    }

    /// Eight random 32-byte strings.
    fn strings(stream: &mut Stream) -> [[u8; 32]; LANES] {
        std::array::from_fn(|_| {
            let mut out = [0u8; 32];
            for chunk in out.chunks_mut(8) {
                chunk.copy_from_slice(&stream.next().to_le_bytes());
            }
            out
        })
    }

    /// Eight ladders; the scalars (`secret_scalar`) or the u's vary by class: Left gets
    /// `left`, Right random strings; the other input is fixed.
    fn run_x25519(runner: &mut CtRunner, secret_scalar: bool, left: Option<[[u8; 32]; LANES]>) {
        let Some(kernel) = kernel() else { return };
        let mut stream = Stream(3);
        let fixed = strings(&mut stream);
        let left = left.unwrap_or([[0u8; 32]; LANES]);
        for _ in 0..20_000 {
            let class = stream.class();
            // Both classes draw random inputs, so the harness runs the same code before each
            // timed call (a ~57 µs call is short enough for that to show otherwise).
            let random = strings(&mut stream);
            let varied = match class {
                Class::Left => left,
                Class::Right => random,
            };
            let (scalars, points) = if secret_scalar {
                (varied, fixed)
            } else {
                (fixed, varied)
            };
            runner.run_one(class, || kernel.x25519(&scalars, &points));
        }
    }

    pub fn x25519_scalar(runner: &mut CtRunner, _rng: &mut BenchRng) {
        run_x25519(runner, true, None);
    }

    pub fn x25519_point(runner: &mut CtRunner, _rng: &mut BenchRng) {
        run_x25519(runner, false, None);
    }

    pub fn x25519_scalar_fixed(runner: &mut CtRunner, _rng: &mut BenchRng) {
        run_x25519(runner, true, Some(strings(&mut Stream(4))));
    }

    pub fn x25519_point_fixed(runner: &mut CtRunner, _rng: &mut BenchRng) {
        run_x25519(runner, false, Some(strings(&mut Stream(4))));
    }

    /// Eight P-256 nonce computations (fixed-base `k·G` with its 64 masked table scans, the
    /// inversions): Left with every `k = 1` (all digits but one zero: every scan keeps
    /// nothing and every addition is blended away) or `left`, Right with random `k < 2^255`.
    fn run_p256(runner: &mut CtRunner, left: Option<[[u64; 4]; LANES]>) {
        let Some(kernel) = kernel() else { return };
        let mut stream = Stream(5);
        let left = left.unwrap_or([[1, 0, 0, 0]; LANES]);
        for _ in 0..20_000 {
            let class = stream.class();
            let random: [[u64; 4]; LANES] = std::array::from_fn(|_| {
                let mut k: [u64; 4] = std::array::from_fn(|_| stream.next());
                k[3] >>= 1;
                k[0] |= 1;
                k
            });
            let ks = match class {
                Class::Left => left,
                Class::Right => random,
            };
            runner.run_one(class, || tern_mb::p256::kernel_for_timing(&kernel, &ks));
        }
    }

    pub fn p256_scalar(runner: &mut CtRunner, _rng: &mut BenchRng) {
        run_p256(runner, None);
    }

    pub fn p256_scalar_fixed(runner: &mut CtRunner, _rng: &mut BenchRng) {
        let mut stream = Stream(6);
        let fixed = std::array::from_fn(|_| [stream.next(), stream.next(), stream.next(), 1]);
        run_p256(runner, Some(fixed));
    }
}

#[cfg(target_arch = "x86_64")]
use benches::{
    exp_base, exp_exponent, p256_scalar, p256_scalar_fixed, table_scan, x25519_point,
    x25519_point_fixed, x25519_scalar, x25519_scalar_fixed,
};

#[cfg(target_arch = "x86_64")]
dudect_bencher::ctbench_main!(
    table_scan,
    exp_exponent,
    exp_base,
    x25519_scalar,
    x25519_point,
    x25519_point_fixed,
    x25519_scalar_fixed,
    p256_scalar,
    p256_scalar_fixed
);

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    eprintln!("the kernels are x86-64 only");
}
