//! Record ciphers: AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305 seal, bytes per second at
//! 16, 64, 256, 1024, 8192 and 16384 bytes (openssl speed's sizes; 16384 is TLS's largest
//! record).
//!
//! One operation is what rustls does per record with aws-lc-rs: seal a buffer in place under
//! a fresh nonce (a counter, as TLS derives it from the sequence number) with 13 bytes of
//! additional data and a separate 16-byte tag. That is the "TLS-like sequence" of
//! `openssl speed -aead` (new IV, AAD, update, final, tag), which is what tern compares with;
//! plain `openssl speed -evp` streams one long message and measures no per-record cost.

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey, NONCE_LEN};

use crate::catalog::{Algo, Section};
use crate::measure::{measure, Op, Settings};
use crate::report::Row;
use crate::sig::progress;
use crate::SpeedError;

/// Record sizes measured, in bytes.
pub const SIZES: [usize; 6] = [16, 64, 256, 1024, 8192, 16384];

/// The additional data of a TLS 1.2 record (sequence number, type, version, length).
const AAD_LEN: usize = 13;

pub(crate) fn algorithm(algo: Algo) -> Option<&'static aead::Algorithm> {
    match algo {
        Algo::Aes128Gcm => Some(&aead::AES_128_GCM),
        Algo::Aes256Gcm => Some(&aead::AES_256_GCM),
        Algo::Chacha20Poly1305 => Some(&aead::CHACHA20_POLY1305),
        _ => None,
    }
}

/// Measures every selected cipher at every size.
pub fn run(algos: &[Algo], settings: &Settings) -> Result<Vec<Row>, SpeedError> {
    let mut rows = Vec::new();
    for &algo in algos {
        let Some(alg) = algorithm(algo) else { continue };
        for size in SIZES {
            progress(algo, &format!("seal {size} bytes"), settings);
            let measured = measure(settings, || sealer(alg, size))?;
            let mut row = Row::new(Section::Cipher, algo.name(), "seal", &measured);
            row.set_bytes(size);
            rows.push(row);
        }
    }
    Ok(rows)
}

/// A thread's sealing loop: its own key, buffer and nonce counter.
pub(crate) fn sealer<'a>(alg: &'static aead::Algorithm, size: usize) -> Result<Op<'a>, SpeedError> {
    let mut key_bytes = vec![0u8; alg.key_len()];
    aws_lc_rs::rand::fill(&mut key_bytes).map_err(|err| SpeedError::crypto("random key", err))?;
    let key = UnboundKey::new(alg, &key_bytes)
        .map(LessSafeKey::new)
        .map_err(|err| SpeedError::crypto("cipher key", err))?;
    let mut buffer = vec![0u8; size];
    let mut sequence = 0u64;
    let aad = [0u8; AAD_LEN];
    Ok(Box::new(move |_| {
        sequence = sequence.wrapping_add(1);
        let mut nonce = [0u8; NONCE_LEN];
        nonce[NONCE_LEN - 8..].copy_from_slice(&sequence.to_be_bytes());
        key.seal_in_place_separate_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(aad),
            &mut buffer,
        )
        .map(drop)
        .map_err(|err| SpeedError::crypto("seal", err))
    }))
}
