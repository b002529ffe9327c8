//! tern's TLS policy, expressed as one rustls [`CryptoProvider`] built on aws-lc-rs.
//!
//! Every server and client configuration in tern is built from [`provider()`], so the policy
//! lives in exactly one place and another crypto backend can later be added by changing only
//! this module.
//!
//! Why this policy:
//! - **No TLS below 1.2, AEAD only, forward secrecy only.** The TLS 1.2 suites are ECDHE with
//!   AES-GCM or ChaCha20-Poly1305; no CBC, no static RSA key exchange, no finite-field DHE. A
//!   scanner such as testssl.sh has nothing to flag.
//! - **SHA-256 suites first.** On the machines we measure, the CPU has SHA-256 instructions but
//!   not SHA-512 ones, and SHA-384 (the hash of the AES-256 suite's transcript and key schedule)
//!   runs on the SHA-512 block function in generic code: ~24% of an ECDSA handshake (see the
//!   design brief). AES-128-GCM is also faster per byte and is not a weaker choice in practice.
//!   The server configurations set `ignore_client_order`, so this order is what clients get.
//! - **X25519 first among key exchange groups**: the cheapest (`prepared_kx.rs`: aws-lc-rs's, able
//!   to take a server half computed ahead in a batch). The hybrid post-quantum
//!   X25519MLKEM768 is offered for clients that ask for it, then the NIST curves. Note that a
//!   rustls 0.23 *server* takes the first group in the *client's* list that it supports, so this
//!   order only decides what tern's own clients (tests, `tern bench`) offer; a browser listing
//!   X25519MLKEM768 first gets the hybrid group.
//!
//! The TLS 1.3 suites are the provider's, with one change: their key schedule runs HKDF on
//! keyed HMAC states ([`crate::with_hmac_hkdf`], see `hkdf.rs`), which spares most of the
//! hashing of every full handshake.

use std::sync::{Arc, OnceLock};

use rustls::crypto::aws_lc_rs::{cipher_suite as cs, default_provider, kx_group};
use rustls::crypto::CryptoProvider;

use crate::hkdf::with_hmac_hkdf;

/// The cipher suites tern offers, most preferred first.
static CIPHER_SUITES: [rustls::SupportedCipherSuite; 9] = [
    // TLS 1.3
    cs::TLS13_AES_128_GCM_SHA256,
    cs::TLS13_AES_256_GCM_SHA384,
    cs::TLS13_CHACHA20_POLY1305_SHA256,
    // TLS 1.2: ECDHE key exchange, AEAD ciphers only.
    cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
];

/// tern's crypto provider: aws-lc-rs restricted to tern's default policy, its TLS 1.3 suites
/// with the HMAC-based HKDF (see the module docs).
///
/// Built once per process; each call is an `Arc` clone.
pub fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER
        .get_or_init(|| {
            Arc::new(CryptoProvider {
                cipher_suites: CIPHER_SUITES.iter().copied().map(with_hmac_hkdf).collect(),
                kx_groups: vec![
                    crate::prepared_kx::X25519,
                    kx_group::X25519MLKEM768,
                    kx_group::SECP256R1,
                    kx_group::SECP384R1,
                ],
                // Signature verification, randomness and key loading stay aws-lc-rs defaults.
                ..default_provider()
            })
        })
        .clone()
}
