//! Server certificate verifiers that offer only the chosen signature schemes.
//!
//! rustls takes the `signature_algorithms` a client offers from its verifier's
//! `supported_verify_schemes`, so `--sigalg` is a verifier that reports a shorter list: either
//! the insecure one (any certificate; real signature checks unless `--no-signature-check`) or
//! WebPKI's, wrapped.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::BenchError;

/// Accepts any certificate chain and name (tern-tls' insecure verifier); verifies handshake
/// signatures for real if `check_signatures`, else accepts them unchecked.
pub fn insecure(
    provider: Arc<CryptoProvider>,
    schemes: Vec<SignatureScheme>,
    check_signatures: bool,
) -> Arc<dyn ServerCertVerifier> {
    Arc::new(Offering {
        inner: tern_tls::insecure_verifier(provider),
        schemes,
        check_signatures,
    })
}

/// WebPKI verification against `roots`, offering only `schemes`.
pub fn roots(
    roots: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
    schemes: Vec<SignatureScheme>,
) -> Result<Arc<dyn ServerCertVerifier>, BenchError> {
    let mut store = RootCertStore::empty();
    let (added, _) = store.add_parsable_certificates(roots);
    if added == 0 {
        return Err(BenchError::Tls(
            "--cacert: no usable CA certificate".to_owned(),
        ));
    }
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider)
        .build()
        .map_err(|e| BenchError::Tls(format!("--cacert: {e}")))?;
    Ok(Arc::new(Offering {
        inner,
        schemes,
        check_signatures: true,
    }))
}

/// Another verifier, offering only `schemes`, and skipping signature checks unless
/// `check_signatures`.
#[derive(Debug)]
struct Offering {
    inner: Arc<dyn ServerCertVerifier>,
    schemes: Vec<SignatureScheme>,
    check_signatures: bool,
}

impl ServerCertVerifier for Offering {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        if !self.check_signatures {
            return Ok(HandshakeSignatureValid::assertion());
        }
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        if !self.check_signatures {
            return Ok(HandshakeSignatureValid::assertion());
        }
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes.clone()
    }
}
