//! Client configurations for TLS to servers (re-encryption), one per server.
//!
//! The configuration built here is shared by every worker and by the health checker, so its
//! session store (rustls' in-memory cache, behind a mutex touched once per handshake) is shared
//! too: a connection opened by any worker, or a TLS health check, resumes with a ticket another
//! one received, and a busy server is not paying full handshakes for each new pooled
//! connection. `session_reuse = false` turns the store off.
//!
//! Verification follows the server's `verify`: `required` checks the chain against the `ca`
//! bundle only (not any system store: tern does not silently trust more than it was told) and
//! the name the proxy connects with (`sni`, or the server's IP address); `none` accepts any
//! certificate but still checks the handshake signature ([`Verify::Insecure`]). A client
//! certificate (`cert`) is loaded and checked against its key like a server certificate.

use std::path::Path;
use std::sync::Arc;

use rustls::client::{ResolvesClientCert, Resumption};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, RootCertStore, SignatureScheme, DEFAULT_VERSIONS};
use tern_config::model::{CertSource, ServerTls, ServerVerify};

use crate::client::InsecureVerifier;
use crate::provider::provider;
use crate::{load_certified_key, TlsError};

/// The client configuration of TLS connections to a server with these settings.
///
/// Fails on an unreadable or invalid `ca` bundle or client certificate, naming the file.
pub fn upstream_config(tls: &ServerTls) -> Result<Arc<ClientConfig>, TlsError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(DEFAULT_VERSIONS)?;
    let builder = match &tls.verify {
        ServerVerify::Required { ca } => builder.with_root_certificates(load_ca(ca)?),
        ServerVerify::None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(InsecureVerifier { provider })),
    };
    let mut config = match &tls.cert {
        Some(path) => {
            let key = load_certified_key(&CertSource::Combined(path.clone()))?;
            builder.with_client_cert_resolver(Arc::new(ClientCert(key)))
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = tls.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    if !tls.session_reuse {
        config.resumption = Resumption::disabled();
    }
    Ok(Arc::new(config))
}

/// The trust anchors of a CA bundle: every certificate of the PEM file.
pub(crate) fn load_ca(path: &Path) -> Result<RootCertStore, TlsError> {
    let bytes = tern_config::files::read(path).map_err(|cause| TlsError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|cause| TlsError::Pem {
            path: path.to_path_buf(),
            cause,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_path_buf(),
        });
    }
    let total = certs.len();
    let mut store = RootCertStore::empty();
    let (added, _) = store.add_parsable_certificates(certs);
    if added == 0 {
        return Err(TlsError::InvalidCertificate {
            path: path.to_path_buf(),
            reason: format!("none of its {total} certificates can be a trust anchor"),
        });
    }
    Ok(store)
}

/// tern's client certificate, sent to any server that asks for one.
#[derive(Debug)]
struct ClientCert(Arc<CertifiedKey>);

impl ResolvesClientCert for ClientCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _schemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }

    fn has_certs(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
