//! TLS 1.3 cipher suites whose key schedule runs HKDF on HMAC directly.
//!
//! Why: profiling full handshakes (`perf record -g`, TLS_AES_256_GCM_SHA384 against HAProxy)
//! showed SHA-384 compressions as the client's largest single cost, ahead of X25519. rustls'
//! aws-lc-rs provider computes each HKDF-Expand-Label through aws-lc's one-shot `HKDF`, which
//! runs HKDF-Extract again (and sets up two HMAC keys) for every derived secret. rustls'
//! [`HkdfUsingHmac`] extracts once, keeps the pseudorandom key as an HMAC key, and expands each
//! label with one HMAC: the same RFC 5869 output for a fraction of the hashing. The AEAD, hash
//! and everything else of the suite are the provider's own; only the HKDF plumbing changes.

use std::sync::OnceLock;

use aws_lc_rs::hmac;
use rustls::crypto::hash::HashAlgorithm;
use rustls::crypto::tls13::HkdfUsingHmac;
use rustls::{CipherSuiteCommon, SupportedCipherSuite, Tls13CipherSuite};

/// An HMAC from aws-lc-rs, in rustls' terms.
struct Hmac(&'static hmac::Algorithm);

static HMAC_SHA256: Hmac = Hmac(&hmac::HMAC_SHA256);
static HMAC_SHA384: Hmac = Hmac(&hmac::HMAC_SHA384);
static HKDF_SHA256: HkdfUsingHmac<'static> = HkdfUsingHmac(&HMAC_SHA256);
static HKDF_SHA384: HkdfUsingHmac<'static> = HkdfUsingHmac(&HMAC_SHA384);

impl rustls::crypto::hmac::Hmac for Hmac {
    fn with_key(&self, key: &[u8]) -> Box<dyn rustls::crypto::hmac::Key> {
        Box::new(Key(hmac::Key::new(*self.0, key)))
    }

    fn hash_output_len(&self) -> usize {
        self.0.digest_algorithm().output_len()
    }
}

/// A keyed HMAC: the key's inner and outer states are computed once, here.
struct Key(hmac::Key);

impl rustls::crypto::hmac::Key for Key {
    fn sign_concat(
        &self,
        first: &[u8],
        middle: &[&[u8]],
        last: &[u8],
    ) -> rustls::crypto::hmac::Tag {
        let mut ctx = hmac::Context::with_key(&self.0);
        ctx.update(first);
        for part in middle {
            ctx.update(part);
        }
        ctx.update(last);
        rustls::crypto::hmac::Tag::new(ctx.sign().as_ref())
    }

    fn tag_len(&self) -> usize {
        self.0.algorithm().digest_algorithm().output_len()
    }
}

/// The provider's TLS 1.3 suites, rebuilt once with the HMAC-based HKDF.
fn rebuilt() -> &'static [Tls13CipherSuite] {
    static SUITES: OnceLock<Vec<Tls13CipherSuite>> = OnceLock::new();
    SUITES.get_or_init(|| {
        rustls::crypto::aws_lc_rs::ALL_CIPHER_SUITES
            .iter()
            .filter_map(|s| s.tls13())
            .filter_map(|s| {
                let hkdf = match s.common.hash_provider.algorithm() {
                    HashAlgorithm::SHA256 => &HKDF_SHA256,
                    HashAlgorithm::SHA384 => &HKDF_SHA384,
                    _ => return None,
                };
                Some(Tls13CipherSuite {
                    common: CipherSuiteCommon {
                        suite: s.common.suite,
                        hash_provider: s.common.hash_provider,
                        confidentiality_limit: s.common.confidentiality_limit,
                    },
                    hkdf_provider: hkdf,
                    aead_alg: s.aead_alg,
                    quic: s.quic,
                })
            })
            .collect()
    })
}

/// `suite` with the HMAC-based HKDF if it is a TLS 1.3 suite of the provider; else unchanged.
pub fn faster(suite: SupportedCipherSuite) -> SupportedCipherSuite {
    match suite {
        SupportedCipherSuite::Tls13(s) => rebuilt()
            .iter()
            .find(|r| r.common.suite == s.common.suite)
            .map_or(suite, SupportedCipherSuite::Tls13),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use rustls::crypto::tls13::Hkdf;

    use super::*;

    /// RFC 5869 test case 1 (SHA-256), and the same derivation through the provider's own
    /// HKDF for SHA-384: both implementations must agree byte for byte.
    #[test]
    fn matches_rfc5869_and_the_providers_hkdf() {
        let ikm = [0x0b; 22];
        let salt: Vec<u8> = (0x00..=0x0c).collect();
        let info: Vec<u8> = (0xf0..=0xf9).collect();
        let mut okm = [0u8; 42];
        HKDF_SHA256
            .extract_from_secret(Some(&salt), &ikm)
            .expand_slice(&[&info], &mut okm)
            .unwrap_or_else(|_| panic!("42 bytes is a valid HKDF-SHA256 length"));
        let expected = "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf\
                        34007208d5b887185865";
        let hex: String = okm.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, expected);

        for suite in rustls::crypto::aws_lc_rs::ALL_CIPHER_SUITES {
            let Some(theirs) = suite.tls13() else {
                continue;
            };
            let SupportedCipherSuite::Tls13(ours) = faster(*suite) else {
                panic!("a TLS 1.3 suite stays TLS 1.3");
            };
            assert!(!std::ptr::eq(ours, theirs));
            assert_eq!(ours.common.suite, theirs.common.suite);
            let a = ours.hkdf_provider.extract_from_secret(Some(&salt), &ikm);
            let b = theirs.hkdf_provider.extract_from_secret(Some(&salt), &ikm);
            assert_eq!(
                a.expand_block(&[b"tls13 ", &info]).as_ref(),
                b.expand_block(&[b"tls13 ", &info]).as_ref()
            );
            let zero_a = ours.hkdf_provider.extract_from_zero_ikm(None);
            let zero_b = theirs.hkdf_provider.extract_from_zero_ikm(None);
            assert_eq!(
                zero_a.expand_block(&[&info]).as_ref(),
                zero_b.expand_block(&[&info]).as_ref()
            );
        }
        let tls12 = rustls::crypto::aws_lc_rs::cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256;
        assert!(faster(tls12).tls13().is_none());
    }
}
