//! Client configurations, for tests and the load generator (`tern bench`).
//!
//! [`Verify::Insecure`] exists because benchmarks run against self-signed certificates: it skips
//! the certificate chain and name checks but still verifies the handshake signature with the
//! provider's algorithms, so a benchmarked handshake costs the client the same crypto work as a
//! real one (and a broken server signature still fails).

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls::{SupportedProtocolVersion, DEFAULT_VERSIONS};

use crate::provider::provider;
use crate::TlsError;

/// How a client checks the server's certificate.
#[derive(Debug, Clone)]
pub enum Verify {
    /// Accept any certificate, but verify the handshake signature made with its key.
    Insecure,
    /// Full WebPKI verification against these trust anchors (certificates that fail to parse
    /// are skipped).
    Roots(Vec<CertificateDer<'static>>),
}

/// What a client configuration should do; [`Default`] is insecure verification, ALPN
/// `http/1.1`, resumption on, TLS 1.2 and 1.3.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub verify: Verify,
    /// ALPN protocols offered, most preferred first; empty offers none.
    pub alpn: Vec<Vec<u8>>,
    /// Keep sessions (tickets) in memory to resume later connections; `false` makes every
    /// handshake a full one.
    pub resumption: bool,
    /// Protocol versions offered; `None` (or an empty list) means TLS 1.3 and 1.2.
    pub versions: Option<Vec<&'static SupportedProtocolVersion>>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            verify: Verify::Insecure,
            alpn: vec![b"http/1.1".to_vec()],
            resumption: true,
            versions: None,
        }
    }
}

/// A client configuration using tern's provider and policy.
pub fn client_config(opts: &ClientOptions) -> Arc<ClientConfig> {
    // Invariant: tern's provider has cipher suites and key exchange groups for both TLS 1.2 and
    // 1.3, the only versions rustls can be asked for, so rustls cannot refuse the combination.
    client_config_with_provider(opts, provider())
        .expect("tern's provider supports every protocol version rustls offers")
}

/// A client configuration with another provider, e.g. one offering the cipher suites in a
/// different order or a single key exchange group (benchmarks and tests).
///
/// Fails if `provider` has no cipher suite for any requested version.
pub fn client_config_with_provider(
    opts: &ClientOptions,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<ClientConfig>, TlsError> {
    let versions = match &opts.versions {
        Some(versions) if !versions.is_empty() => versions.as_slice(),
        _ => DEFAULT_VERSIONS,
    };
    let builder =
        ClientConfig::builder_with_provider(provider.clone()).with_protocol_versions(versions)?;
    let mut config = match &opts.verify {
        Verify::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(InsecureVerifier { provider }))
            .with_no_client_auth(),
        Verify::Roots(roots) => {
            let mut store = RootCertStore::empty();
            store.add_parsable_certificates(roots.iter().cloned());
            builder.with_root_certificates(store).with_no_client_auth()
        }
    };
    config.alpn_protocols = opts.alpn.clone();
    if !opts.resumption {
        config.resumption = Resumption::disabled();
    }
    Ok(Arc::new(config))
}

/// A verifier that accepts any server certificate and name but checks handshake signatures
/// with `provider`'s algorithms: for tests, benchmarks, and backends with `verify = "none"`.
/// Wrap it to restrict the offered schemes or to observe what the server sent.
pub fn insecure_verifier(provider: Arc<CryptoProvider>) -> Arc<dyn ServerCertVerifier> {
    Arc::new(InsecureVerifier { provider })
}

/// Accepts any server certificate; verifies handshake signatures for real.
#[derive(Debug)]
pub(crate) struct InsecureVerifier {
    pub(crate) provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for InsecureVerifier {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
