//! Client certificates on a bind (mTLS): the verifier built from `client_auth`, and what the
//! proxy passes to servers about a verified certificate.
//!
//! Verification is rustls' `WebPkiClientVerifier` over the `ca` bundle alone (no system store:
//! a bind trusts exactly the CAs it was given). CRLs are checked for the client's own
//! certificate only, as OpenSSL's `crl-file` does by default in HAProxy; a certificate whose
//! issuer has no CRL among those given is refused (its status is unknown), so a forgotten CRL
//! fails closed. `optional` asks for a certificate but lets a client without one through; one
//! that is presented must still verify.
//!
//! The subject is written as an RFC 4514 string (last RDN first, `,` between them), with every
//! byte outside printable ASCII escaped as `\XX`: it goes into an HTTP header, where a CR, LF
//! or non-ASCII byte must never appear whatever a CA put in the certificate.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateRevocationListDer;
use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use tern_config::model::{ClientAuth, ClientVerify};
use x509_parser::objects::{oid2abbrev, oid_registry};
use x509_parser::x509::X509Name;

use crate::provider::provider;
use crate::upstream::load_ca;
use crate::TlsError;

/// The client certificate verifier of a bind; `None` when no certificate is asked for.
///
/// Fails on an unreadable or invalid CA bundle or CRL file, naming the file.
pub fn client_verifier(auth: &ClientAuth) -> Result<Option<Arc<dyn ClientCertVerifier>>, TlsError> {
    let allow_anonymous = match auth.verify {
        ClientVerify::None => return Ok(None),
        ClientVerify::Optional => true,
        ClientVerify::Required => false,
    };
    // Validation guarantees a bundle with `optional` and `required`.
    let Some(ca) = &auth.ca else {
        return Err(TlsError::ClientVerifier("no CA bundle (`ca`) given".into()));
    };
    let roots = Arc::new(load_ca(ca)?);
    let mut crls = Vec::new();
    for path in &auth.crl {
        crls.extend(load_crls(path)?);
    }
    let mut builder = WebPkiClientVerifier::builder_with_provider(roots, provider())
        .with_crls(crls)
        .only_check_end_entity_revocation();
    if allow_anonymous {
        builder = builder.allow_unauthenticated();
    }
    let verifier = builder
        .build()
        .map_err(|e| TlsError::ClientVerifier(e.to_string()))?;
    Ok(Some(verifier))
}

/// The CRLs of one file: PEM (`X509 CRL` blocks) or one DER CRL, each checked to parse.
fn load_crls(path: &Path) -> Result<Vec<CertificateRevocationListDer<'static>>, TlsError> {
    let bytes = tern_config::files::read(path).map_err(|cause| TlsError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    let crls = if bytes.starts_with(b"-----") || bytes.is_ascii() {
        CertificateRevocationListDer::pem_slice_iter(&bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|cause| TlsError::Pem {
                path: path.to_path_buf(),
                cause,
            })?
    } else {
        vec![CertificateRevocationListDer::from(bytes)]
    };
    let crl_error = |reason: String| TlsError::Crl {
        path: path.to_path_buf(),
        reason,
    };
    if crls.is_empty() {
        return Err(crl_error(
            "no CRL found (expected a PEM \"X509 CRL\" block or a DER CRL)".into(),
        ));
    }
    for crl in &crls {
        x509_parser::parse_x509_crl(crl).map_err(|e| crl_error(e.to_string()))?;
    }
    Ok(crls)
}

/// What the proxy tells servers about a verified client certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertInfo {
    /// The subject as an RFC 4514 string, printable ASCII only (see the module docs).
    pub subject: String,
    /// SHA-256 of the certificate's DER, lowercase hex.
    pub sha256: String,
}

impl ClientCertInfo {
    /// Describes the DER certificate `der` (the leaf a client presented). A certificate that
    /// does not parse (rustls verified it, so it should) gets an empty subject.
    pub fn from_der(der: &[u8]) -> Self {
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, der);
        let mut sha256 = String::with_capacity(64);
        for b in digest.as_ref() {
            let _ = write!(sha256, "{b:02x}");
        }
        let subject = x509_parser::parse_x509_certificate(der)
            .map(|(_, cert)| rfc4514(cert.subject()))
            .unwrap_or_default();
        Self { subject, sha256 }
    }
}

/// `name` as RFC 4514 text: RDNs last first, `+` inside one RDN, short attribute names where
/// known (else the dotted OID), values that are not strings as `#` and their DER in hex.
fn rfc4514(name: &X509Name<'_>) -> String {
    let mut out = String::new();
    let rdns: Vec<_> = name.iter().collect();
    for (i, rdn) in rdns.iter().rev().enumerate() {
        if i > 0 {
            out.push(',');
        }
        for (j, attr) in rdn.iter().enumerate() {
            if j > 0 {
                out.push('+');
            }
            match oid2abbrev(attr.attr_type(), oid_registry()) {
                Ok(abbrev) => out.push_str(abbrev),
                Err(_) => out.push_str(&attr.attr_type().to_id_string()),
            }
            out.push('=');
            match attr.as_str() {
                Ok(value) => escape_value(value, &mut out),
                Err(_) => {
                    out.push('#');
                    for b in attr.attr_value().data.iter() {
                        let _ = write!(out, "{b:02x}");
                    }
                }
            }
        }
    }
    out
}

/// Appends an attribute value with RFC 4514 escapes, and `\XX` for every byte outside
/// printable ASCII.
fn escape_value(value: &str, out: &mut String) {
    let bytes = value.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let edge = (i == 0 && (b == b' ' || b == b'#')) || (i + 1 == bytes.len() && b == b' ');
        match b {
            b'"' | b'+' | b',' | b';' | b'<' | b'>' | b'\\' | b'=' => {
                out.push('\\');
                out.push(char::from(b));
            }
            _ if edge => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\{b:02X}");
            }
        }
    }
}

#[cfg(test)]
mod tests;
