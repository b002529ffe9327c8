//! Loading a certificate chain and its private key from PEM files.
//!
//! Each file is read once into memory and every PEM block in it is classified, so that the
//! errors can be precise: no certificate, no key, an encrypted key, several keys. The key is
//! loaded through the provider's `key_provider` (so it is usable by exactly the crypto that will
//! sign handshakes with it) and checked against the leaf certificate's public key: a mismatched
//! pair would otherwise only show up as failed handshakes in production.

use std::path::Path;
use std::sync::Arc;

use rustls::sign::CertifiedKey;
use rustls::InconsistentKeys;
use rustls_pki_types::pem::{PemObject, SectionKind};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tern_config::model::CertSource;

use crate::provider::provider;
use crate::TlsError;

/// Loads one certificate chain (leaf first) and its private key, and checks they belong together.
///
/// With [`CertSource::Combined`] the file must hold the chain and exactly one key. With
/// [`CertSource::Split`] the chain comes from `cert` and the key from `key` (which must hold
/// exactly one key; any key in `cert` is ignored).
pub fn load_certified_key(src: &CertSource) -> Result<Arc<CertifiedKey>, TlsError> {
    let (chain, key, cert_path, key_path) = match src {
        CertSource::Combined(path) => {
            let mut pem = read_pem(path)?;
            let chain = pem.chain(path)?;
            (chain, pem.only_key(path)?, path, path)
        }
        CertSource::Split { cert, key } => {
            let chain = read_pem(cert)?.chain(cert)?;
            let key_der = read_pem(key)?.only_key(key)?;
            (chain, key_der, cert, key)
        }
    };
    let certified = certify(chain, key).map_err(|err| err.into_error(cert_path, key_path))?;
    tracing::debug!(cert = %cert_path.display(), key = %key_path.display(), "certificate loaded");
    Ok(Arc::new(certified))
}

/// Why a chain and a key could not be paired; turned into a [`TlsError`] naming the files.
#[derive(Debug)]
pub(crate) enum CertifyError {
    UnsupportedKey(String),
    Mismatch,
    InvalidCertificate(String),
}

impl CertifyError {
    pub(crate) fn into_error(self, cert: &Path, key: &Path) -> TlsError {
        match self {
            Self::UnsupportedKey(reason) => TlsError::UnsupportedKey {
                path: key.to_path_buf(),
                reason,
            },
            Self::Mismatch => TlsError::KeyMismatch {
                cert: cert.to_path_buf(),
                key: key.to_path_buf(),
            },
            Self::InvalidCertificate(reason) => TlsError::InvalidCertificate {
                path: cert.to_path_buf(),
                reason,
            },
        }
    }
}

/// Loads `key` through tern's provider and checks it against the leaf of `chain` (non-empty).
pub(crate) fn certify(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<CertifiedKey, CertifyError> {
    let signing_key = provider()
        .key_provider
        .load_private_key(key.clone_key())
        .map_err(|err| CertifyError::UnsupportedKey(err.to_string()))?;
    let signing_key = crate::batched_ecdsa::wrap(signing_key, &key);
    let certified = CertifiedKey::new(chain, signing_key);
    match certified.keys_match() {
        Ok(()) => Ok(certified),
        Err(rustls::Error::InconsistentKeys(InconsistentKeys::KeyMismatch)) => {
            Err(CertifyError::Mismatch)
        }
        // The provider could not derive the public key, so the pair cannot be checked; refuse
        // rather than risk serving a certificate whose handshakes would all fail.
        Err(rustls::Error::InconsistentKeys(_)) => Err(CertifyError::UnsupportedKey(
            "cannot derive its public key to check it against the certificate".to_owned(),
        )),
        Err(err) => Err(CertifyError::InvalidCertificate(err.to_string())),
    }
}

/// The blocks of one PEM file that matter to tern.
#[derive(Debug, Default)]
struct PemContents {
    certs: Vec<CertificateDer<'static>>,
    keys: Vec<PrivateKeyDer<'static>>,
    /// The file holds an `ENCRYPTED PRIVATE KEY` block (skipped by the PEM parser).
    encrypted_key: bool,
}

impl PemContents {
    /// Takes the certificate chain out, or an error naming `path` if the file holds none.
    fn chain(&mut self, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
        if self.certs.is_empty() {
            return Err(TlsError::NoCertificate {
                path: path.to_path_buf(),
            });
        }
        Ok(std::mem::take(&mut self.certs))
    }

    /// Takes the single private key out, or explains why there is not exactly one.
    fn only_key(&mut self, path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
        let path = path.to_path_buf();
        match self.keys.len() {
            1 => Ok(self.keys.remove(0)),
            0 if self.encrypted_key => Err(TlsError::EncryptedKey { path }),
            0 => Err(TlsError::NoPrivateKey { path }),
            count => Err(TlsError::SeveralKeys { path, count }),
        }
    }
}

fn read_pem(path: &Path) -> Result<PemContents, TlsError> {
    let bytes = tern_config::files::read(path).map_err(|cause| TlsError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    parse_pem(&bytes).map_err(|cause| TlsError::Pem {
        path: path.to_path_buf(),
        cause,
    })
}

fn parse_pem(bytes: &[u8]) -> Result<PemContents, rustls_pki_types::pem::Error> {
    let mut contents = PemContents::default();
    for section in <(SectionKind, Vec<u8>) as PemObject>::pem_slice_iter(bytes) {
        let (kind, der) = section?;
        if kind == SectionKind::Certificate {
            contents.certs.push(CertificateDer::from(der));
        } else if let Some(key) = PrivateKeyDer::from_pem(kind, der) {
            contents.keys.push(key);
        }
    }
    const ENCRYPTED: &[u8] = b"-----BEGIN ENCRYPTED PRIVATE KEY-----";
    contents.encrypted_key = bytes.windows(ENCRYPTED.len()).any(|w| w == ENCRYPTED);
    Ok(contents)
}
