//! The `SslContext` of a group of certificates with the bind's policy (see `ossl.rs` for what
//! it carries).

use std::path::Path;

use openssl::dh::Dh;
use openssl::pkey::{PKey, Params};
use openssl::ssl::{
    AlpnError, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode, SslVersion,
};
use tern_config::model::{
    CertSource, Certificate, KxGroup, OpensslPolicy, OsslVersion, SigAlg, TlsSettings,
};

use super::CIPHER_EXCLUSIONS;
use crate::TlsError;

/// RFC 7919's ffdhe2048 group (PKCS#3 PEM, as `openssl genpkey -genparam -algorithm DH -pkeyopt
/// group:ffdhe2048` writes it): the DH parameters of DHE suites without `dh_param_file`.
const FFDHE2048: &[u8] = include_bytes!("ffdhe2048.pem");

/// The session id context OpenSSL's stateful cache needs on a server.
const SESSION_ID_CONTEXT: &[u8] = b"tern";

pub(super) fn error(
    what: impl std::fmt::Display,
) -> impl Fn(openssl::error::ErrorStack) -> TlsError {
    let what = what.to_string();
    move |e| TlsError::OpenSsl(format!("{what}: {e}"))
}

/// The DH parameters of the bind: its `dh_param_file`, else ffdhe2048.
pub(super) fn dh_params(policy: &OpensslPolicy) -> Result<Dh<Params>, TlsError> {
    match &policy.dh_param_file {
        None => Dh::params_from_pem(FFDHE2048).map_err(error("built-in ffdhe2048")),
        Some(path) => {
            let pem = read(path)?;
            let dh = Dh::params_from_pem(&pem)
                .map_err(error(format!("{}: invalid DH parameters", path.display())))?;
            let bits = dh.prime_p().num_bits();
            if bits < 2048 {
                return Err(TlsError::OpenSsl(format!(
                    "{}: DH prime of {bits} bits; tern needs 2048 or more (Logjam)",
                    path.display()
                )));
            }
            Ok(dh)
        }
    }
}

pub(super) fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    tern_config::files::read(path).map_err(|cause| TlsError::Read {
        path: path.to_path_buf(),
        cause,
    })
}

fn version(v: OsslVersion) -> SslVersion {
    match v {
        OsslVersion::Tls10 => SslVersion::TLS1,
        OsslVersion::Tls11 => SslVersion::TLS1_1,
        OsslVersion::Tls12 => SslVersion::TLS1_2,
        OsslVersion::Tls13 => SslVersion::TLS1_3,
    }
}

/// OpenSSL's name of a key exchange group (`SSL_CTX_set1_groups_list`).
fn group_name(g: KxGroup) -> &'static str {
    match g {
        KxGroup::X25519 => "X25519",
        KxGroup::X25519Mlkem768 => "X25519MLKEM768",
        KxGroup::Secp256r1 => "P-256",
        KxGroup::Secp384r1 => "P-384",
    }
}

/// OpenSSL's name of a signature scheme (`SSL_CTX_set1_sigalgs_list` takes the TLS 1.3 names).
fn sigalg_name(a: SigAlg) -> &'static str {
    match a {
        SigAlg::EcdsaP256Sha256 => "ecdsa_secp256r1_sha256",
        SigAlg::EcdsaP384Sha384 => "ecdsa_secp384r1_sha384",
        SigAlg::Ed25519 => "ed25519",
        SigAlg::RsaPssSha256 => "rsa_pss_rsae_sha256",
        SigAlg::RsaPssSha384 => "rsa_pss_rsae_sha384",
        SigAlg::RsaPssSha512 => "rsa_pss_rsae_sha512",
        SigAlg::RsaPkcs1Sha256 => "rsa_pkcs1_sha256",
        SigAlg::RsaPkcs1Sha384 => "rsa_pkcs1_sha384",
        SigAlg::RsaPkcs1Sha512 => "rsa_pkcs1_sha512",
    }
}

/// The cipher string handed to OpenSSL: the configured one (or `DEFAULT`), then tern's
/// exclusions.
pub fn cipher_string(policy: &OpensslPolicy) -> String {
    let base = policy.ciphers.as_deref().filter(|c| !c.is_empty());
    format!("{}:{CIPHER_EXCLUSIONS}", base.unwrap_or("DEFAULT"))
}

