//! Client certificates on an OpenSSL bind: the bind's `client_auth`, meaning what it means on the
//! rustls engine (`client_auth.rs`): `optional` asks for a certificate and lets a client without
//! one through, but one that is presented must verify; `required` needs one. The `ca` bundle is
//! the only trust (a store of its own, never the system's), its subjects are the CA names sent
//! in the CertificateRequest, and CRLs are checked for the client's own certificate only
//! (`X509_V_FLAG_CRL_CHECK`, not `CRL_CHECK_ALL`), so once CRLs are given a certificate whose
//! issuer has none among them is refused (its status is unknown), as on rustls.

use std::path::Path;

use openssl::ssl::{SslContextBuilder, SslFiletype, SslVerifyMode};
use openssl::x509::store::{X509Lookup, X509StoreBuilder};
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::X509;
use tern_config::model::{ClientAuth, ClientVerify};

use super::context::{error, read};
use crate::TlsError;

/// Asks for and verifies client certificates as `auth` says; nothing for `verify = "none"`.
pub(super) fn apply(b: &mut SslContextBuilder, auth: &ClientAuth) -> Result<(), TlsError> {
    let mode = match auth.verify {
        ClientVerify::None => return Ok(()),
        ClientVerify::Optional => SslVerifyMode::PEER,
        ClientVerify::Required => SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
    };
    // Validation guarantees a bundle with `optional` and `required`.
    let Some(ca) = &auth.ca else {
        return Err(TlsError::ClientVerifier("no CA bundle (`ca`) given".into()));
    };
    let at = |path: &Path| error(path.display().to_string());
    let cas = X509::stack_from_pem(&read(ca)?).map_err(at(ca))?;
    if cas.is_empty() {
        return Err(TlsError::ClientVerifier(format!(
            "{}: no certificate found",
            ca.display()
        )));
    }
    let mut store = X509StoreBuilder::new().map_err(at(ca))?;
    for cert in cas {
        b.add_client_ca(&cert).map_err(at(ca))?;
        store.add_cert(cert).map_err(at(ca))?;
    }
    if !auth.crl.is_empty() {
        let lookup = store.add_lookup(X509Lookup::file()).map_err(at(ca))?;
        for path in &auth.crl {
            // PEM (one or more CRLs), else one DER CRL, as the rustls engine reads them.
            lookup
                .load_crl_file(path, SslFiletype::PEM)
                .or_else(|_| lookup.load_crl_file(path, SslFiletype::ASN1))
                .map_err(at(path))?;
        }
        store
            .set_flags(X509VerifyFlags::CRL_CHECK)
            .map_err(at(ca))?;
    }
    b.set_verify_cert_store(store.build()).map_err(at(ca))?;
    b.set_verify(mode);
    Ok(())
}
