//! Batched RSA signatures (tern-mb): eight private operations per run of the AVX-512 IFMA
//! kernels, next to aws-lc's one-at-a-time rate in the same table.
//!
//! The batched row signs the same way as the `sign` row (RSA-PSS with SHA-256, the 128-byte
//! message, the same key) through `tern_mb::Batcher`, eight requests per call, so its rate
//! is signatures per second, comparable with `sign/s`. Each batched signature is checked with
//! the public key before it is returned, as it will be in the handshake; that check's
//! cost is included. Without IFMA the row is not measured (it would only measure aws-lc
//! again) and a note says so.
//!
//! ECDSA P-256 gets a batched row too, counted per signature like `sign`: nonce pairs
//! (`k·G`, `r`, `k⁻¹`) computed eight per kernel run into a pool and fault-checked (point on
//! the curve, `k·k⁻¹ = 1`), then each signature `s = k⁻¹(z + r·d)` from one pair, as tern's
//! handshakes sign with `crypto_batch` on; the kernel's cost is spread over its eight
//! signatures. These are not verified (docs/design/0004-batched-crypto.md says why).
//!
//! X25519 gets two rows in the key agreement table, counted per operation like the aws-lc
//! rows above them: `keygen_batched` (eight random scalars from aws-lc-rs's generator and
//! their public keys, by the ladder on u = 9: tern-mb has no fixed-base table, aws-lc's
//! `keygen` has) and `derive_batched` (eight shared secrets, eight different scalars and
//! peer keys, as `derive` from a parsed peer key).

use std::sync::Arc;

use aws_lc_rs::agreement::{PrivateKey, X25519};
use aws_lc_rs::encoding::{AsBigEndian, AsDer};
use aws_lc_rs::rand;
use aws_lc_rs::signature::{EcdsaKeyPair, RsaKeyPair};
use tern_mb::p256::{NoncePool, P256Key};
use tern_mb::{x25519_base_x8, x25519_x8, Batcher, Kernel, RsaKey, Scheme, SignRequest};

use crate::catalog::{Algo, Section};
use crate::measure::{measure, Op, Settings};
use crate::report::Row;
use crate::SpeedError;

/// Signatures per batch: the kernels' lane count.
pub const BATCH: usize = 8;

/// The `operation` of batched rows.
pub const OPERATION: &str = "sign_batched";

/// The `operation` of the batched X25519 rows.
pub const X25519_KEYGEN: &str = "keygen_batched";
pub const X25519_DERIVE: &str = "derive_batched";

/// What the table's batched column means on this CPU.
pub fn note() -> String {
    if Batcher::new().has_kernel() {
        format!(
            "batched/s: RSA-PSS signatures made {BATCH} at a time on AVX-512 IFMA (tern-mb), \
             each verified with the public key; ECDSA P-256 signatures from nonce pairs \
             computed {BATCH} at a time, each pair fault-checked; ×sign is batched/s ÷ \
             sign/s (aws-lc, one at a time). X25519 keygen_batched and derive_batched: {BATCH} at a time, \
             per operation"
        )
    } else {
        "batched/s: this CPU lacks AVX-512 IFMA, so tern-mb would sign with aws-lc one at a \
         time; batched rows not measured"
            .to_owned()
    }
}

/// The batched row of one RSA key, or `None` without IFMA.
pub fn measure_rsa(
    algo: Algo,
    key: &RsaKeyPair,
    message: &[u8],
    settings: &Settings,
) -> Result<Option<Row>, SpeedError> {
    if !Batcher::new().has_kernel() {
        return Ok(None);
    }
    let what = || format!("{} batched key", algo.name());
    let der = key
        .as_der()
        .map_err(|err| SpeedError::crypto(what(), err))?;
    let key = RsaKey::from_der(der.as_ref()).map_err(|err| SpeedError::crypto(what(), err))?;
    let key = Arc::new(key);
    if !key.batchable() {
        return Ok(None);
    }
    crate::sig::progress(algo, "batched sign", settings);
    let batcher = Arc::new(Batcher::new());
    let mut measured = measure(settings, || {
        let (key, batcher) = (key.clone(), batcher.clone());
        let op: Op = Box::new(move |_| {
            let request = SignRequest {
                key: &key,
                scheme: Scheme::PssSha256,
                message,
            };
            for result in batcher.sign(&[request; BATCH]) {
                result.map_err(|err| SpeedError::crypto("batched signing", err))?;
            }
            Ok(())
        });
        Ok(op)
    })?;
    let faults = batcher.counters().fault_fallbacks;
    if faults > 0 {
        eprintln!("warning: {faults} batched signature(s) failed the public-exponent check");
    }
    measured.ops *= BATCH as u64;
    measured.rate *= BATCH as f64;
    Ok(Some(Row::new(
        Section::Signature,
        algo.name(),
        OPERATION,
        &measured,
    )))
}

