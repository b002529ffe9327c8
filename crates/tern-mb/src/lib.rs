//! Multi-buffer crypto: up to eight independent RSA private operations, eight X25519
//! computations, or eight ECDSA P-256 nonce pairs, at once on AVX-512 IFMA.
//!
//! A TLS terminator spends most of a full RSA handshake in one private-key operation. aws-lc
//! runs each one alone, on 64-bit scalar multiplies; a CPU with AVX-512 IFMA multiplies eight
//! 52-bit limbs per instruction, so eight signatures computed side by side, one per vector
//! lane (Intel's "multi-buffer" approach, as in its QAT_SW engine), cost much less than eight
//! apart. This crate is that kernel and the RSA layer around it; making TLS handshakes wait
//! for each other to fill a batch is the caller's business (docs/design/0004-batched-crypto.md).
//!
//! | layer | file | what |
//! |---|---|---|
//! | kernel | `ifma.rs` | 8-lane Montgomery multiplication in radix 2^52, fixed-window exponentiation with full masked table scans, Garner's step; `unsafe` only at the entries into `#[target_feature]` code (here and one in `x25519.rs`) |
//! | numbers | `radix52.rs` | scalar conversions and constant-time helpers (key set-up, recombination) |
//! | keys | `key.rs` | PKCS#1/PKCS#8 DER → aws-lc-rs key (fallback) + precomputed CRT halves |
//! | encoding | `pad.rs` | PKCS#1 v1.5 and PSS encodings (RFC 8017) |
//! | RSA | `rsa.rs` | one batch: CRT halves in the kernel, recombination, the public-exponent fault check |
//! | X25519 | `x25519.rs`, `x25519/field.rs` | eight RFC 7748 ladders, one per lane, on field arithmetic mod 2^255 − 19 in radix 2^52 ([`x25519_x8`], `None` without IFMA) |
//! | ECDSA P-256 | `p256.rs`, `p256/` | eight nonce pairs `(r, k⁻¹)` per kernel run (fixed-base `k·G`, Fermat inversions), fault-checked, and the per-message `s` ([`p256::NoncePool`], [`p256::P256Key`]) |
//!
//! [`Batcher::sign`] decides per request: batched when the CPU has IFMA, the key is covered
//! (2048/3072/4096-bit, two balanced primes) and at least two such requests share a key size;
//! otherwise aws-lc-rs signs it alone. Every batched signature is verified with the public
//! key (by aws-lc-rs) before it is returned; one that fails is signed again by aws-lc-rs, and
//! counted.

#![deny(unsafe_code)]

#[cfg(target_arch = "x86_64")]
pub mod ifma;
#[cfg(not(target_arch = "x86_64"))]
#[path = "ifma_none.rs"]
pub mod ifma;
mod key;
pub mod p256;
mod pad;
mod radix52;
mod rsa;
pub mod x25519;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};

use aws_lc_rs::rand::SystemRandom;

pub use ifma::Kernel;
pub use key::RsaKey;
pub use pad::Scheme;
pub use x25519::{x25519_base_x8, x25519_x8};

/// Why a key could not be loaded or a signature made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MbError {
    #[error("RSA key: {0}")]
    Key(String),
    #[error("signature encoding: {0}")]
    Encoding(&'static str),
    #[error("the system random number generator failed")]
    Random,
    #[error("aws-lc-rs could not sign")]
    Sign,
}

/// One signature to make: `message` (not yet hashed) under `key` with `scheme`.
#[derive(Debug, Clone, Copy)]
pub struct SignRequest<'a> {
    pub key: &'a RsaKey,
    pub scheme: Scheme,
    pub message: &'a [u8],
}

/// Counts since the batcher was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Batches run by the kernels.
    pub batches: u64,
    /// Signatures made in those batches (and returned: the fault check passed).
    pub batched: u64,
    /// Signatures made alone by aws-lc-rs: no IFMA, key not covered, or a batch of one.
    pub single: u64,
    /// Batched signatures that failed the public-exponent check and were made again by
    /// aws-lc-rs.
    pub fault_fallbacks: u64,
}

/// Makes RSA signatures in batches: see the crate docs.
#[derive(Debug)]
pub struct Batcher {
    kernel: Option<Kernel>,
    rng: SystemRandom,
    batches: AtomicU64,
    batched: AtomicU64,
    single: AtomicU64,
    fault_fallbacks: AtomicU64,
    /// Test hook: lanes (bit i = request i of a batch) whose result is corrupted before the
    /// fault check.
    #[cfg(test)]
    corrupt: AtomicU64,
}

impl Default for Batcher {
    fn default() -> Self {
        Self::new()
    }
}

impl Batcher {
    /// A batcher using the IFMA kernels if this CPU has them.
    pub fn new() -> Self {
        Self::with_kernel(Kernel::detect())
    }

