//! TLS for tern: rustls with the aws-lc-rs provider.
//!
//! This crate is the only place that knows which TLS library and crypto backend tern uses, so
//! another backend can be added later by changing it alone. It provides:
//!
//! - [`provider()`]: tern's TLS policy (versions, cipher suites, groups) as one `CryptoProvider`,
//!   its TLS 1.3 key schedule on keyed HMAC states ([`with_hmac_hkdf`]), its X25519 able to
//!   take a server key share computed ahead in a batch ([`with_prepared_x25519`]);
//! - P-256 signatures from nonce pairs computed eight at a time ([`with_batched_ecdsa`]);
//! - [`load_certified_key`]: a certificate chain and key from PEM files, checked to match;
//! - [`server_config`] / [`server_config_from_keys`]: the termination configuration of a bind:
//!   its policy (versions, suites, groups, signature schemes, ALPN), its certificates (files,
//!   a directory, OCSP responses) with SNI selection ([`SniResolver`]), and resumption
//!   (rotating or file-shared ticket keys, an optional session cache);
//! - [`server_config_described`] / [`bind_summary`]: what `show tls` reports of a bind
//!   ([`BindSummary`]): each certificate as loaded (file, names, key type, validity, OCSP) and
//!   the ticket keys' state ([`TicketState`]);
//! - [`client_verifier`]: the client certificate (mTLS) verifier of a bind, with CRLs, and
//!   [`ClientCertInfo`]: the subject and fingerprint of a verified client certificate;
//! - [`self_signed`]: generated certificates for `tern demo` and tests;
//! - [`client_config`]: client configurations for tests and `tern bench`;
//! - [`upstream_config`]: the client configuration of TLS to one backend server;
//! - [`describe`]: a one-line summary of a negotiated session for logs;
//! - with the `openssl-engine` feature, `openssl_acceptor`: the OpenSSL engine of a bind with
//!   `engine = "openssl"` (`ossl.rs`), for legacy clients.
//!
//! Nothing here does I/O except reading certificate, CA, CRL, OCSP and ticket key files at load
//! time.

#![forbid(unsafe_code)]

mod batched_ecdsa;
mod certs;
mod client;
mod client_auth;
mod error;
mod hkdf;
mod load;
#[cfg(feature = "openssl-engine")]
mod ossl;
mod policy;
mod prepared_kx;
mod provider;
mod resolver;
mod selfsigned;
mod server;
mod summary;
mod tickets;
mod upstream;

#[cfg(test)]
mod tests;

pub use batched_ecdsa::{
    prepare_batched_ecdsa, take_ecdsa_counts, with_batched_ecdsa, EcdsaCounts,
};
pub use certs::certificate_count;
pub use client::{
    client_config, client_config_with_provider, insecure_verifier, ClientOptions, Verify,
};
pub use client_auth::{client_verifier, ClientCertInfo};
pub use error::TlsError;
pub use hkdf::with_hmac_hkdf;
pub use load::load_certified_key;
#[cfg(feature = "openssl-engine")]
pub use openssl;
#[cfg(feature = "openssl-engine")]
pub use ossl::{cipher_string, openssl_acceptor, OsslAcceptor};
pub use prepared_kx::{with_prepared_x25519, PreparedX25519, X25519_LEN};
pub use provider::provider;
pub use resolver::SniResolver;
pub use rustls;
pub use selfsigned::{self_signed, KeyKind, SelfSigned};
pub use server::{load_cert_dir, server_config, server_config_described, server_config_from_keys};
pub use summary::{bind_summary, days_until, rfc3339, unix_now, BindSummary, CertificateSummary};
pub use tickets::TicketState;
pub use upstream::upstream_config;

use rustls::ProtocolVersion;

/// A one-line summary of a negotiated session for logs, e.g.
/// `TLSv1.3 TLS13_AES_128_GCM_SHA256 X25519`; parts not yet negotiated read `-`.
pub fn describe(conn: &rustls::CommonState) -> String {
    let version = match conn.protocol_version() {
        Some(ProtocolVersion::TLSv1_3) => "TLSv1.3",
        Some(ProtocolVersion::TLSv1_2) => "TLSv1.2",
        Some(other) => other.as_str().unwrap_or("unknown"),
        None => "-",
    };
    let suite = conn
        .negotiated_cipher_suite()
        .map_or("-", |suite| suite.suite().as_str().unwrap_or("unknown"));
    let group = conn
        .negotiated_key_exchange_group()
        .map_or("-", |group| group.name().as_str().unwrap_or("unknown"));
    format!("{version} {suite} {group}")
}
