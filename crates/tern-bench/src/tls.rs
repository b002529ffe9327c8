//! The generator's TLS client configuration: rustls + aws-lc-rs, resumption off, and exactly
//! the groups, suites and versions asked for.
//!
//! A benchmark must pin the key exchange group and the cipher suite (rustls' default offers an
//! ML-KEM hybrid share, which costs client CPU and changes what the server computes) and must
//! never resume. This module builds that provider; `tern_tls` builds the configuration.
//!
//! Without `--cacert` the verifier accepts any certificate chain and name, but still checks the
//! handshake signature against the certificate's key: the client then does the same public-key
//! work as a real client, so its CPU cost is honest, and a server that cannot sign fails.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::{aws_lc_rs, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::ClientConfig;
use tern_tls::{ClientOptions, Verify};

use crate::args::{BenchArgs, KxGroup, TlsVersion};
use crate::BenchError;

/// Builds the client configuration described by `args` (used only for https targets).
pub fn client_config(args: &BenchArgs) -> Result<Arc<ClientConfig>, BenchError> {
    let provider = Arc::new(provider(&args.groups, &args.ciphers)?);
    let versions = match args.tls_version {
        Some(TlsVersion::Tls12) => Some(vec![&rustls::version::TLS12]),
        Some(TlsVersion::Tls13) => Some(vec![&rustls::version::TLS13]),
        None => None,
    };
    let verify = match &args.cacert {
        Some(path) => Verify::Roots(load_roots(path)?),
        None => Verify::Insecure,
    };
    // Every handshake must be a full one: no session cache, no tickets, no early data (rustls'
    // default); no ALPN, as with the clients the seed papers used.
    let opts = ClientOptions {
        verify,
        alpn: Vec::new(),
        resumption: false,
        versions,
    };
    tern_tls::client_config_with_provider(&opts, provider)
        .map_err(|e| BenchError::Tls(format!("{e} (check --tls-version against --ciphers)")))
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

fn load_roots(path: &Path) -> Result<Vec<CertificateDer<'static>>, BenchError> {
    let bad = |e: &dyn std::fmt::Display| BenchError::Tls(format!("{}: {e}", path.display()));
    let roots = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    if roots.is_empty() {
        return Err(bad(&"no certificates found"));
    }
    Ok(roots)
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