    /// A batcher that signs everything alone with aws-lc-rs (the baseline).
    pub fn without_kernel() -> Self {
        Self::with_kernel(None)
    }

    fn with_kernel(kernel: Option<Kernel>) -> Self {
        Self {
            kernel,
            rng: SystemRandom::new(),
            batches: AtomicU64::new(0),
            batched: AtomicU64::new(0),
            single: AtomicU64::new(0),
            fault_fallbacks: AtomicU64::new(0),
            #[cfg(test)]
            corrupt: AtomicU64::new(0),
        }
    }

    /// Whether batches run on the IFMA kernels (else everything goes to aws-lc-rs).
    pub fn has_kernel(&self) -> bool {
        self.kernel.is_some()
    }

    /// The counters so far.
    pub fn counters(&self) -> Counters {
        Counters {
            batches: self.batches.load(Ordering::Relaxed),
            batched: self.batched.load(Ordering::Relaxed),
            single: self.single.load(Ordering::Relaxed),
            fault_fallbacks: self.fault_fallbacks.load(Ordering::Relaxed),
        }
    }

    /// Signs every request; results in request order. Requests whose keys share a covered
    /// size go through the kernels eight at a time, the rest through aws-lc-rs.
    pub fn sign(&self, requests: &[SignRequest<'_>]) -> Vec<Result<Vec<u8>, MbError>> {
        let mut results: Vec<Option<Result<Vec<u8>, MbError>>> = vec![None; requests.len()];
        if let Some(kernel) = &self.kernel {
            for group in groups(requests) {
                for chunk in group.chunks(ifma::LANES).filter(|c| c.len() > 1) {
                    self.sign_batch(kernel, requests, chunk, &mut results);
                }
            }
        }
        requests
            .iter()
            .zip(results)
            .map(|(request, done)| {
                done.unwrap_or_else(|| {
                    self.single.fetch_add(1, Ordering::Relaxed);
                    self.sign_alone(request)
                })
            })
            .collect()
    }

    fn sign_alone(&self, request: &SignRequest<'_>) -> Result<Vec<u8>, MbError> {
        rsa::sign_single(request.key, request.scheme, request.message, &self.rng)
    }

    /// One batch of the requests at `indices` (all of one key size).
    fn sign_batch(
        &self,
        kernel: &Kernel,
        requests: &[SignRequest<'_>],
        indices: &[usize],
        results: &mut [Option<Result<Vec<u8>, MbError>>],
    ) {
        let mut lanes = Vec::with_capacity(indices.len());
        let mut inputs = Vec::with_capacity(indices.len());
        for &i in indices {
            let request = &requests[i];
            let bits = request.key.bits;
            match request.scheme.encode(request.message, bits, &self.rng) {
                Ok(input) => inputs.push((i, input)),
                Err(err) => results[i] = Some(Err(err)),
            }
        }
        for (i, input) in &inputs {
            if let Some(crt) = &requests[*i].key.crt {
                lanes.push(rsa::Lane { crt, input });
            }
        }
        let len = requests[indices[0]].key.len;
        // Fewer than two lanes left after encoding errors: not worth a batch.
        let Some(signatures) = (lanes.len() > 1)
            .then(|| rsa::private_batch(kernel, &lanes, len))
            .flatten()
        else {
            return;
        };
        self.batches.fetch_add(1, Ordering::Relaxed);
        for (lane, ((i, _), mut signature)) in inputs.iter().zip(signatures).enumerate() {
            self.inject_fault(lane, &mut signature);
            let request = &requests[*i];
            let good = rsa::verified(request.key, request.scheme, request.message, &signature);
            results[*i] = Some(if good {
                self.batched.fetch_add(1, Ordering::Relaxed);
                Ok(signature)
            } else {
                self.fault_fallbacks.fetch_add(1, Ordering::Relaxed);
                self.sign_alone(request)
            });
        }
    }

    #[cfg(test)]
    fn inject_fault(&self, lane: usize, signature: &mut [u8]) {
        if self.corrupt.load(Ordering::Relaxed) & (1 << lane) != 0 {
            if let Some(byte) = signature.last_mut() {
                *byte ^= 1;
            }
        }
    }

    #[cfg(not(test))]
    fn inject_fault(&self, _lane: usize, _signature: &mut [u8]) {}
}

/// Indices of batchable requests, grouped by their keys' limb count (first-seen order).
fn groups(requests: &[SignRequest<'_>]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        let Some(crt) = &request.key.crt else {
            continue;
        };
        match groups.iter_mut().find(|(limbs, _)| *limbs == crt.limbs) {
            Some((_, members)) => members.push(i),
            None => groups.push((crt.limbs, vec![i])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}
