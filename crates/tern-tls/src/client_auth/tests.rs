//! Client certificate verification through in-memory handshakes, CRL loading, and the subject
//! and fingerprint passed to servers.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, CertificateRevocationListParams,
    DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyIdMethod, KeyPair,
    KeyUsagePurpose, RevokedCertParams, SerialNumber,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{CertificateError, ClientConfig, Error};
use tern_config::model::{CertSource, ClientAuth, ClientVerify, TlsSettings};

use super::{rfc4514, ClientCertInfo};
use crate::client::InsecureVerifier;
use crate::tests::{ecdsa, handshake, TempDir};
use crate::{provider, server_config, TlsError};

struct Ca {
    params: CertificateParams,
    key: KeyPair,
    pem: String,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let pem = params.self_signed(&key).unwrap().pem();
    Ca { params, key, pem }
}

/// A client certificate (DER) and its key, issued by `ca` with this serial number.
fn client(ca: &Ca, cn: &str, serial: u64, expired: bool) -> (CertificateDer<'static>, KeyPair) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::OrganizationName, "Tern, Test");
    params.distinguished_name.push(DnType::CommonName, cn);
    params.serial_number = Some(SerialNumber::from(serial));
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    if expired {
        params.not_before = date_time_ymd(2001, 1, 1);
        params.not_after = date_time_ymd(2002, 1, 1);
    }
    let key = KeyPair::generate().unwrap();
    let issuer = Issuer::from_params(&ca.params, &ca.key);
    let cert = params.signed_by(&key, &issuer).unwrap();
    (cert.der().clone(), key)
}

/// A PEM CRL of `ca` revoking these serial numbers.
fn crl(ca: &Ca, revoked: &[u64]) -> String {
    let params = CertificateRevocationListParams {
        this_update: date_time_ymd(2020, 1, 1),
        next_update: date_time_ymd(2090, 1, 1),
        crl_number: SerialNumber::from(1u64),
        issuing_distribution_point: None,
        revoked_certs: revoked
            .iter()
            .map(|&serial| RevokedCertParams {
                serial_number: SerialNumber::from(serial),
                revocation_time: date_time_ymd(2021, 1, 1),
                reason_code: None,
                invalidity_date: None,
            })
            .collect(),
        key_identifier_method: KeyIdMethod::Sha256,
    };
    let issuer = Issuer::from_params(&ca.params, &ca.key);
    params.signed_by(&issuer).unwrap().pem().unwrap()
}

