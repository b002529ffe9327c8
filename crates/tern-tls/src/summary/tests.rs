//! Certificate summaries (key types, names, validity, OCSP, the default), date arithmetic, and
//! finding a built configuration's summary.

#![allow(clippy::unwrap_used)]

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, SanType};
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tern_config::model::{CertSource, TlsSettings};
use x509_parser::time::ASN1Time;

use super::{days_until, rfc3339, summarize, CertificateSummary};
use crate::load::certify;
use crate::tests::{ecdsa, names, rsa, TempDir};
use crate::{bind_summary, server_config, server_config_described, server_config_from_keys};

const DAY: i64 = 86_400;

/// A certificate signed by `alg` for DNS `example.test` and `*.example.test` and IP `::1`,
/// valid from 2024-02-29 to 2030-12-31 (midnight UTC), issued by a CA named `Test CA`.
fn generated(alg: &'static rcgen::SignatureAlgorithm) -> CertificateSummary {
    let ca_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name.push(DnType::CommonName, "Test CA");
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let issuer = rcgen::Issuer::new(ca, ca_key);

    let key = match alg {
        a if *a == rcgen::PKCS_RSA_SHA256 => {
            KeyPair::generate_rsa_for(a, rcgen::RsaKeySize::_3072).unwrap()
        }
        a => KeyPair::generate_for(a).unwrap(),
    };
    let mut params = CertificateParams::new(names(&["example.test", "*.example.test"])).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("::1".parse().unwrap()));
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, "Example Leaf");
    params.not_before = rcgen::date_time_ymd(2024, 2, 29);
    params.not_after = rcgen::date_time_ymd(2030, 12, 31);
    let cert = params.signed_by(&key, &issuer).unwrap();
    let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let certified = certify(vec![cert.der().clone(), issuer_der()], der).unwrap();
    summarize(&certified, None, names(&["example.test"])).unwrap()
}

/// Any certificate, as a chain's second element (only counted).
fn issuer_der() -> rustls_pki_types::CertificateDer<'static> {
    ecdsa().certified_key.cert[0].clone()
}

#[test]
fn key_types_names_issuer_and_validity_are_read_from_the_leaf() {
    for (alg, key_type) in [
        (&rcgen::PKCS_ECDSA_P256_SHA256, "ECDSA P-256"),
        (&rcgen::PKCS_ECDSA_P384_SHA384, "ECDSA P-384"),
        (&rcgen::PKCS_ED25519, "Ed25519"),
        (&rcgen::PKCS_RSA_SHA256, "RSA-3072"),
    ] {
        let s = generated(alg);
        assert_eq!(s.key_type, key_type);
        assert_eq!(s.subject_cn.as_deref(), Some("Example Leaf"));
        assert_eq!(s.issuer_cn.as_deref(), Some("Test CA"));
        assert_eq!(s.dns_names, names(&["example.test", "*.example.test"]));
        assert_eq!(s.ip_addresses, vec!["::1".parse::<IpAddr>().unwrap()]);
        assert_eq!(s.sni_names, names(&["example.test"]));
        assert_eq!(s.not_before, 1_709_164_800);
        assert_eq!(s.not_before_text, "2024-02-29T00:00:00Z");
        assert_eq!(s.not_after, 1_924_905_600);
        assert_eq!(s.not_after_text, "2030-12-31T00:00:00Z");
        assert_eq!(s.chain_len, 2);
        assert_eq!(s.ocsp_len, None);
        assert!(!s.default, "set by the bind, not by the certificate");
    }
}

#[test]
fn days_until_expiry_round_down_and_go_negative_once_expired() {
    let s = generated(&rcgen::PKCS_ECDSA_P256_SHA256);
    let end = s.not_after;
    assert_eq!(s.days_until_expiry(end - 30 * DAY), 30);
    assert_eq!(s.days_until_expiry(end - 30 * DAY - 1), 30);
    assert_eq!(s.days_until_expiry(end - DAY + 1), 0);
    assert_eq!(s.days_until_expiry(end - 1), 0);
    assert_eq!(s.days_until_expiry(end), 0);
    assert_eq!(s.days_until_expiry(end + 1), -1);
    assert_eq!(s.days_until_expiry(end + DAY), -1);
    assert_eq!(s.days_until_expiry(end + DAY + 1), -2);
    assert_eq!(days_until(i64::MAX, i64::MIN), i64::MAX / DAY);
}

#[test]
fn rfc3339_matches_known_dates_and_the_x509_calendar() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
    assert_eq!(rfc3339(253_402_300_799), "9999-12-31T23:59:59Z");
    // Every ~1.3 days from 1950 to 2200, against the time crate x509-parser uses.
    let mut secs = -631_152_000;
    while secs < 7_258_118_400 {
        let expected = ASN1Time::from_timestamp(secs).unwrap().to_datetime();
        let text = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            expected.year(),
            u8::from(expected.month()),
            expected.day(),
            expected.hour(),
            expected.minute(),
            expected.second()
        );
        assert_eq!(rfc3339(secs), text, "{secs}");
        secs += 113_537;
    }
}

fn settings_for(dir: &TempDir, files: &[(&str, &crate::SelfSigned)]) -> TlsSettings {
    let sources = files
        .iter()
        .map(|(name, cert)| {
            CertSource::Combined(dir.write(name, format!("{}{}", cert.cert_pem, cert.key_pem)))
        })
        .collect();
    TlsSettings::new(sources)
}