/// The batched row of an ECDSA P-256 key, or `None` without IFMA.
pub fn measure_p256(
    algo: Algo,
    key: &EcdsaKeyPair,
    message: &'static [u8],
    settings: &Settings,
) -> Result<Option<Row>, SpeedError> {
    let Some(kernel) = Kernel::detect() else {
        return Ok(None);
    };
    let what = || format!("{} batched key", algo.name());
    let scalar = key
        .private_key()
        .as_be_bytes()
        .map_err(|err| SpeedError::crypto(what(), err))?;
    let scalar: &[u8; 32] = scalar
        .as_ref()
        .try_into()
        .map_err(|_| SpeedError::crypto(what(), "not a 32-byte scalar"))?;
    let key = Arc::new(
        P256Key::from_scalar(scalar).ok_or_else(|| SpeedError::crypto(what(), "out of range"))?,
    );
    crate::sig::progress(algo, "batched sign", settings);
    let measured = measure(settings, || {
        let (key, mut pool) = (key.clone(), NoncePool::new());
        let op: Op = Box::new(move |_| {
            let failed = || SpeedError::crypto("batched ECDSA signing", "no nonce pair");
            let pair = pool.take(&kernel).ok_or_else(failed)?;
            key.sign(pair, message).map(drop).ok_or_else(failed)
        });
        Ok(op)
    })?;
    Ok(Some(Row::new(
        Section::Signature,
        algo.name(),
        OPERATION,
        &measured,
    )))
}

/// The batched X25519 rows (`keygen_batched`, `derive_batched`), none without IFMA.
pub fn measure_x25519(settings: &Settings) -> Result<Vec<Row>, SpeedError> {
    let random = |err| SpeedError::crypto("random scalar", err);
    let peer_key = |err| SpeedError::crypto("peer key", err);
    let mut scalars = [[0u8; 32]; BATCH];
    let mut points = [[0u8; 32]; BATCH];
    for (scalar, point) in scalars.iter_mut().zip(&mut points) {
        rand::fill(scalar).map_err(random)?;
        let peer = PrivateKey::generate(&X25519).map_err(peer_key)?;
        let public = peer.compute_public_key().map_err(peer_key)?;
        point.copy_from_slice(public.as_ref());
    }
    if x25519_x8(&scalars, &points).is_none() {
        return Ok(Vec::new());
    }
    let missing = || SpeedError::crypto("batched X25519", "the IFMA kernel went away");
    crate::sig::progress(Algo::X25519, X25519_KEYGEN, settings);
    let keygen = measure(settings, || {
        let op: Op = Box::new(move |_| {
            let mut fresh = [[0u8; 32]; BATCH];
            for scalar in &mut fresh {
                rand::fill(scalar).map_err(random)?;
            }
            x25519_base_x8(&fresh).map(drop).ok_or_else(missing)
        });
        Ok(op)
    })?;
    crate::sig::progress(Algo::X25519, X25519_DERIVE, settings);
    let derive = measure(settings, || {
        let (scalars, points) = (&scalars, &points);
        let op: Op = Box::new(move |_| x25519_x8(scalars, points).map(drop).ok_or_else(missing));
        Ok(op)
    })?;
    Ok([(X25519_KEYGEN, keygen), (X25519_DERIVE, derive)]
        .into_iter()
        .map(|(operation, mut measured)| {
            measured.ops *= BATCH as u64;
            measured.rate *= BATCH as f64;
            Row::new(
                Section::KeyAgreement,
                Algo::X25519.name(),
                operation,
                &measured,
            )
        })
        .collect())
}
