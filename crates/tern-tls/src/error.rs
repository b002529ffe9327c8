//! The one error type of this crate.
//!
//! Certificate problems are operator mistakes found at startup or reload, so every variant about
//! a file names that file (both files when a key does not match its certificate): the message
//! alone must tell the operator what to fix.

use std::path::PathBuf;

/// Everything that can go wrong while loading certificates or building TLS configurations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The file could not be read at all.
    #[error("cannot read {}: {cause}", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },

    /// The file is not valid PEM (bad base64, missing END line, ...).
    #[error("{}: malformed PEM: {cause}", path.display())]
    Pem {
        path: PathBuf,
        cause: rustls_pki_types::pem::Error,
    },

    /// The file holds no `CERTIFICATE` block.
    #[error("{}: no certificate found (expected a PEM \"CERTIFICATE\" block)", path.display())]
    NoCertificate { path: PathBuf },

    /// The file holds no private key block.
    #[error(
        "{}: no private key found (expected a PEM \"PRIVATE KEY\", \"RSA PRIVATE KEY\" or \
         \"EC PRIVATE KEY\" block)",
        path.display()
    )]
    NoPrivateKey { path: PathBuf },

    /// The file holds only a passphrase-protected key, which tern cannot use unattended.
    #[error("{}: the private key is encrypted; tern needs an unencrypted key", path.display())]
    EncryptedKey { path: PathBuf },

    /// The file holds more than one private key, so which one is meant is ambiguous.
    #[error("{}: {count} private keys found, expected exactly one", path.display())]
    SeveralKeys { path: PathBuf, count: usize },

    /// The key parsed as PEM but the crypto provider cannot use it.
    #[error(
        "{}: unsupported private key (tern accepts RSA 2048 to 4096 bits, ECDSA P-256 or P-384, \
         and Ed25519): {reason}",
        path.display()
    )]
    UnsupportedKey { path: PathBuf, reason: String },

    /// The leaf certificate could not be parsed.
    #[error("{}: invalid certificate: {reason}", path.display())]
    InvalidCertificate { path: PathBuf, reason: String },

    /// The private key is not the one the leaf certificate was issued for.
    #[error(
        "the private key in {} does not match the certificate in {}",
        key.display(),
        cert.display()
    )]
    KeyMismatch { cert: PathBuf, key: PathBuf },

    /// A server configuration was requested with no certificate at all.
    #[error("no certificate configured")]
    NoCertificates,

    /// A certificate handed over in memory could not be parsed (its position in the list).
    #[error("certificate #{index}: cannot read its names: {reason}")]
    CertificateNames { index: usize, reason: String },

    /// The session ticket key file is malformed.
    #[error("{}: invalid ticket key file: {reason}", path.display())]
    TicketKeys { path: PathBuf, reason: String },

    /// A certificate revocation list file is malformed.
    #[error("{}: invalid CRL: {reason}", path.display())]
    Crl { path: PathBuf, reason: String },

    /// The client certificate verifier could not be built.
    #[error("client certificate verification: {0}")]
    ClientVerifier(String),

    /// rustls refused a configuration or could not create a ticket key.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),

    /// OpenSSL refused the OpenSSL engine's configuration (the message names the key or file).
    #[error("OpenSSL engine: {0}")]
    OpenSsl(String),

    /// rcgen could not generate a key or certificate.
    #[error("cannot generate a self-signed certificate: {0}")]
    Generate(#[from] rcgen::Error),
}
