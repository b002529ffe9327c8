//! Nonce pairs (fresh `k`, the kernel, the fault check), the pool that hands them out, and
//! the per-message step `s = k⁻¹·(z + r·d) mod n` with its DER encoding (RFC 5480 /
//! X9.62 `Ecdsa-Sig-Value`, as TLS's `ecdsa_secp256r1_sha256` carries it).

use aws_lc_rs::digest::{digest, SHA256};
use aws_lc_rs::encoding::AsBigEndian;
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use zeroize::Zeroize;

use super::scalar::{self, eq_mask, lt_mask, B, FIELD, N, ORDER, P, U256};
use super::table::{self, Tables};
use crate::ifma::{Kernel, LANES};
use crate::MbError;

/// What the kernel computed for one lane: affine `x`, `y` of `k·G`, `k⁻¹ mod n` (each
/// supposed canonical; the fault check does not rely on it).
#[derive(Debug)]
pub(crate) struct Computed {
    pub(crate) x: U256,
    pub(crate) y: U256,
    pub(crate) kinv: U256,
}

/// The message-independent half of one ECDSA signature: `r = x(k·G) mod n` and
/// `k⁻¹·R mod n` (Montgomery form). Used once: [`P256Key::sign`] consumes it.
pub struct NoncePair {
    r: U256,
    kinv_mont: U256,
}

impl std::fmt::Debug for NoncePair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NoncePair").finish_non_exhaustive()
    }
}

impl Drop for NoncePair {
    fn drop(&mut self) {
        self.r.zeroize();
        self.kinv_mont.zeroize();
    }
}

/// Counts of one pool since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolCounters {
    /// Kernel runs (eight nonces each).
    pub batches: u64,
    /// Pairs that passed the fault check.
    pub pairs: u64,
    /// Pairs dropped by the fault check.
    pub faults: u64,
}

/// A few nonce pairs of one thread, refilled eight at a time when empty.
#[derive(Debug)]
pub struct NoncePool {
    pairs: Vec<NoncePair>,
    rng: SystemRandom,
    counters: PoolCounters,
}

impl Default for NoncePool {
    fn default() -> Self {
        Self::new()
    }
}

impl NoncePool {
    pub fn new() -> Self {
        Self {
            pairs: Vec::with_capacity(LANES),
            rng: SystemRandom::new(),
            counters: PoolCounters::default(),
        }
    }

    pub fn counters(&self) -> PoolCounters {
        self.counters
    }

    /// Pairs ready.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// A pair, after running the kernel if none is left; `None` only if the run failed
    /// altogether (random generator, tables, every lane's fault check).
    pub fn take(&mut self, kernel: &Kernel) -> Option<NoncePair> {
        if self.pairs.is_empty() {
            self.refill(kernel);
        }
        self.pairs.pop()
    }

    /// Runs the kernel once: up to eight more pairs.
    pub fn refill(&mut self, kernel: &Kernel) {
        let Some(tables) = table::tables() else {
            return;
        };
        let mut ks = [[0u64; 4]; LANES];
        for k in ks.iter_mut() {
            match random_scalar(&self.rng) {
                Some(fresh) => *k = fresh,
                None => return,
            }
        }
        let computed = compute(kernel, &ks, tables);
        self.counters.batches += 1;
        for (k, lane) in ks.iter().zip(&computed) {
            match checked(k, lane) {
                Some(pair) => {
                    self.counters.pairs += 1;
                    self.pairs.push(pair);
                }
                None => self.counters.faults += 1,
            }
        }
        ks.zeroize();
    }
}

/// A uniform scalar in `[1, n)`: 32 random bytes, drawn again when out of range (a chance
/// of about 2^-32 per draw; which draws were rejected says nothing of the one kept).
fn random_scalar(rng: &SystemRandom) -> Option<U256> {
    for _ in 0..16 {
        let mut bytes = [0u8; 32];
        rng.fill(&mut bytes).ok()?;
        let k = scalar::from_be(&bytes);
        bytes.zeroize();
        if lt_mask(&k, &N) & !eq_mask(&k, &[0; 4]) != 0 {
            return Some(k);
        }
    }
    None
}

/// The kernel on eight scalars (each in `[1, n)`).
fn compute(kernel: &Kernel, ks: &[U256; LANES], tables: &Tables) -> [Computed; LANES] {
    kernel.p256_nonces(ks, tables)
}

