//! The OpenSSL rows of seed 002's table, through the EVP interface (see `cbc.rs` for what each
//! operation is and why).

use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;
use openssl::error::ErrorStack;
use openssl::hash::{Hasher, MessageDigest};

use super::{row, OPENSSL};
use crate::aead::SIZES;
use crate::catalog::Algo;
use crate::measure::{measure, Op, Settings};
use crate::report::Row;
use crate::sig::progress;
use crate::SpeedError;

/// OpenSSL's name of the stitched cipher.
const STITCHED: &str = "AES-128-CBC-HMAC-SHA1";
/// TLS 1.2's additional data: sequence number, type, version, length.
const AAD_LEN: usize = 13;
/// SHA-1's block: HMAC pads its key to this.
const SHA1_BLOCK: usize = 64;

fn evp(what: &str) -> impl Fn(ErrorStack) -> SpeedError + '_ {
    move |err| SpeedError::crypto(format!("openssl {what}"), err)
}

/// The CBC rows (stitched, or composed where OpenSSL has no stitched cipher) and the GCM rows.
pub fn run(settings: &Settings) -> Result<Vec<Row>, SpeedError> {
    let stitched = stitched_cipher();
    let operation = if stitched.is_some() {
        "stitched"
    } else {
        "composed"
    };
    let mut rows = Vec::new();
    for size in SIZES {
        let what = format!("{operation} {size} bytes (openssl)");
        progress(Algo::Aes128CbcHmacSha1, &what, settings);
        let measured = match &stitched {
            Some(cipher) => measure(settings, || stitched_op(cipher, size))?,
            None => measure(settings, || composed_op(size))?,
        };
        rows.push(row(
            "aes-128-cbc-hmac-sha1",
            operation,
            OPENSSL,
            size,
            &measured,
        ));
    }
    for size in SIZES {
        progress(
            Algo::Aes128Gcm,
            &format!("seal {size} bytes (openssl)"),
            settings,
        );
        let measured = measure(settings, || gcm_op(size))?;
        rows.push(row("aes-128-gcm", "seal", OPENSSL, size, &measured));
    }
    Ok(rows)
}

/// The stitched cipher, if this OpenSSL has it and it works on this CPU.
fn stitched_cipher() -> Option<Cipher> {
    let cipher = Cipher::fetch(None, STITCHED, None).ok()?;
    // The provider offers it only where its assembly runs; check that it encrypts.
    let works = stitched_op(&cipher, 16).and_then(|mut op| op(&mut Default::default()));
    works.is_ok().then_some(cipher)
}

/// Random bytes for a key or IV.
fn random(len: usize) -> Result<Vec<u8>, SpeedError> {
    let mut bytes = vec![0u8; len];
    openssl::rand::rand_bytes(&mut bytes).map_err(evp("random bytes"))?;
    Ok(bytes)
}

/// A context for `cipher` keyed and ready to encrypt.
fn encrypting(cipher: &CipherRef) -> Result<CipherCtx, SpeedError> {
    let key = random(cipher.key_length())?;
    let iv = random(cipher.iv_length())?;
    let mut ctx = CipherCtx::new().map_err(evp("context"))?;
    ctx.encrypt_init(Some(cipher), Some(&key), Some(&iv))
        .map_err(evp("encrypt init"))?;
    Ok(ctx)
}

/// One `EVP_EncryptUpdate` of `size` bytes through the stitched cipher, state carried on.
fn stitched_op<'a>(cipher: &CipherRef, size: usize) -> Result<Op<'a>, SpeedError> {
    let mut ctx = encrypting(cipher)?;
    let input = vec![0u8; size];
    let mut output = vec![0u8; size + cipher.block_size()];
    Ok(Box::new(move |_| {
        ctx.cipher_update(&input, Some(&mut output))
            .map(drop)
            .map_err(evp("stitched update"))
    }))
}