#[test]
fn a_bind_summary_lists_its_certificates_in_order_with_files_ocsp_and_the_default() {
    let dir = TempDir::new();
    let mut settings = settings_for(&dir, &[("ec.pem", ecdsa()), ("rsa.pem", rsa())]);
    dir.write("rsa.pem.ocsp", [0x30, 0x03, 0x0a, 0x01, 0x00]);
    settings.certs[1].names = names(&["extra.test"]);
    let (_, summary) = server_config_described(&settings).unwrap();
    let [ec, rs] = summary.certificates.as_slice() else {
        panic!("{summary:?}");
    };
    assert_eq!(
        ec.file.as_deref(),
        Some(dir.path().join("ec.pem").as_path())
    );
    assert_eq!(ec.key_type, "ECDSA P-256");
    assert_eq!(rs.key_type, "RSA-2048");
    assert!(ec.default && !rs.default);
    assert_eq!((ec.ocsp_len, rs.ocsp_len), (None, Some(5)));
    assert_eq!(ec.dns_names, names(&["localhost"]));
    assert_eq!(ec.ip_addresses, vec![IpAddr::from([127, 0, 0, 1])]);
    assert_eq!(rs.sni_names, names(&["localhost", "extra.test"]));
    assert_eq!(ec.subject_cn.as_deref(), Some("localhost"));
    assert!(!summary.strict_sni);

    settings.strict_sni = true;
    let (_, strict) = server_config_described(&settings).unwrap();
    assert!(strict.strict_sni);
    assert!(strict.certificates.iter().all(|c| !c.default));
}

#[test]
fn cert_dir_certificates_are_summarized_in_name_order() {
    let dir = TempDir::new();
    let certs = TempDir::new();
    certs.write("b.pem", format!("{}{}", rsa().cert_pem, rsa().key_pem));
    certs.write("a.pem", format!("{}{}", ecdsa().cert_pem, ecdsa().key_pem));
    let mut settings = settings_for(&dir, &[("first.pem", ecdsa())]);
    settings.cert_dir = Some(certs.path().to_path_buf());
    let (_, summary) = server_config_described(&settings).unwrap();
    let files: Vec<_> = summary
        .certificates
        .iter()
        .map(|c| c.file.clone().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            dir.path().join("first.pem"),
            certs.path().join("a.pem"),
            certs.path().join("b.pem")
        ]
    );
}

#[test]
fn a_configuration_and_its_copies_find_their_summary() {
    let dir = TempDir::new();
    let settings = settings_for(&dir, &[("ec.pem", ecdsa())]);
    let (config, summary) = server_config_described(&settings).unwrap();
    let found = bind_summary(&config).unwrap();
    assert!(Arc::ptr_eq(&found, &summary));
    let copy = rustls::ServerConfig::clone(&config);
    assert!(Arc::ptr_eq(&bind_summary(&copy).unwrap(), &summary));

    // Another build is another summary; a replaced resolver has none.
    let other = server_config(&settings).unwrap();
    assert!(!Arc::ptr_eq(&bind_summary(&other).unwrap(), &summary));
    let mut wrapped = copy;
    wrapped.cert_resolver = Arc::new(rustls::server::ResolvesServerCertUsingSni::new());
    assert!(bind_summary(&wrapped).is_none());

    let in_memory = server_config_from_keys(vec![rsa().certified_key.clone()]).unwrap();
    let described = bind_summary(&in_memory).unwrap();
    assert_eq!(described.certificates[0].file, None);
    assert_eq!(described.certificates[0].key_type, "RSA-2048");
    assert!(described.certificates[0].default);
}

#[test]
fn ticket_state_follows_the_resumption_settings() {
    let dir = TempDir::new();
    let mut settings = settings_for(&dir, &[("ec.pem", ecdsa())]);
    settings.resumption.ticket_rotation = Duration::from_secs(1234);
    settings.resumption.cache_size = 77;
    let (_, summary) = server_config_described(&settings).unwrap();
    assert_eq!(summary.cache_size, 77);
    let now = super::unix_now();
    let state = summary.tickets(now + 10).unwrap();
    assert_eq!(state.key_file, None);
    assert_eq!(state.rotation_secs, Some(1234));
    assert_eq!(state.lifetime_secs, 2468);
    assert_eq!(state.keys, 1);
    let since = state.key_since.unwrap();
    assert!(since <= now + 1, "{since} vs {now}");
    assert_eq!(state.key_age_secs, Some(now + 10 - since));
    assert_eq!(state.next_rotation, Some(since + 1234));

    let keys = format!(
        "{}{}",
        crate::tickets::keyfile_for_tests(&[1; 48]),
        crate::tickets::keyfile_for_tests(&[2; 80])
    );
    let key_file = dir.write("tickets.key", keys);
    settings.resumption.ticket_key_file = Some(key_file.clone());
    let (_, summary) = server_config_described(&settings).unwrap();
    let state = summary.tickets(now + 10).unwrap();
    assert_eq!(state.key_file.as_deref(), Some(key_file.as_path()));
    assert_eq!((state.keys, state.lifetime_secs), (2, 2468));
    assert_eq!(state.rotation_secs, None);
    assert!(state.loaded_at.unwrap() >= now);
    assert!(state.key_since.is_some_and(|m| m <= now + 1));

    settings.resumption.tickets = false;
    let (_, summary) = server_config_described(&settings).unwrap();
    assert_eq!(summary.tickets(now), None);
}