/// The pair of `k` if the kernel's result passes the fault check (module docs of `p256`):
/// coordinates and inverse in range, the point on the curve, `k·k⁻¹ ≡ 1`, and `r ≠ 0`.
pub(crate) fn checked(k: &U256, c: &Computed) -> Option<NoncePair> {
    let (f, o) = (&FIELD, &ORDER);
    let in_range = lt_mask(&c.x, &P) & lt_mask(&c.y, &P) & lt_mask(&c.kinv, &N);
    let x = f.to_mont(&c.x);
    let y = f.to_mont(&c.y);
    let y2 = f.mul(&y, &y);
    let x3 = f.mul(&f.mul(&x, &x), &x);
    let three_x = f.add(&f.add(&x, &x), &x);
    let rhs = f.add(&f.sub(&x3, &three_x), &f.to_mont(&B));
    let on_curve = eq_mask(&y2, &rhs);
    let kinv_mont = o.to_mont(&c.kinv);
    let inverse = eq_mask(&o.mul(k, &kinv_mont), &[1, 0, 0, 0]);
    let r = o.reduce_once(&c.x);
    let r_nonzero = !eq_mask(&r, &[0; 4]);
    // A public outcome: whether this lane was computed correctly.
    (in_range & on_curve & inverse & r_nonzero == u64::MAX).then_some(NoncePair { r, kinv_mont })
}

/// A P-256 private key for [`P256Key::sign`]: `d·R mod n`, wiped on drop.
pub struct P256Key {
    d_mont: U256,
}

impl std::fmt::Debug for P256Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("P256Key").finish_non_exhaustive()
    }
}

impl Drop for P256Key {
    fn drop(&mut self) {
        self.d_mont.zeroize();
    }
}

impl P256Key {
    /// A PKCS#8 or SEC 1 (RFC 5915) DER P-256 private key, checked by aws-lc-rs.
    pub fn from_der(der: &[u8]) -> Result<Self, MbError> {
        let pair = EcdsaKeyPair::from_private_key_der(&ECDSA_P256_SHA256_ASN1_SIGNING, der)
            .map_err(|e| MbError::Key(e.to_string()))?;
        let bin = pair
            .private_key()
            .as_be_bytes()
            .map_err(|_| MbError::Key("no private scalar".to_owned()))?;
        let d: &[u8; 32] = bin
            .as_ref()
            .try_into()
            .map_err(|_| MbError::Key("P-256 scalar not 32 bytes".to_owned()))?;
        Self::from_scalar(d).ok_or_else(|| MbError::Key("P-256 scalar out of range".to_owned()))
    }

    /// The key with private scalar `d` (big-endian), if `1 ≤ d < n`.
    pub fn from_scalar(d: &[u8; 32]) -> Option<Self> {
        let mut d = scalar::from_be(d);
        let valid = lt_mask(&d, &N) & !eq_mask(&d, &[0; 4]) != 0;
        let key = Self {
            d_mont: ORDER.to_mont(&d),
        };
        d.zeroize();
        valid.then_some(key)
    }

    /// The ECDSA P-256 SHA-256 signature of `message` (DER), spending `pair`; `None` in the
    /// negligible case `s = 0` (the caller takes another pair).
    pub fn sign(&self, pair: NoncePair, message: &[u8]) -> Option<Vec<u8>> {
        let hash = digest(&SHA256, message);
        let z: &[u8; 32] = hash.as_ref().try_into().ok()?;
        self.sign_digest(pair, z)
    }

    /// As [`P256Key::sign`], for a SHA-256 digest: `s = k⁻¹·(z + r·d) mod n`, in constant
    /// time (two Montgomery products and a modular addition).
    pub fn sign_digest(&self, pair: NoncePair, digest: &[u8; 32]) -> Option<Vec<u8>> {
        let o = &ORDER;
        // z < 2^256 < 2n: one conditional subtraction reduces it.
        let z = o.reduce_once(&scalar::from_be(digest));
        let rd = o.mul(&pair.r, &self.d_mont);
        let mut sum = o.add(&z, &rd);
        let s = o.mul(&sum, &pair.kinv_mont);
        sum.zeroize();
        // s = 0 is public (it would be sent); its probability is 1/n.
        if eq_mask(&s, &[0; 4]) != 0 {
            return None;
        }
        Some(der(&pair.r, &s))
    }
}

/// `SEQUENCE { INTEGER r, INTEGER s }` (minimal encodings; at most 72 bytes).
fn der(r: &U256, s: &U256) -> Vec<u8> {
    let (r, s) = (integer(r), integer(s));
    let mut out = Vec::with_capacity(2 + r.len() + s.len());
    out.push(0x30);
    out.push((r.len() + s.len()) as u8);
    out.extend_from_slice(&r);
    out.extend_from_slice(&s);
    out
}

/// A DER INTEGER of a non-negative number: leading zero bytes dropped, one added back when
/// the top bit is set. (Lengths of the public r and s may depend on their values.)
fn integer(x: &U256) -> Vec<u8> {
    let bytes = scalar::to_be(x);
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(31);
    let body = &bytes[start..];
    let pad = usize::from(body[0] & 0x80 != 0);
    let mut out = Vec::with_capacity(2 + pad + body.len());
    out.push(0x02);
    out.push((pad + body.len()) as u8);
    if pad == 1 {
        out.push(0);
    }
    out.extend_from_slice(body);
    out
}
