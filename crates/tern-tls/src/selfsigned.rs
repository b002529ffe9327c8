//! Self-signed certificates generated on the spot, for `tern demo` and tests.
//!
//! The demo must terminate TLS without the operator providing a certificate, and tests must not
//! depend on files checked into the repository that would one day expire. rcgen generates both
//! key kinds with aws-lc-rs, the same library that will sign handshakes with them.

use std::sync::Arc;

use rcgen::{
    CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, KeyPair, RsaKeySize,
};
use rustls::sign::CertifiedKey;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::load::{certify, CertifyError};
use crate::TlsError;

/// The key type of a generated certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// ECDSA on P-256 with SHA-256: the cheap handshake.
    EcdsaP256,
    /// RSA 2048 bits (PKCS#1 v1.5 SHA-256 certificate signature): the common, expensive one.
    Rsa2048,
}

/// A generated certificate, in PEM (to write files) and ready to serve.
#[derive(Debug, Clone)]
pub struct SelfSigned {
    pub cert_pem: String,
    /// The private key in PKCS#8 PEM (`PRIVATE KEY`).
    pub key_pem: String,
    pub certified_key: Arc<CertifiedKey>,
}

/// Generates a self-signed certificate for `names`: DNS names go in DNS subject alternative
/// names, IP addresses (v4 or v6) in IP ones. The first name, if any, is also the subject CN.
pub fn self_signed(names: &[String], kind: KeyKind) -> Result<SelfSigned, TlsError> {
    let key_pair = match kind {
        KeyKind::EcdsaP256 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?,
        KeyKind::Rsa2048 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_2048)?,
    };
    let mut params = CertificateParams::new(names.to_vec())?;
    let mut subject = DistinguishedName::new();
    subject.push(
        DnType::CommonName,
        names.first().map_or("tern self-signed", String::as_str),
    );
    params.distinguished_name = subject;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.self_signed(&key_pair)?;

    let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_pair.serialize_der()));
    let certified_key = certify(vec![cert.der().clone()], key_der).map_err(|err| {
        let reason = match err {
            CertifyError::UnsupportedKey(reason) | CertifyError::InvalidCertificate(reason) => {
                reason
            }
            CertifyError::Mismatch => "generated key does not match its certificate".to_owned(),
        };
        TlsError::Rustls(rustls::Error::General(reason))
    })?;
    Ok(SelfSigned {
        cert_pem: cert.pem(),
        key_pem: key_pair.serialize_pem(),
        certified_key: Arc::new(certified_key),
    })
}
