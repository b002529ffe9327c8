//! Batched RSA signatures (tern-mb): eight private operations per run of the AVX-512 IFMA
//! kernels, next to aws-lc's one-at-a-time rate in the same table.
//!
//! The batched row signs the same way as the `sign` row (RSA-PSS with SHA-256, the 128-byte
//! message, the same key) through `tern_mb::Batcher`, eight requests per call, so its rate
//! is signatures per second, comparable with `sign/s`. Each batched signature is checked with
//! the public key before it is returned, as it will be in the handshake; that check's
//! cost is included. Without IFMA the row is not measured (it would only measure aws-lc
//! again) and a note says so.

use std::sync::Arc;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::signature::RsaKeyPair;
use tern_mb::{Batcher, RsaKey, Scheme, SignRequest};

use crate::catalog::{Algo, Section};
use crate::measure::{measure, Op, Settings};
use crate::report::Row;
use crate::SpeedError;

/// Signatures per batch: the kernels' lane count.
pub const BATCH: usize = 8;

/// The `operation` of batched rows.
pub const OPERATION: &str = "sign_batched";

/// What the table's batched column means on this CPU.
pub fn note() -> String {
    if Batcher::new().has_kernel() {
        format!(
            "batched/s: RSA-PSS signatures made {BATCH} at a time on AVX-512 IFMA (tern-mb), \
             each verified with the public key; ×sign is batched/s ÷ sign/s (aws-lc, \
             one at a time)"
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
