//! OCSP stapling on the OpenSSL engine: the responses the certificate loader read (`certs.rs`:
//! a certificate's `ocsp` file, else `<certificate file>.ocsp`), stapled as is (DER), as the
//! rustls engine does, for clients that ask (`status_request`).
//!
//! A context may hold certificates of several key types (`sni.rs`), each with its own
//! response: the status callback runs once OpenSSL chose the certificate and staples that
//! one's, found by its DER. Nothing is stapled for a certificate without a response.

use openssl::ssl::SslContextBuilder;
use rustls::sign::CertifiedKey;

use super::context::error;
use crate::TlsError;

/// A certificate's leaf (DER) and its OCSP response (DER).
pub(super) type Staple = (Vec<u8>, Vec<u8>);

/// The response to staple with `key`'s certificate, if the loader read one.
pub(super) fn staple(key: &CertifiedKey) -> Option<Staple> {
    let response = key.ocsp.clone()?;
    let leaf = key.cert.first()?;
    Some((leaf.as_ref().to_vec(), response))
}

/// Staples each certificate's response on the context that serves it; nothing without any.
pub(super) fn apply(b: &mut SslContextBuilder, staples: Vec<Staple>) -> Result<(), TlsError> {
    if staples.is_empty() {
        return Ok(());
    }
    b.set_status_callback(move |ssl| {
        let Some(leaf) = ssl.certificate().and_then(|c| c.to_der().ok()) else {
            return Ok(false);
        };
        match staples.iter().find(|(der, _)| *der == leaf) {
            Some((_, response)) => ssl.set_ocsp_status(response).map(|()| true),
            None => Ok(false),
        }
    })
    .map_err(error("OCSP status callback"))
}
