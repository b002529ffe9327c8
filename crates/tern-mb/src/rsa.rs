//! Batched RSA signatures: up to eight private operations (CRT) in one run of the kernels,
//! every result verified with the public key before it leaves.
//!
//! Per batch, for `N`-limb halves: lane `i` carries request `i`'s key and encoded message `c`
//! (lanes past the batch's size repeat lane 0, their results discarded):
//!
//! 1. `m1 = c^dP mod p` and `m2 = c^dQ mod q` (two runs of [`Kernel::mod_exp`]);
//! 2. Garner: `h = (m1 - m2)·qInv mod p` in the kernel, then `s = m2 + h·q` (scalar,
//!    [`radix52::mul_add`]), all constant time;
//! 3. the fault check: aws-lc-rs verifies the signature with the public key (`s^e mod n`
//!    against the message's encoding; an implementation independent of the kernels, on
//!    public values only). A lane that fails it (a fault, or a bug) is signed again by
//!    aws-lc-rs and counted: a wrong CRT signature would reveal a prime factor of `n`
//!    (Boneh–DeMillo–Lipton).
//!
//! The check first used num-bigint's `modpow` for a literal `s^e mod n == c`: it took as long
//! as the kernels themselves (perf, RSA-2048: 15% of samples against the kernels' 15%);
//! aws-lc's verification costs about a tenth of that.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{KeyPair, UnparsedPublicKey};
use zeroize::Zeroize;

use crate::ifma::{ExpJob, Kernel, Lanes, LANES, LIMB_BITS};
use crate::key::{Crt, Half};
use crate::{radix52, MbError, RsaKey, Scheme};

/// One lane of a batch: its key's halves and its encoded message.
pub(crate) struct Lane<'a> {
    pub(crate) crt: &'a Crt,
    pub(crate) input: &'a [u8],
}

/// The private operation for 2..=8 lanes whose keys share `crt.limbs`, as big-endian
/// signatures of `len` bytes; `None` when the limb count is not one the kernels are built for.
pub(crate) fn private_batch(
    kernel: &Kernel,
    lanes: &[Lane<'_>],
    len: usize,
) -> Option<Vec<Vec<u8>>> {
    match lanes.first()?.crt.limbs {
        20 => Some(private::<20>(kernel, lanes, len)),
        30 => Some(private::<30>(kernel, lanes, len)),
        40 => Some(private::<40>(kernel, lanes, len)),
        _ => None,
    }
}

fn private<const N: usize>(kernel: &Kernel, lanes: &[Lane<'_>], len: usize) -> Vec<Vec<u8>> {
    // The lane of slot i: lanes past the batch repeat the first.
    let lane = |i: usize| lanes.get(i).or(lanes.first());
    let mut input_lo: Lanes<N> = [[0; LANES]; N];
    let mut input_hi: Lanes<N> = [[0; LANES]; N];
    for slot in 0..LANES {
        let limbs = lane(slot)
            .and_then(|l| radix52::from_be_bytes(l.input, 2 * N))
            .unwrap_or_default();
        for (j, limb) in limbs.iter().enumerate() {
            match j.checked_sub(N) {
                None => input_lo[j][slot] = *limb,
                Some(k) => input_hi[k][slot] = *limb,
            }
        }
    }
    let half = |pick: fn(&Crt) -> &Half| HalfLanes::<N>::gather(|i| lane(i).map(|l| pick(l.crt)));
    let (p, q) = (half(|c| &c.p), half(|c| &c.q));
    let mut m1 = kernel.mod_exp(&p.job(&input_lo, &input_hi));
    let mut m2 = kernel.mod_exp(&q.job(&input_lo, &input_hi));
    let mut qinv_r = gather_limbs::<N>(|i| lane(i).map(|l| l.crt.qinv_r.as_slice()));
    let mut h = kernel.garner_h(&m1, &m2, &p.modulus, p.k0, &qinv_r);

    let out = (0..lanes.len())
        .map(|slot| {
            let column = |x: &Lanes<N>| x.iter().map(|limb| limb[slot]).collect::<Vec<u64>>();
            let (mut h, mut q, mut m2) = (column(&h), column(&q.modulus), column(&m2));
            let mut s = radix52::mul_add(&h, &q, &m2);
            let bytes = radix52::to_be_bytes(&s, len);
            for secret in [&mut h, &mut q, &mut m2, &mut s] {
                secret.zeroize();
            }
            bytes
        })
        .collect();
    for secret in [&mut m1, &mut m2, &mut h, &mut qinv_r] {
        secret.zeroize();
    }
    out
}

/// One half of every lane's key, transposed into the kernels' layout.
struct HalfLanes<const N: usize> {
    modulus: Lanes<N>,
    k0: [u64; LANES],
    r2: Lanes<N>,
    r3: Lanes<N>,
    exponent: Vec<[u64; LANES]>,
}

impl<const N: usize> HalfLanes<N> {
    fn gather<'a>(half: impl Fn(usize) -> Option<&'a Half>) -> Self {
        let words = (LIMB_BITS * N).div_ceil(64);
        let mut exponent = vec![[0u64; LANES]; words];
        let mut k0 = [0u64; LANES];
        for slot in 0..LANES {
            if let Some(h) = half(slot) {
                k0[slot] = h.k0;
                for (word, value) in exponent.iter_mut().zip(&h.exponent) {
                    word[slot] = *value;
                }
            }
        }
        Self {
            modulus: gather_limbs(|i| half(i).map(|h| h.m.as_slice())),
            k0,
            r2: gather_limbs(|i| half(i).map(|h| h.r2.as_slice())),
            r3: gather_limbs(|i| half(i).map(|h| h.r3.as_slice())),
            exponent,
        }
    }

    fn job<'a>(&'a self, lo: &'a Lanes<N>, hi: &'a Lanes<N>) -> ExpJob<'a, N> {
        ExpJob {
            modulus: &self.modulus,
            k0: self.k0,
            r2: &self.r2,
            r3: &self.r3,
            base_lo: lo,
            base_hi: hi,
            exponent: &self.exponent,
        }
    }
}

