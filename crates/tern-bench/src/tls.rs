//! The generator's TLS client configuration: rustls + aws-lc-rs, resumption off, and exactly
//! the groups, suites and versions asked for.
//!
//! Why not `tern_tls::client_config` yet: a benchmark must pin the key exchange group and the
//! cipher suite (rustls' default offers an ML-KEM hybrid share, which costs client CPU and
//! changes what the server computes), and must never resume. This module does that in a few
//! lines; it can move to tern-tls once that crate offers the same knobs.
//!
//! Without `--cacert` the verifier accepts any certificate chain and name, but still checks the
//! handshake signature against the certificate's key: the client then does the same public-key
//! work as a real client, so its CPU cost is honest, and a server that cannot sign fails.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::crypto::{aws_lc_rs, CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::args::{BenchArgs, KxGroup, TlsVersion};
use crate::BenchError;

/// Builds the client configuration described by `args` (used only for https targets).
pub fn client_config(args: &BenchArgs) -> Result<Arc<ClientConfig>, BenchError> {
    let provider = Arc::new(provider(&args.groups, &args.ciphers)?);
    let versions: &[&rustls::SupportedProtocolVersion] = match args.tls_version {
        Some(TlsVersion::Tls12) => &[&rustls::version::TLS12],
        Some(TlsVersion::Tls13) => &[&rustls::version::TLS13],
        None => &[&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| BenchError::Tls(format!("{e} (check --tls-version against --ciphers)")))?;
    let mut config = match &args.cacert {
        Some(path) => {
            let roots = Arc::new(load_roots(path)?);
            let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| BenchError::Tls(format!("--cacert: {e}")))?;
            builder.with_webpki_verifier(verifier).with_no_client_auth()
        }
        None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(SignatureOnly {
                algorithms: provider.signature_verification_algorithms,
            }))
            .with_no_client_auth(),
    };
    // Every handshake must be a full one: no session cache, no tickets, no early data.
    config.resumption = Resumption::disabled();
    config.enable_early_data = false;
    Ok(Arc::new(config))
}

/// The aws-lc-rs provider restricted to `groups` (in order) and `ciphers` (all if empty).
fn provider(groups: &[KxGroup], ciphers: &[String]) -> Result<CryptoProvider, BenchError> {
    let mut provider = aws_lc_rs::default_provider();
    provider.kx_groups = groups
        .iter()
        .map(|g| match g {
            KxGroup::X25519 => aws_lc_rs::kx_group::X25519,
            KxGroup::P256 => aws_lc_rs::kx_group::SECP256R1,
            KxGroup::P384 => aws_lc_rs::kx_group::SECP384R1,
            KxGroup::X25519mlkem768 => aws_lc_rs::kx_group::X25519MLKEM768,
        })
        .collect();
    if !ciphers.is_empty() {
        let mut suites = Vec::with_capacity(ciphers.len());
        for name in ciphers {
            let wanted = suite_key(name);
            let suite = aws_lc_rs::ALL_CIPHER_SUITES
                .iter()
                .find(|s| s.suite().as_str().map(suite_key).as_deref() == Some(&wanted))
                .ok_or_else(|| BenchError::Tls(format!("unknown cipher suite {name:?}")))?;
            suites.push(*suite);
        }
        provider.cipher_suites = suites;
    }
    Ok(provider)
}

/// Normalises suite names so OpenSSL/IANA ("TLS_AES_256_GCM_SHA384") and rustls
/// ("TLS13_AES_256_GCM_SHA384") spellings compare equal.
fn suite_key(name: &str) -> String {
    let upper = name.trim().to_ascii_uppercase().replace('-', "_");
    let bare = upper
        .strip_prefix("TLS13_")
        .or_else(|| upper.strip_prefix("TLS_"))
        .unwrap_or(&upper);
    bare.to_owned()
}

fn load_roots(path: &Path) -> Result<RootCertStore, BenchError> {
    let bad = |e: &dyn std::fmt::Display| BenchError::Tls(format!("{}: {e}", path.display()));
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))? {
        roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
    }
    if roots.is_empty() {
        return Err(bad(&"no certificates found"));
    }
    Ok(roots)
}

/// Accepts any certificate chain and name, but verifies handshake signatures.
#[derive(Debug)]
struct SignatureOnly {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for SignatureOnly {
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
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn suite_names_match_both_spellings() {
        assert_eq!(
            suite_key("TLS_AES_256_GCM_SHA384"),
            suite_key("TLS13_AES_256_GCM_SHA384")
        );
        let p = provider(&[KxGroup::X25519], &["tls_aes_128_gcm_sha256".into()]).unwrap();
        assert_eq!(p.cipher_suites.len(), 1);
        assert_eq!(p.kx_groups.len(), 1);
        assert!(provider(&[], &["TLS_NOPE".into()]).is_err());
    }
}
