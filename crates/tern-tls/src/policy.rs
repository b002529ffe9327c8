//! A bind's negotiation policy (`tern_config::TlsPolicy`) turned into rustls terms.
//!
//! The policy's suites and groups select from tern's provider (so its TLS 1.3 suites keep the
//! keyed-HMAC HKDF of `hkdf.rs` and the handshake costs the same); the default policy reuses the
//! process-wide provider itself. Signature schemes are restricted by wrapping each signing key
//! ([`RestrictedKey`]), because rustls asks the key, not the configuration, which scheme to sign
//! with. All of this happens once per configuration: nothing is added to a handshake but a
//! filter over the client's short scheme list.

use std::sync::Arc;

use rustls::crypto::aws_lc_rs::{cipher_suite as cs, kx_group};
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls::sign::{CertifiedKey, Signer, SigningKey};
use rustls::{SignatureAlgorithm, SignatureScheme, SupportedCipherSuite, SupportedProtocolVersion};
use rustls_pki_types::SubjectPublicKeyInfoDer;
use tern_config::model::{KxGroup, SigAlg, Tls12Cipher, Tls13Suite, TlsPolicy, TlsVersion};

use crate::hkdf::with_hmac_hkdf;
use crate::provider::provider;

/// The provider for `policy`: tern's own when the policy is the default.
pub(crate) fn provider_for(policy: &TlsPolicy) -> Arc<CryptoProvider> {
    let default = TlsPolicy::default();
    if policy.suites == default.suites
        && policy.ciphers == default.ciphers
        && policy.groups == default.groups
    {
        return provider();
    }
    let tls13 = policy
        .suites
        .iter()
        .map(|&s| with_hmac_hkdf(tls13_suite(s)));
    let tls12 = policy.ciphers.iter().map(|&c| tls12_cipher(c));
    Arc::new(CryptoProvider {
        cipher_suites: tls13.chain(tls12).collect(),
        kx_groups: policy.groups.iter().map(|&g| group(g)).collect(),
        ..(*provider()).clone()
    })
}

/// The protocol versions between `min_version` and `max_version`, newest first.
pub(crate) fn versions(policy: &TlsPolicy) -> Vec<&'static SupportedProtocolVersion> {
    let mut versions = Vec::with_capacity(2);
    let enabled = |v: TlsVersion| policy.min_version <= v && v <= policy.max_version;
    if enabled(TlsVersion::Tls13) {
        versions.push(&rustls::version::TLS13);
    }
    if enabled(TlsVersion::Tls12) {
        versions.push(&rustls::version::TLS12);
    }
    versions
}

fn tls13_suite(suite: Tls13Suite) -> SupportedCipherSuite {
    match suite {
        Tls13Suite::Aes128Gcm => cs::TLS13_AES_128_GCM_SHA256,
        Tls13Suite::Aes256Gcm => cs::TLS13_AES_256_GCM_SHA384,
        Tls13Suite::Chacha20 => cs::TLS13_CHACHA20_POLY1305_SHA256,
    }
}

fn tls12_cipher(cipher: Tls12Cipher) -> SupportedCipherSuite {
    match cipher {
        Tls12Cipher::EcdheEcdsaAes128Gcm => cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        Tls12Cipher::EcdheRsaAes128Gcm => cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        Tls12Cipher::EcdheEcdsaAes256Gcm => cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        Tls12Cipher::EcdheRsaAes256Gcm => cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        Tls12Cipher::EcdheEcdsaChacha20 => cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        Tls12Cipher::EcdheRsaChacha20 => cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    }
}

fn group(group: KxGroup) -> &'static dyn SupportedKxGroup {
    match group {
        KxGroup::X25519 => crate::prepared_kx::X25519,
        KxGroup::X25519Mlkem768 => kx_group::X25519MLKEM768,
        KxGroup::Secp256r1 => kx_group::SECP256R1,
        KxGroup::Secp384r1 => kx_group::SECP384R1,
    }
}

/// The rustls scheme of a configured signature algorithm.
pub(crate) fn scheme(alg: SigAlg) -> SignatureScheme {
    match alg {
        SigAlg::EcdsaP256Sha256 => SignatureScheme::ECDSA_NISTP256_SHA256,
        SigAlg::EcdsaP384Sha384 => SignatureScheme::ECDSA_NISTP384_SHA384,
        SigAlg::Ed25519 => SignatureScheme::ED25519,
        SigAlg::RsaPssSha256 => SignatureScheme::RSA_PSS_SHA256,
        SigAlg::RsaPssSha384 => SignatureScheme::RSA_PSS_SHA384,
        SigAlg::RsaPssSha512 => SignatureScheme::RSA_PSS_SHA512,
        SigAlg::RsaPkcs1Sha256 => SignatureScheme::RSA_PKCS1_SHA256,
        SigAlg::RsaPkcs1Sha384 => SignatureScheme::RSA_PKCS1_SHA384,
        SigAlg::RsaPkcs1Sha512 => SignatureScheme::RSA_PKCS1_SHA512,
    }
}

/// `key` restricted to `allowed` signature schemes (in that order of preference).
pub(crate) fn restrict(key: &CertifiedKey, allowed: &Arc<[SignatureScheme]>) -> CertifiedKey {
    let mut restricted = key.clone();
    restricted.key = Arc::new(RestrictedKey {
        inner: key.key.clone(),
        allowed: allowed.clone(),
    });
    restricted
}

/// A signing key that signs only with the configured schemes.
#[derive(Debug)]
struct RestrictedKey {
    inner: Arc<dyn SigningKey>,
    allowed: Arc<[SignatureScheme]>,
}

impl SigningKey for RestrictedKey {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        self.allowed
            .iter()
            .filter(|scheme| offered.contains(scheme))
            .find_map(|scheme| self.inner.choose_scheme(std::slice::from_ref(scheme)))
    }

    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        self.inner.public_key()
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        self.inner.algorithm()
    }
}