/// AES-128-CBC of `size` bytes (chain carried on), then HMAC-SHA1 of the record from the
/// key's precomputed inner and outer states, as HMAC implementations keep them.
fn composed_op<'a>(size: usize) -> Result<Op<'a>, SpeedError> {
    let cipher = Cipher::aes_128_cbc();
    let mut ctx = encrypting(cipher)?;
    let (inner, outer) = hmac_states(&random(20)?)?;
    let input = vec![0u8; size];
    let mut output = vec![0u8; size + cipher.block_size()];
    Ok(Box::new(move |_| {
        ctx.cipher_update(&input, Some(&mut output))
            .map_err(evp("CBC update"))?;
        let mut mac = inner.clone();
        mac.update(&input).map_err(evp("HMAC"))?;
        let digest = mac.finish().map_err(evp("HMAC"))?;
        let mut out = outer.clone();
        out.update(&digest).map_err(evp("HMAC"))?;
        out.finish().map(drop).map_err(evp("HMAC"))
    }))
}

/// SHA-1 states after the HMAC key's inner and outer pads (RFC 2104).
fn hmac_states(key: &[u8]) -> Result<(Hasher, Hasher), SpeedError> {
    let pad = |byte: u8| {
        let mut block = [byte; SHA1_BLOCK];
        for (b, k) in block.iter_mut().zip(key) {
            *b ^= k;
        }
        block
    };
    let state = |block: [u8; SHA1_BLOCK]| {
        let mut h = Hasher::new(MessageDigest::sha1())?;
        h.update(&block)?;
        Ok(h)
    };
    let inner = state(pad(0x36)).map_err(evp("HMAC key"))?;
    let outer = state(pad(0x5c)).map_err(evp("HMAC key"))?;
    Ok((inner, outer))
}

/// AES-128-GCM sealing one record: new nonce, 13 bytes of additional data, the record, the tag.
fn gcm_op<'a>(size: usize) -> Result<Op<'a>, SpeedError> {
    let mut ctx = encrypting(Cipher::aes_128_gcm())?;
    let aad = [0u8; AAD_LEN];
    let input = vec![0u8; size];
    let mut output = vec![0u8; size + 16];
    let mut tag = [0u8; 16];
    let mut sequence = 0u64;
    Ok(Box::new(move |_| {
        sequence = sequence.wrapping_add(1);
        let mut nonce = [0u8; 12];
        nonce[4..].copy_from_slice(&sequence.to_be_bytes());
        let mut seal = || -> Result<(), ErrorStack> {
            ctx.encrypt_init(None, None, Some(&nonce))?;
            ctx.cipher_update(&aad, None)?;
            let n = ctx.cipher_update(&input, Some(&mut output))?;
            ctx.cipher_final(&mut output[n..])?;
            ctx.tag(&mut tag)
        };
        seal().map_err(evp("GCM seal"))
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use openssl::pkey::PKey;
    use openssl::sign::Signer;

    use super::*;

    #[test]
    fn hmac_from_precomputed_states_is_hmac_sha1() {
        let key = [7u8; 20];
        let (mut inner, mut outer) = hmac_states(&key).unwrap();
        inner.update(b"record").unwrap();
        outer.update(&inner.finish().unwrap()).unwrap();
        let ours = outer.finish().unwrap();
        let pkey = PKey::hmac(&key).unwrap();
        let mut signer = Signer::new(MessageDigest::sha1(), &pkey).unwrap();
        signer.update(b"record").unwrap();
        assert_eq!(&ours[..], &signer.sign_to_vec().unwrap()[..]);
    }

    #[test]
    fn every_operation_runs_at_every_size() {
        let split = &mut Default::default();
        for size in SIZES {
            composed_op(size).unwrap()(split).unwrap();
            gcm_op(size).unwrap()(split).unwrap();
            if let Some(cipher) = stitched_cipher() {
                stitched_op(&cipher, size).unwrap()(split).unwrap();
            }
        }
    }
}
