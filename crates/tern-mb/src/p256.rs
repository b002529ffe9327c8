//! ECDSA P-256 signatures whose expensive half is computed eight at a time, ahead of the
//! message.
//!
//! rustls asks for a signature synchronously, over a transcript only it knows, so a
//! signature cannot wait for a batch. But most of an ECDSA signature does not depend on the
//! message: for a fresh nonce `k`, the point `k·G`, `r = x(k·G) mod n` and `k⁻¹ mod n`. Only
//! `s = k⁻¹·(z + r·d) mod n` needs the digest `z` and the key `d`: two scalar Montgomery
//! products. So [`NoncePool`] keeps a few *nonce pairs* `(r, k⁻¹)`, computed eight at a time
//! by the IFMA kernel (`kernel.rs`) whenever it runs dry, and [`P256Key::sign`] spends one
//! per signature (docs/design/0004-batched-crypto.md).
//!
//! | file | what |
//! |---|---|
//! | `kernel.rs` | 8 lanes: fixed-base `k·G` (complete mixed additions, masked table scans), affine x and y, `k⁻¹ mod n` |
//! | `table.rs` | moduli constants in radix 2^52, the fixed-base table (from aws-lc, once) |
//! | `scalar.rs` | one lane, 64-bit words: Montgomery arithmetic mod p and n |
//! | `sign.rs` | the fault check, `s`, DER |
//!
//! # Nonces
//!
//! Each `k` is 32 bytes of aws-lc-rs's `SystemRandom`, used only if `1 ≤ k < n` (else drawn
//! again: rejection keeps it uniform), used for one signature and wiped with its pair.
//!
//! # Fault check
//!
//! A pair is used only if its point is on the curve (`y² = x³ − 3x + b`) and
//! `k·k⁻¹ ≡ 1 (mod n)`, both checked by the scalar code, independent of the IFMA kernel; a
//! pair failing either is dropped and counted. Why this instead of verifying each signature
//! with the public key: see the design note.

#[cfg(target_arch = "x86_64")]
mod kernel;
mod scalar;
mod sign;
pub(crate) mod table;
#[cfg(test)]
mod tests;

pub(crate) use sign::Computed;

use crate::ifma::{Kernel, LANES};

/// Builds the kernel's constant tables now (~55 ms of aws-lc scalar multiplications, once per
/// process) rather than in the first signature; whether they could be built.
pub fn prepare() -> bool {
    table::tables().is_some()
}

/// The kernel on chosen scalars (each `1 ≤ k < n`), for the timing test (examples/ct.rs):
/// the low word of each lane's `x`; `None` if the tables could not be built.
#[doc(hidden)]
pub fn kernel_for_timing(kernel: &Kernel, ks: &[[u64; 4]; LANES]) -> Option<[u64; LANES]> {
    let computed = kernel.p256_nonces(ks, table::tables()?);
    Some(std::array::from_fn(|lane| computed[lane].x[0]))
}
pub use sign::{NoncePair, NoncePool, P256Key, PoolCounters};
