//! The OpenSSL engine of a bind (`tls.engine = "openssl"`): one `SslContext` per group of
//! certificates serving the same names with different key types (`ossl/sni.rs`), built from
//! the bind's settings, the first certificate's being the default and the others chosen by SNI
//! in the servername callback.
//!
//! Why a second engine: legacy clients need static RSA, DHE and AES-CBC suites and TLS 1.0 or
//! 1.1, which rustls does not implement (issue 21). rustls stays the default; this engine is
//! opt-in per bind and compiled only with the `openssl-engine` feature.
//!
//! What each context carries, whatever the configuration says:
//! - the cipher string is the configured one (or OpenSSL's `DEFAULT`) followed by
//!   [`CIPHER_EXCLUSIONS`]: no RC4, export, NULL, anonymous, DES/3DES or MD5 suite can be
//!   negotiated, even from `ALL` (the configuration refuses naming them: tern-config);
//! - DH parameters for DHE suites: `dh_param_file`, else RFC 7919 ffdhe2048 (never
//!   OpenSSL's choice by certificate size: a fixed, well-known safe group);
//! - OpenSSL's security level 0 only on a bind whose `min_version` is below TLS 1.2 (OpenSSL 3
//!   refuses TLS 1.0/1.1 and their SHA-1 signatures at level 1 and above); every other bind
//!   keeps the system's level (Debian: 2);
//! - client-initiated renegotiation off (a CPU cost a client could impose for nothing);
//! - ALPN from the bind's list, `h2` included (served by the same HTTP/2 code as on rustls);
//! - resumption: the stateful cache of `cache_size` sessions and OpenSSL's own tickets (a key
//!   per process) unless `tickets = false`;
//! - client certificates from `client_auth`, as on the rustls engine (`ossl/client_auth.rs`);
//! - OCSP responses stapled as on the rustls engine (`ossl/ocsp.rs`);
//! - `groups` and `sigalgs` when configured (the rustls engine's names, mapped to OpenSSL's),
//!   else OpenSSL's defaults (which add P-521, X448 and the RFC 7919 groups).
//!
//! Names come from the same loader as the rustls engine (`certs.rs`: SAN, else CN, plus the
//! certificate's `names`), so SNI selects the same certificate on both engines.

mod client_auth;
mod context;
mod ocsp;
pub use context::cipher_string;
mod sni;

use std::sync::Arc;

use openssl::ssl::{Ssl, SslContext};
use tern_config::model::{OpensslPolicy, TlsEngine, TlsSettings};

use crate::certs;
use crate::{BindSummary, TlsError};

pub use tern_config::model::CIPHER_EXCLUSIONS;

/// A bind's OpenSSL contexts, ready to start handshakes.
#[derive(Clone)]
pub struct OsslAcceptor {
    /// The context of the first certificate: every handshake starts on it, and the SNI
    /// callback may switch to another certificate's.
    default: SslContext,
    /// How many certificates the bind serves.
    certificates: usize,
    /// What `show tls` reports of the bind.
    summary: Arc<BindSummary>,
}

impl std::fmt::Debug for OsslAcceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OsslAcceptor")
            .field("certificates", &self.certificates)
            .finish_non_exhaustive()
    }
}

impl OsslAcceptor {
    /// The state of one new server connection.
    pub fn ssl(&self) -> Result<Ssl, openssl::error::ErrorStack> {
        Ssl::new(&self.default)
    }

    /// How many certificates the bind serves.
    pub fn certificates(&self) -> usize {
        self.certificates
    }

    /// The bind as `show tls` reports it: its certificates as loaded, its resumption.
    pub fn summary(&self) -> Arc<BindSummary> {
        Arc::clone(&self.summary)
    }
}

/// Builds the OpenSSL engine of a bind whose `engine` is `"openssl"` (reading its files); an
/// error for a rustls bind.
pub fn openssl_acceptor(settings: &TlsSettings) -> Result<Arc<OsslAcceptor>, TlsError> {
    let TlsEngine::OpenSsl(policy) = &settings.engine else {
        return Err(TlsError::OpenSsl(
            "the bind's engine is not openssl".to_owned(),
        ));
    };
    build(settings, policy).map(Arc::new)
}

fn build(settings: &TlsSettings, policy: &OpensslPolicy) -> Result<OsslAcceptor, TlsError> {
    // The rustls loader checks every file and reads the names; the same sources, in the same
    // order, are then loaded into OpenSSL.
    let loaded = certs::load_all(settings)?;
    let sources = certs::sources(settings)?;
    let dh = context::dh_params(policy)?;
    let kinds: Vec<_> = loaded
        .iter()
        .map(|((key, _), _)| key.key.algorithm())
        .collect();
    let staples: Vec<Option<ocsp::Staple>> = loaded
        .iter()
        .map(|((key, _), _)| ocsp::staple(key))
        .collect();
    let (names, mut described): (Vec<Vec<String>>, Vec<_>) = loaded
        .into_iter()
        .map(|((_, names), summary)| (names, summary))
        .unzip();
    if let Some(first) = described.first_mut() {
        first.default = !settings.strict_sni;
    }
    let resumption = &settings.resumption;
    let summary = Arc::new(BindSummary::openssl(
        described,
        settings.strict_sni,
        resumption.cache_size,
        resumption.tickets,
    ));
    if names.is_empty() {
        return Err(TlsError::NoCertificates);
    }
    let plan = sni::plan(&names, &kinds);
    let mut builders = plan
        .contexts
        .iter()
        .map(|set| {
            let certs: Vec<_> = set.iter().filter_map(|&i| sources.get(i)).collect();
            let mut b = context::build(settings, policy, &dh, &certs)?;
            let set_staples = set
                .iter()
                .filter_map(|&i| staples.get(i).cloned().flatten());
            ocsp::apply(&mut b, set_staples.collect())?;
            Ok(b)
        })
        .collect::<Result<Vec<_>, TlsError>>()?
        .into_iter();
    let first = builders.next().ok_or(TlsError::NoCertificates)?;
    let others = builders.map(|b| b.build()).collect();
    let certificates = names.len();
    let default = sni::with_selection(plan, settings.strict_sni, first, others);
    Ok(OsslAcceptor {
        default,
        certificates,
        summary,
    })
}
