//! Certificate selection by SNI.
//!
//! Names are read from each certificate once, when the configuration is built: the DNS names of
//! the subject alternative name extension (or, for a certificate without any, its subject common
//! names, as HAProxy does), lowercased. Exact names go in one map and single-label wildcards
//! (`*.example.com`) in another keyed by the parent domain (`example.com`), so choosing a
//! certificate during a handshake is at most two hash lookups and allocates nothing.
//!
//! Matching follows RFC 6125: an exact name wins over a wildcard; `*.example.com` matches
//! `a.example.com` but neither `a.b.example.com` nor `example.com`; comparison ignores ASCII case.
//! The first certificate is the default, served when the client sends no SNI or an unknown name;
//! with `strict_sni` there is no default and such a handshake fails. Names configured with a
//! certificate (`names = [...]`) are indexed like those of its SAN.
//!
//! When several certificates carry the same name (say an ECDSA and an RSA one, as HAProxy users
//! configure for old clients), the first in configuration order that can sign with one of the
//! client's signature schemes is chosen.

use std::collections::HashMap;
use std::sync::Arc;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::SignatureScheme;
use x509_parser::extensions::GeneralName;

use crate::TlsError;

/// Picks the certificate for a handshake from the client's SNI (see the module docs).
#[derive(Debug)]
pub struct SniResolver {
    /// Never empty; index 0 is the default certificate.
    keys: Vec<Arc<CertifiedKey>>,
    /// Lowercased exact name → indices into `keys`, in configuration order.
    exact: HashMap<String, Vec<usize>>,
    /// Lowercased parent domain of a `*.parent` wildcard → indices into `keys`.
    wildcard: HashMap<String, Vec<usize>>,
    /// No default certificate: unknown or absent SNI fails the handshake (`strict_sni`).
    strict: bool,
}

impl SniResolver {
    /// Indexes the names of `keys` (read from each certificate); the first key is the default.
    pub fn new(keys: Vec<Arc<CertifiedKey>>) -> Result<Self, TlsError> {
        let entries = keys
            .into_iter()
            .enumerate()
            .map(|(index, key)| {
                let names = leaf_names(&key)
                    .map_err(|reason| TlsError::CertificateNames { index, reason })?;
                Ok((key, names))
            })
            .collect::<Result<Vec<_>, TlsError>>()?;
        Self::with_names(entries, false)
    }

    /// Indexes certificates with the names each is served for (lowercased, `*.` wildcards
    /// allowed); the first is the default unless `strict`, where a handshake whose SNI matches
    /// no name (or that sends none) gets no certificate and fails.
    pub(crate) fn with_names(
        entries: Vec<(Arc<CertifiedKey>, Vec<String>)>,
        strict: bool,
    ) -> Result<Self, TlsError> {
        if entries.is_empty() {
            return Err(TlsError::NoCertificates);
        }
        let mut keys = Vec::with_capacity(entries.len());
        let mut exact: HashMap<String, Vec<usize>> = HashMap::new();
        let mut wildcard: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, (key, names)) in entries.into_iter().enumerate() {
            if names.is_empty() && (index > 0 || strict) {
                tracing::warn!(
                    index,
                    "certificate has no DNS name and is not the default: unused"
                );
            }
            for name in names {
                let (map, name) = match name.strip_prefix("*.") {
                    Some(parent) => (&mut wildcard, parent.to_owned()),
                    None => (&mut exact, name),
                };
                let indices = map.entry(name).or_default();
                if indices.last() != Some(&index) {
                    indices.push(index);
                }
            }
            keys.push(key);
        }
        Ok(Self {
            keys,
            exact,
            wildcard,
            strict,
        })
    }

    /// The certificate for a client that sent `server_name` (if any) and accepts signatures
    /// with `schemes`.
    fn select(
        &self,
        server_name: Option<&str>,
        schemes: &[SignatureScheme],
    ) -> Option<&Arc<CertifiedKey>> {
        if self.keys.len() > 1 || self.strict {
            if let Some(indices) = server_name.and_then(|name| self.candidates(name)) {
                return self.pick(indices, schemes);
            }
        }
        if self.strict {
            return None;
        }
        self.keys.first()
    }

    fn candidates(&self, name: &str) -> Option<&[usize]> {
        let name = name.strip_suffix('.').unwrap_or(name);
        // rustls already lowercases SNI; stay correct if that changes, allocating only then.
        let lowered;
        let name = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            lowered = name.to_ascii_lowercase();
            lowered.as_str()
        } else {
            name
        };
        if let Some(indices) = self.exact.get(name) {
            return Some(indices);
        }
        let (_, parent) = name.split_once('.')?;
        self.wildcard.get(parent).map(Vec::as_slice)
    }

    fn pick(&self, indices: &[usize], schemes: &[SignatureScheme]) -> Option<&Arc<CertifiedKey>> {
        let first = indices.first().and_then(|&i| self.keys.get(i));
        if indices.len() == 1 {
            return first;
        }
        indices
            .iter()
            .filter_map(|&i| self.keys.get(i))
            .find(|key| key.key.choose_scheme(schemes).is_some())
            .or(first)
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.select(client_hello.server_name(), client_hello.signature_schemes())
            .cloned()
    }
}

/// The lowercased DNS names of a loaded certificate's leaf (see [`cert_names`]).
pub(crate) fn leaf_names(key: &CertifiedKey) -> Result<Vec<String>, String> {
    key.end_entity_cert()
        .map_err(|err| err.to_string())
        .and_then(|leaf| cert_names(leaf))
}

/// The lowercased DNS names a certificate is valid for (SAN DNS names, else subject CNs).
fn cert_names(der: &[u8]) -> Result<Vec<String>, String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).map_err(|err| err.to_string())?;
    let mut names = Vec::new();
    if let Some(san) = cert
        .subject_alternative_name()
        .map_err(|err| err.to_string())?
    {
        for general_name in &san.value.general_names {
            if let GeneralName::DNSName(name) = general_name {
                names.push(name.to_ascii_lowercase());
            }
        }
    }
    if names.is_empty() {
        for cn in cert.subject().iter_common_name() {
            if let Ok(name) = cn.as_str() {
                names.push(name.to_ascii_lowercase());
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
