//! The certificate set of a bind: the configured certificates, then every `*.pem` file of
//! `cert_dir`, each with its SNI names and its OCSP response.
//!
//! A directory may hold thousands of certificates (HAProxy's `crt <dir>` is used that way by
//! hosting providers), and loading one costs a PEM parse, a private key load and a key/certificate
//! check, all CPU-bound and independent: the files are split into one contiguous slice per
//! available CPU and loaded on scoped threads. Files are taken in name order, so the default
//! certificate (the first) and the order among certificates sharing a name do not depend on the
//! directory's listing order or on thread timing.
//!
//! In a directory, `site.pem` holds the chain and the key, or the key is in `site.pem.key`
//! (HAProxy's convention). An OCSP response is read from `<certificate file>.ocsp` when that
//! file exists, or from the certificate's `ocsp` key; it is stapled as is (DER), so a response
//! refreshed on disk is served after the next reload.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::sign::CertifiedKey;
use tern_config::model::{CertSource, Certificate, TlsSettings};

use crate::resolver::leaf_names;
use crate::summary::{summarize, CertificateSummary};
use crate::{load_certified_key, TlsError};

/// A loaded certificate and the (lowercased) SNI names it serves.
pub(crate) type Entry = (Arc<CertifiedKey>, Vec<String>);

/// An entry and its description for `show tls`.
pub(crate) type Loaded = (Entry, CertificateSummary);

/// Loads every certificate of `settings`, in order: `certs`, then `cert_dir`.
pub(crate) fn load_all(settings: &TlsSettings) -> Result<Vec<Loaded>, TlsError> {
    let mut entries = settings
        .certs
        .iter()
        .map(load_one)
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(dir) = &settings.cert_dir {
        entries.extend(load_dir(dir)?);
    }
    Ok(entries)
}

/// The certificates of `settings` in loading order (`certs`, then `cert_dir`'s files), for
/// the OpenSSL engine, which loads the files [`load_all`] checked.
#[cfg_attr(not(feature = "openssl-engine"), allow(dead_code))]
pub(crate) fn sources(settings: &TlsSettings) -> Result<Vec<Certificate>, TlsError> {
    let mut all = settings.certs.clone();
    if let Some(dir) = &settings.cert_dir {
        all.extend(pem_files(dir)?);
    }
    Ok(all)
}

/// How many certificates `settings` names: `certs` plus the `*.pem` files `cert_dir` holds now
/// (for logs; the directory is listed, nothing is loaded).
pub fn certificate_count(settings: &TlsSettings) -> Result<usize, TlsError> {
    let dir = match &settings.cert_dir {
        Some(dir) => pem_files(dir)?.len(),
        None => 0,
    };
    Ok(settings.certs.len() + dir)
}

/// Loads every `*.pem` of `dir` (see the module docs).
pub(crate) fn load_dir(dir: &Path) -> Result<Vec<Loaded>, TlsError> {
    let files = pem_files(dir)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(files.len().max(1));
    let per_thread = files.len().div_ceil(threads).max(1);
    let chunks: Vec<Result<Vec<Loaded>, TlsError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(per_thread)
            .map(|chunk| scope.spawn(move || chunk.iter().map(load_one).collect()))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.join().unwrap_or_else(|_| {
                    Err(TlsError::Rustls(rustls::Error::General(
                        "a certificate loading thread panicked".to_owned(),
                    )))
                })
            })
            .collect()
    });
    let mut entries = Vec::with_capacity(files.len());
    for chunk in chunks {
        entries.extend(chunk?);
    }
    Ok(entries)
}

/// The certificates of `dir`, sorted by file name.
fn pem_files(dir: &Path) -> Result<Vec<Certificate>, TlsError> {
    let read_err = |cause| TlsError::Read {
        path: dir.to_path_buf(),
        cause,
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for item in std::fs::read_dir(dir).map_err(read_err)? {
        let path = item.map_err(read_err)?.path();
        if path.extension().is_some_and(|ext| ext == "pem") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|cert| {
            let key = with_suffix(&cert, ".key");
            let source = if key.is_file() {
                CertSource::Split { cert, key }
            } else {
                CertSource::Combined(cert)
            };
            Certificate::from(source)
        })
        .collect())
}

/// Loads one certificate with its OCSP response and its names (SAN or CN, plus `names`).
fn load_one(cert: &Certificate) -> Result<Loaded, TlsError> {
    let path = cert.source.cert_path();
    let mut key = load_certified_key(&cert.source)?;
    let ocsp_path = match &cert.ocsp {
        Some(explicit) => Some(explicit.clone()),
        None => Some(with_suffix(path, ".ocsp")).filter(|p| p.is_file()),
    };
    if let Some(ocsp_path) = ocsp_path {
        let response = tern_config::files::read(&ocsp_path).map_err(|cause| TlsError::Read {
            path: ocsp_path.clone(),
            cause,
        })?;
        if response.is_empty() {
            return Err(TlsError::InvalidCertificate {
                path: ocsp_path,
                reason: "empty OCSP response".to_owned(),
            });
        }
        Arc::make_mut(&mut key).ocsp = Some(response);
    }
    let invalid = |reason| TlsError::InvalidCertificate {
        path: path.clone(),
        reason,
    };
    let mut names = leaf_names(&key).map_err(invalid)?;
    names.extend(cert.names.iter().cloned());
    let summary = summarize(&key, Some(path.clone()), names.clone()).map_err(invalid)?;
    Ok(((key, names), summary))
}

/// `path` with `suffix` appended to its file name (`a.pem` → `a.pem.ocsp`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