fn client_config(cert: Option<(CertificateDer<'static>, KeyPair)>) -> Arc<ClientConfig> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(InsecureVerifier { provider }));
    let config = match cert {
        Some((der, key)) => {
            let key = PrivateKeyDer::try_from(key.serialize_der()).unwrap();
            builder.with_client_auth_cert(vec![der], key).unwrap()
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

fn settings(dir: &TempDir, verify: ClientVerify, ca: &Ca, crls: &[String]) -> TlsSettings {
    let cert = ecdsa();
    let combined = dir.write("server.pem", format!("{}{}", cert.cert_pem, cert.key_pem));
    let mut s = TlsSettings::new(vec![CertSource::Combined(combined)]);
    s.client_auth = ClientAuth {
        verify,
        ca: Some(dir.write("ca.pem", &ca.pem)),
        crl: crls
            .iter()
            .enumerate()
            .map(|(i, pem)| dir.write(&format!("{i}.crl"), pem))
            .collect(),
    };
    s
}

fn server_error(result: Result<impl Sized, Error>) -> Error {
    match result {
        Ok(_) => panic!("the handshake succeeded"),
        Err(e) => e,
    }
}

#[test]
fn required_accepts_a_certificate_of_the_ca_and_refuses_others() {
    let dir = TempDir::new();
    let (ca, other) = (ca("Tern Test CA"), ca("Other CA"));
    let server = server_config(&settings(&dir, ClientVerify::Required, &ca, &[])).unwrap();

    let (der, key) = client(&ca, "alice", 10, false);
    let (_, s) = handshake(
        client_config(Some((der.clone(), key))),
        Arc::clone(&server),
        "localhost",
    )
    .unwrap();
    assert_eq!(s.peer_certificates().unwrap()[0], der);

    let e = server_error(handshake(
        client_config(None),
        Arc::clone(&server),
        "localhost",
    ));
    assert_eq!(e, Error::NoCertificatesPresented);

    let stranger = client(&other, "mallory", 11, false);
    let e = server_error(handshake(
        client_config(Some(stranger)),
        Arc::clone(&server),
        "localhost",
    ));
    assert_eq!(
        e,
        Error::InvalidCertificate(CertificateError::UnknownIssuer)
    );

    let expired = client(&ca, "old", 12, true);
    let e = server_error(handshake(client_config(Some(expired)), server, "localhost"));
    assert!(
        matches!(
            e,
            Error::InvalidCertificate(
                CertificateError::Expired | CertificateError::ExpiredContext { .. }
            )
        ),
        "{e:?}"
    );
}

#[test]
fn optional_lets_a_client_without_certificate_through() {
    let dir = TempDir::new();
    let ca = ca("Tern Test CA");
    let server = server_config(&settings(&dir, ClientVerify::Optional, &ca, &[])).unwrap();
    let (_, s) = handshake(client_config(None), Arc::clone(&server), "localhost").unwrap();
    assert!(s.peer_certificates().is_none());
    // A certificate that is presented must still verify.
    let stranger = client(&self::ca("Other CA"), "mallory", 11, false);
    let e = server_error(handshake(
        client_config(Some(stranger)),
        server,
        "localhost",
    ));
    assert_eq!(
        e,
        Error::InvalidCertificate(CertificateError::UnknownIssuer)
    );
}

#[test]
fn a_revoked_certificate_is_refused() {
    let dir = TempDir::new();
    let ca = ca("Tern Test CA");
    let server = server_config(&settings(
        &dir,
        ClientVerify::Required,
        &ca,
        &[crl(&ca, &[7])],
    ))
    .unwrap();
    let revoked = client(&ca, "bob", 7, false);
    let e = server_error(handshake(
        client_config(Some(revoked)),
        Arc::clone(&server),
        "localhost",
    ));
    assert_eq!(e, Error::InvalidCertificate(CertificateError::Revoked));
    let good = client(&ca, "alice", 8, false);
    handshake(client_config(Some(good)), server, "localhost").unwrap();
}

#[test]
fn crl_files_are_checked_when_loaded() {
    let dir = TempDir::new();
    let ca = ca("Tern Test CA");
    let not_crl = ca.pem.clone();
    let s = settings(&dir, ClientVerify::Required, &ca, &[not_crl]);
    let e = server_config(&s).unwrap_err();
    assert!(matches!(e, TlsError::Crl { .. }), "{e}");
    assert!(e.to_string().contains("0.crl"), "{e}");

    let mut s = settings(&dir, ClientVerify::Required, &ca, &[]);
    s.client_auth.crl = vec![dir.write("garbage.crl", [0x30u8, 0x03, 0x01, 0x02, 0xff])];
    let e = server_config(&s).unwrap_err();
    assert!(e.to_string().contains("garbage.crl: invalid CRL"), "{e}");

    let mut s = settings(&dir, ClientVerify::Required, &ca, &[]);
    s.client_auth.ca = Some(dir.path().join("missing.pem"));
    let e = server_config(&s).unwrap_err();
    assert!(e.to_string().contains("missing.pem"), "{e}");
}

#[test]
fn info_gives_an_rfc4514_subject_and_the_sha256_of_the_der() {
    let ca = ca("Tern Test CA");
    let (der, _) = client(&ca, "alice", 10, false);
    let info = ClientCertInfo::from_der(&der);
    assert_eq!(info.subject, "CN=alice,O=Tern\\, Test");
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &der);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(info.sha256, hex);
    assert_eq!(ClientCertInfo::from_der(b"not DER").subject, "");
}

#[test]
fn subject_values_cannot_break_a_header() {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(
        DnType::CommonName,
        " evil\r\nX-SSL-Client-Verify: SUCCESS é#",
    );
    let key = KeyPair::generate().unwrap();
    let der = params.self_signed(&key).unwrap().der().clone();
    let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
    let subject = rfc4514(cert.subject());
    assert!(
        subject.bytes().all(|b| (0x20..0x7f).contains(&b)),
        "{subject}"
    );
    assert_eq!(
        subject,
        "CN=\\ evil\\0D\\0AX-SSL-Client-Verify: SUCCESS \\C3\\A9#"
    );
}