impl<const N: usize> Drop for HalfLanes<N> {
    fn drop(&mut self) {
        self.modulus.zeroize();
        self.k0.zeroize();
        self.r2.zeroize();
        self.r3.zeroize();
        self.exponent.zeroize();
    }
}

/// `[limb][lane]` from each lane's limbs.
fn gather_limbs<'a, const N: usize>(limbs: impl Fn(usize) -> Option<&'a [u64]>) -> Lanes<N> {
    let mut out = [[0u64; LANES]; N];
    for slot in 0..LANES {
        if let Some(limbs) = limbs(slot) {
            for (limb, value) in out.iter_mut().zip(limbs) {
                limb[slot] = *value;
            }
        }
    }
    out
}

/// The fault check: aws-lc-rs verifies `signature` of `message` under the key's public half.
/// Its verification computes `s^e mod n` (with `s < n` checked) and compares it with the
/// encoding of the message: for PKCS#1 v1.5 exactly our input `c`; for PSS, a valid encoding
/// of the message (the salt is read back), which a faulty `s` misses but with negligible
/// probability.
pub(crate) fn verified(key: &RsaKey, scheme: Scheme, message: &[u8], signature: &[u8]) -> bool {
    UnparsedPublicKey::new(scheme.aws_lc_verify(), key.fallback.public_key().as_ref())
        .verify(message, signature)
        .is_ok()
}

/// One signature by aws-lc-rs.
pub(crate) fn sign_single(
    key: &RsaKey,
    scheme: Scheme,
    message: &[u8],
    rng: &SystemRandom,
) -> Result<Vec<u8>, MbError> {
    let mut out = vec![0u8; key.fallback.public_modulus_len()];
    key.fallback
        .sign(scheme.aws_lc(), rng, message, &mut out)
        .map_err(|_| MbError::Sign)?;
    Ok(out)
}
