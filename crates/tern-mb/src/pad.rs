//! Signature encodings (RFC 8017): the integer the private operation raises to `d`.
//!
//! The batched path encodes here and the fallback lets aws-lc-rs encode, so each scheme maps
//! to aws-lc-rs's own algorithm too ([`Scheme::aws_lc`]): PKCS#1 v1.5 is deterministic, so
//! both paths give the same bytes (the tests compare them); PSS draws a fresh salt of the
//! hash's length, as aws-lc and rustls do.

use aws_lc_rs::digest::{self, Algorithm};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use aws_lc_rs::signature::{self, RsaEncoding};

use crate::MbError;

/// The RSA signature schemes of TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Pkcs1Sha256,
    Pkcs1Sha384,
    Pkcs1Sha512,
    PssSha256,
    PssSha384,
    PssSha512,
}

/// DER `DigestInfo` prefixes (RFC 8017 §9.2, note 1).
const SHA256_PREFIX: &[u8] = &[
    0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05,
    0x00, 0x04, 0x20,
];
const SHA384_PREFIX: &[u8] = &[
    0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05,
    0x00, 0x04, 0x30,
];
const SHA512_PREFIX: &[u8] = &[
    0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05,
    0x00, 0x04, 0x40,
];

impl Scheme {
    fn digest(self) -> &'static Algorithm {
        match self {
            Scheme::Pkcs1Sha256 | Scheme::PssSha256 => &digest::SHA256,
            Scheme::Pkcs1Sha384 | Scheme::PssSha384 => &digest::SHA384,
            Scheme::Pkcs1Sha512 | Scheme::PssSha512 => &digest::SHA512,
        }
    }

    /// aws-lc-rs's signing algorithm for the same scheme (the fallback).
    pub fn aws_lc(self) -> &'static dyn RsaEncoding {
        match self {
            Scheme::Pkcs1Sha256 => &signature::RSA_PKCS1_SHA256,
            Scheme::Pkcs1Sha384 => &signature::RSA_PKCS1_SHA384,
            Scheme::Pkcs1Sha512 => &signature::RSA_PKCS1_SHA512,
            Scheme::PssSha256 => &signature::RSA_PSS_SHA256,
            Scheme::PssSha384 => &signature::RSA_PSS_SHA384,
            Scheme::PssSha512 => &signature::RSA_PSS_SHA512,
        }
    }

    /// aws-lc-rs's verification algorithm for the same scheme (the fault check).
    pub(crate) fn aws_lc_verify(self) -> &'static signature::RsaParameters {
        match self {
            Scheme::Pkcs1Sha256 => &signature::RSA_PKCS1_2048_8192_SHA256,
            Scheme::Pkcs1Sha384 => &signature::RSA_PKCS1_2048_8192_SHA384,
            Scheme::Pkcs1Sha512 => &signature::RSA_PKCS1_2048_8192_SHA512,
            Scheme::PssSha256 => &signature::RSA_PSS_2048_8192_SHA256,
            Scheme::PssSha384 => &signature::RSA_PSS_2048_8192_SHA384,
            Scheme::PssSha512 => &signature::RSA_PSS_2048_8192_SHA512,
        }
    }

    /// The encoded message for a modulus of `modulus_bits`, as `ceil(bits/8)` big-endian
    /// bytes (so always below the modulus).
    pub fn encode(
        self,
        message: &[u8],
        modulus_bits: usize,
        rng: &SystemRandom,
    ) -> Result<Vec<u8>, MbError> {
        let hash = digest::digest(self.digest(), message);
        let len = modulus_bits.div_ceil(8);
        match self {
            Scheme::Pkcs1Sha256 => pkcs1(SHA256_PREFIX, hash.as_ref(), len),
            Scheme::Pkcs1Sha384 => pkcs1(SHA384_PREFIX, hash.as_ref(), len),
            Scheme::Pkcs1Sha512 => pkcs1(SHA512_PREFIX, hash.as_ref(), len),
            _ => pss(self.digest(), hash.as_ref(), modulus_bits, rng),
        }
    }
}

/// EMSA-PKCS1-v1_5: `00 01 FF…FF 00 DigestInfo`.
fn pkcs1(prefix: &[u8], hash: &[u8], len: usize) -> Result<Vec<u8>, MbError> {
    let t = prefix.len() + hash.len();
    if len < t + 11 {
        return Err(MbError::Encoding("modulus too short for PKCS#1 v1.5"));
    }
    let mut em = vec![0xff; len];
    em[0] = 0;
    em[1] = 1;
    em[len - t - 1] = 0;
    em[len - t..len - hash.len()].copy_from_slice(prefix);
    em[len - hash.len()..].copy_from_slice(hash);
    Ok(em)
}

/// EMSA-PSS-ENCODE (RFC 8017 §9.1.1) with MGF1 over the same hash and a salt of the hash's
/// length, left-padded with a zero byte to the modulus length when `modulus_bits - 1` is a
/// multiple of 8.
fn pss(
    alg: &'static Algorithm,
    hash: &[u8],
    modulus_bits: usize,
    rng: &SystemRandom,
) -> Result<Vec<u8>, MbError> {
    let h_len = hash.len();
    let em_bits = modulus_bits - 1;
    let em_len = em_bits.div_ceil(8);
    if em_len < 2 * h_len + 2 {
        return Err(MbError::Encoding("modulus too short for PSS"));
    }
    let mut salt = vec![0u8; h_len];
    rng.fill(&mut salt).map_err(|_| MbError::Random)?;
    let mut ctx = digest::Context::new(alg);
    ctx.update(&[0u8; 8]);
    ctx.update(hash);
    ctx.update(&salt);
    let h = ctx.finish();

    let db_len = em_len - h_len - 1;
    let mut db = vec![0u8; db_len];
    db[db_len - h_len - 1] = 1;
    db[db_len - h_len..].copy_from_slice(&salt);
    mgf1_xor(alg, h.as_ref(), &mut db);
    db[0] &= 0xff >> (8 * em_len - em_bits);

    let mut em = Vec::with_capacity(modulus_bits.div_ceil(8));
    em.resize(modulus_bits.div_ceil(8) - em_len, 0);
    em.extend_from_slice(&db);
    em.extend_from_slice(h.as_ref());
    em.push(0xbc);
    Ok(em)
}

/// `out ^= MGF1(seed, out.len())`.
fn mgf1_xor(alg: &'static Algorithm, seed: &[u8], out: &mut [u8]) {
    for (counter, chunk) in out.chunks_mut(alg.output_len()).enumerate() {
        let mut ctx = digest::Context::new(alg);
        ctx.update(seed);
        ctx.update(&(counter as u32).to_be_bytes());
        let mask = ctx.finish();
        for (byte, m) in chunk.iter_mut().zip(mask.as_ref()) {
            *byte ^= m;
        }
    }
}
