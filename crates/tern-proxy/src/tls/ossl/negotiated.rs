//! What an OpenSSL handshake negotiated, in the rustls types the TLS counters are kept in
//! (`tls/stats.rs`), so OpenSSL binds count under the same names as rustls binds.
//!
//! The bindings expose neither the negotiated group nor the certificate type: both are read
//! from keys. The group is that of the server's ephemeral key (`SSL_get_tmp_key`): an EC key
//! by its size (OpenSSL offers only the NIST curves P-256, P-384 and P-521), a DH key by its
//! size as the RFC 7919 group of that size (TLS 1.3 names them; TLS 1.2 DHE uses the bind's
//! parameters, ffdhe2048 unless `dh_param_file` says otherwise). None when no key was
//! exchanged: a static-RSA suite, a TLS 1.2 resumption. The certificate type is the key type
//! of the certificate OpenSSL chose (`SSL_get_certificate`, after SNI and the choice by key type).

use openssl::pkey::Id;
use openssl::ssl::{SslRef, SslVersion};
use rustls::{CipherSuite, NamedGroup, ProtocolVersion, SignatureAlgorithm};

pub(super) fn version(ssl: &SslRef) -> Option<ProtocolVersion> {
    let v = ssl.version2()?;
    Some(if v == SslVersion::TLS1_3 {
        ProtocolVersion::TLSv1_3
    } else if v == SslVersion::TLS1_2 {
        ProtocolVersion::TLSv1_2
    } else if v == SslVersion::TLS1_1 {
        ProtocolVersion::TLSv1_1
    } else {
        ProtocolVersion::TLSv1_0
    })
}

/// The suite by its IANA code point.
pub(super) fn suite(ssl: &SslRef) -> Option<CipherSuite> {
    let id = ssl.current_cipher()?.protocol_id();
    Some(CipherSuite::from(u16::from_be_bytes(id)))
}

/// The group of the server's ephemeral key, while OpenSSL holds it (see the module docs).
pub(super) fn group(ssl: &SslRef) -> Option<NamedGroup> {
    let key = ssl.tmp_key().ok()?;
    let id = key.id();
    Some(group_of(id, key.bits()))
}

fn group_of(id: Id, bits: u32) -> NamedGroup {
    match (id, bits) {
        (Id::X25519, _) => NamedGroup::X25519,
        (Id::X448, _) => NamedGroup::X448,
        (Id::EC, 256) => NamedGroup::secp256r1,
        (Id::EC, 384) => NamedGroup::secp384r1,
        (Id::EC, 521) => NamedGroup::secp521r1,
        (Id::DH, 2048) => NamedGroup::FFDHE2048,
        (Id::DH, 3072) => NamedGroup::FFDHE3072,
        (Id::DH, 4096) => NamedGroup::FFDHE4096,
        (Id::DH, 6144) => NamedGroup::FFDHE6144,
        (Id::DH, 8192) => NamedGroup::FFDHE8192,
        // Counted as "other".
        _ => NamedGroup::Unknown(0),
    }
}

/// The key type of the certificate served.
pub(super) fn cert(ssl: &SslRef) -> Option<SignatureAlgorithm> {
    let key = ssl.certificate()?.public_key().ok()?;
    let id = key.id();
    Some(if id == Id::RSA || id == Id::RSA_PSS {
        SignatureAlgorithm::RSA
    } else if id == Id::EC {
        SignatureAlgorithm::ECDSA
    } else if id == Id::ED25519 {
        SignatureAlgorithm::ED25519
    } else {
        SignatureAlgorithm::Unknown(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_their_groups() {
        assert_eq!(group_of(Id::EC, 384), NamedGroup::secp384r1);
        assert_eq!(group_of(Id::DH, 2048), NamedGroup::FFDHE2048);
        assert_eq!(group_of(Id::DH, 1024), NamedGroup::Unknown(0));
        assert_eq!(group_of(Id::X25519, 253), NamedGroup::X25519);
    }
}