/// A context with the bind's policy and no certificate yet.
fn policy_builder(
    settings: &TlsSettings,
    policy: &OpensslPolicy,
    dh: &Dh<Params>,
) -> Result<SslContextBuilder, TlsError> {
    let ossl = |what: &'static str| error(what);
    let mut b = SslContextBuilder::new(SslMethod::tls_server()).map_err(ossl("new context"))?;
    if policy.below_tls12() {
        // OpenSSL 3 refuses TLS 1.0/1.1 (and their MD5+SHA-1 signatures) at level 1 and up.
        b.set_security_level(0);
    }
    b.set_min_proto_version(Some(version(policy.min_version)))
        .map_err(ossl("min_version"))?;
    b.set_max_proto_version(Some(version(policy.max_version)))
        .map_err(ossl("max_version"))?;
    b.set_cipher_list(&cipher_string(policy))
        .map_err(ossl("ciphers: OpenSSL selects no cipher from this string"))?;
    if let Some(suites) = policy.suites.as_deref() {
        b.set_ciphersuites(suites).map_err(ossl(
            "suites: OpenSSL selects no TLS 1.3 suite from this list",
        ))?;
    }
    b.set_tmp_dh(dh).map_err(ossl("DH parameters"))?;
    if let Some(groups) = &policy.groups {
        let list: Vec<&str> = groups.iter().map(|&g| group_name(g)).collect();
        b.set_groups_list(&list.join(":")).map_err(ossl(
            "groups: this OpenSSL lacks one of them (X25519MLKEM768 needs OpenSSL 3.5)",
        ))?;
    }
    if let Some(sigalgs) = &policy.sigalgs {
        let list: Vec<&str> = sigalgs.iter().map(|&a| sigalg_name(a)).collect();
        b.set_sigalgs_list(&list.join(":"))
            .map_err(ossl("sigalgs: this OpenSSL lacks one of them"))?;
    }
    let mut options = SslOptions::NO_RENEGOTIATION | SslOptions::NO_COMPRESSION;
    if settings.policy.prefer_server_ciphers {
        options |= SslOptions::CIPHER_SERVER_PREFERENCE;
    }
    let resumption = &settings.resumption;
    if !resumption.tickets {
        options |= SslOptions::NO_TICKET;
    }
    b.set_options(options);
    b.set_session_id_context(SESSION_ID_CONTEXT)
        .map_err(ossl("session id context"))?;
    if resumption.cache_size > 0 {
        b.set_session_cache_mode(SslSessionCacheMode::SERVER);
        b.set_session_cache_size(i32::try_from(resumption.cache_size).unwrap_or(i32::MAX));
    } else {
        b.set_session_cache_mode(SslSessionCacheMode::OFF);
    }
    // One TLS 1.3 ticket per full handshake, as the rustls engine; none when off.
    let tickets = usize::from(resumption.tickets || resumption.cache_size > 0);
    b.set_num_tickets(tickets).map_err(ossl("tickets"))?;
    set_alpn(&mut b, &settings.policy.alpn);
    super::client_auth::apply(&mut b, &settings.client_auth)?;
    Ok(b)
}

/// Answers ALPN with the first of the bind's protocols the client offers; no ALPN extension
/// in the answer when none is shared (as the rustls engine, HTTP/1.1 is then spoken).
fn set_alpn(b: &mut SslContextBuilder, alpn: &[String]) {
    if alpn.is_empty() {
        return;
    }
    let ours: Vec<Vec<u8>> = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    b.set_alpn_select_callback(move |_, client| {
        ours.iter()
            .find_map(|p| offered(client).find(|c| c == p))
            .ok_or(AlpnError::NOACK)
    });
}

/// The protocols of a client's ALPN list (wire format: length-prefixed names); a malformed
/// tail ends the list.
fn offered(mut list: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let (&len, rest) = list.split_first()?;
        let len = usize::from(len);
        if len == 0 || rest.len() < len {
            return None;
        }
        let (name, tail) = rest.split_at(len);
        list = tail;
        Some(name)
    })
}

/// The context of one or more certificates of different key types (`sni.rs` groups them):
/// the policy, then each chain and its key (checked to match). OpenSSL keeps one certificate
/// per key type in a context and picks among them per handshake, by the suite and the
/// client's signature algorithms.
pub(super) fn build(
    settings: &TlsSettings,
    policy: &OpensslPolicy,
    dh: &Dh<Params>,
    certs: &[&Certificate],
) -> Result<SslContextBuilder, TlsError> {
    let mut b = policy_builder(settings, policy, dh)?;
    for cert in certs {
        add_certificate(&mut b, cert)?;
    }
    Ok(b)
}

/// Loads a chain and its key into the slot of the key's type. The chain goes with that
/// certificate alone (`SSL_CTX_use_certificate_chain_file`; `add_extra_chain_cert` would
/// serve one chain with every key type), so OpenSSL reads the certificate file itself, after
/// tern's loader read and checked it.
fn add_certificate(b: &mut SslContextBuilder, cert: &Certificate) -> Result<(), TlsError> {
    let (cert_path, key_path) = match &cert.source {
        CertSource::Combined(path) => (path, path),
        CertSource::Split { cert, key } => (cert, key),
    };
    let at = |path: &Path| error(path.display().to_string());
    // The bindings panic on a path that is not UTF-8 or holds a NUL: refused first.
    let chain_file = cert_path
        .to_str()
        .filter(|p| !p.contains('\0'))
        .ok_or_else(|| {
            TlsError::OpenSsl(format!(
                "{}: the OpenSSL engine needs a UTF-8 path",
                cert_path.display()
            ))
        })?;
    b.set_certificate_chain_file(chain_file)
        .map_err(at(cert_path))?;
    let key = PKey::private_key_from_pem(&read(key_path)?).map_err(at(key_path))?;
    b.set_private_key(&key).map_err(at(key_path))?;
    b.check_private_key().map_err(at(key_path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpn_lists_are_read_to_the_first_malformed_entry() {
        let list = b"\x02h2\x08http/1.1\x09http";
        let names: Vec<&[u8]> = offered(list).collect();
        assert_eq!(names, [&b"h2"[..], b"http/1.1"]);
        assert_eq!(offered(b"\x00h2").count(), 0);
    }

    #[test]
    fn exclusions_follow_every_cipher_string() {
        let mut p = OpensslPolicy::default();
        assert_eq!(cipher_string(&p), format!("DEFAULT:{CIPHER_EXCLUSIONS}"));
        p.ciphers = Some("ALL:COMPLEMENTOFALL".to_owned());
        assert!(cipher_string(&p).ends_with(":!aNULL:!eNULL:!EXP:!RC4:!DES:!3DES:!MD5"));
    }
}
