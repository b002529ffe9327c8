//! ECDSA P-256 signatures from nonce pairs computed eight at a time (`global.crypto_batch`,
//! docs/design/0004-batched-crypto.md).
//!
//! rustls calls [`Signer::sign`] synchronously, over a transcript only it knows, so a
//! signature cannot wait for other handshakes. But its expensive half does not depend on the
//! message: tern-mb's `NoncePool` computes `(r, k⁻¹)` pairs with the IFMA kernel, eight per
//! run, and a signature then costs two scalar products mod n. The pool is per thread, so
//! the first signature on a thread with an empty pool runs the kernel synchronously, and the
//! next seven take its pairs: no waiting, no suspended handshake, no thread switch.
//!
//! Every P-256 key tern loads is wrapped ([`wrap`]); the wrapper signs batched only inside
//! [`with_batched_ecdsa`] (the proxy wraps each poll of a handshake in it when
//! `crypto_batch` is on) and when the CPU has AVX-512 IFMA; otherwise, and if the kernel
//! fails, aws-lc-rs signs as before. Counts are per thread ([`take_ecdsa_counts`]), so the
//! proxy adds them to the worker's counters without sharing a cache line between threads.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use rustls::pki_types::{PrivateKeyDer, SubjectPublicKeyInfoDer};
use rustls::sign::{Signer, SigningKey};
use rustls::{Error, SignatureAlgorithm, SignatureScheme};
use tern_mb::p256::{NoncePool, P256Key};
use tern_mb::Kernel;

/// Signatures of this thread since the last [`take_ecdsa_counts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EcdsaCounts {
    /// Kernel runs (eight nonce pairs each).
    pub batches: u64,
    /// Nonce pairs that passed the fault check.
    pub pairs: u64,
    /// Signatures made from them.
    pub signatures: u64,
    /// Nonce pairs dropped by the fault check.
    pub faults: u64,
    /// Signatures asked for batched but made by aws-lc-rs: no IFMA, or the kernel failed.
    pub fallbacks: u64,
}

thread_local! {
    /// Inside [`with_batched_ecdsa`].
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    static POOL: RefCell<Option<NoncePool>> = const { RefCell::new(None) };
    static COUNTS: Cell<EcdsaCounts> = const {
        Cell::new(EcdsaCounts { batches: 0, pairs: 0, signatures: 0, faults: 0, fallbacks: 0 })
    };
}

/// Runs `f` (a step of a handshake) with P-256 signatures made from batched nonce pairs.
pub fn with_batched_ecdsa<R>(f: impl FnOnce() -> R) -> R {
    let before = ENABLED.with(|e| e.replace(true));
    let _restore = Restore(before);
    f()
}

struct Restore(bool);

impl Drop for Restore {
    fn drop(&mut self) {
        ENABLED.with(|e| e.set(self.0));
    }
}

/// Builds the P-256 kernel's tables ahead (on a CPU with IFMA), so that the process's first
/// batched signature does not wait ~55 ms for them. Start-up calls this when `crypto_batch`
/// is on.
pub fn prepare_batched_ecdsa() {
    if Kernel::detect().is_some() && !tern_mb::p256::prepare() {
        tracing::warn!("P-256 nonce tables could not be built: aws-lc-rs will sign alone");
    }
}

/// This thread's counts since the last call (then zero).
pub fn take_ecdsa_counts() -> EcdsaCounts {
    COUNTS.with(Cell::take)
}

fn count(f: impl FnOnce(&mut EcdsaCounts)) {
    COUNTS.with(|c| {
        let mut counts = c.get();
        f(&mut counts);
        c.set(counts);
    });
}

/// `signing_key` wrapped to sign batched when it is a P-256 key (`der` is its DER); other
/// keys are returned as they are.
pub(crate) fn wrap(
    signing_key: Arc<dyn SigningKey>,
    der: &PrivateKeyDer<'_>,
) -> Arc<dyn SigningKey> {
    if signing_key.algorithm() != SignatureAlgorithm::ECDSA {
        return signing_key;
    }
    match P256Key::from_der(der.secret_der()) {
        Ok(key) => Arc::new(BatchedP256 {
            inner: signing_key,
            key: Arc::new(key),
        }),
        // P-384 and P-521 keys: not covered.
        Err(_) => signing_key,
    }
}

/// A P-256 key: aws-lc-rs's, and ours for batched signatures.
#[derive(Debug)]
struct BatchedP256 {
    inner: Arc<dyn SigningKey>,
    key: Arc<P256Key>,
}

impl SigningKey for BatchedP256 {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        let inner = self.inner.choose_scheme(offered)?;
        if inner.scheme() != SignatureScheme::ECDSA_NISTP256_SHA256 {
            return Some(inner);
        }
        Some(Box::new(BatchedSigner {
            inner,
            key: self.key.clone(),
        }))
    }

    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        self.inner.public_key()
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        self.inner.algorithm()
    }
}

#[derive(Debug)]
struct BatchedSigner {
    inner: Box<dyn Signer>,
    key: Arc<P256Key>,
}

impl Signer for BatchedSigner {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, Error> {
        if !ENABLED.with(Cell::get) {
            return self.inner.sign(message);
        }
        match Kernel::detect().and_then(|kernel| sign_batched(&kernel, &self.key, message)) {
            Some(signature) => Ok(signature),
            None => {
                count(|c| c.fallbacks += 1);
                self.inner.sign(message)
            }
        }
    }

    fn scheme(&self) -> SignatureScheme {
        SignatureScheme::ECDSA_NISTP256_SHA256
    }
}

/// A signature from this thread's pool (run the kernel first if it is empty); `None` if
/// three tries gave none (the kernel failed, or `s = 0` three times).
fn sign_batched(kernel: &Kernel, key: &P256Key, message: &[u8]) -> Option<Vec<u8>> {
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        let pool = pool.get_or_insert_with(NoncePool::new);
        let before = pool.counters();
        let mut signature = None;
        // Another pair when s = 0 (probability 1/n) or a run's pairs all failed the check.
        for _ in 0..3 {
            let Some(pair) = pool.take(kernel) else {
                break;
            };
            signature = key.sign(pair, message);
            if signature.is_some() {
                break;
            }
        }
        let after = pool.counters();
        count(|c| {
            c.batches += after.batches - before.batches;
            c.pairs += after.pairs - before.pairs;
            c.faults += after.faults - before.faults;
            c.signatures += u64::from(signature.is_some());
        });
        signature
    })
}

#[cfg(test)]
mod tests;
