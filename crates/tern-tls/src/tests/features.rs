//! Per-bind policy, strict SNI, explicit names, `cert_dir`, OCSP and resumption settings,
//! through in-memory handshakes from configured files.

use std::sync::Arc;

use rustls::{HandshakeKind, NamedGroup, ProtocolVersion};
use tern_config::model::{CertSource, Certificate, KxGroup, SigAlg, TlsSettings, TlsVersion};

use super::{ecdsa, handshake, names, rsa, TempDir};
use crate::{client_config, self_signed, server_config, ClientOptions, KeyKind, SelfSigned};

fn write(dir: &TempDir, name: &str, cert: &SelfSigned) -> std::path::PathBuf {
    dir.write(name, format!("{}{}", cert.cert_pem, cert.key_pem))
}

fn settings(dir: &TempDir) -> TlsSettings {
    TlsSettings::new(vec![CertSource::Combined(write(dir, "e.pem", ecdsa()))])
}

#[test]
fn versions_and_groups_follow_the_policy() {
    let dir = TempDir::new();
    let mut s = settings(&dir);
    s.policy.max_version = TlsVersion::Tls12;
    s.policy.groups = vec![KxGroup::Secp384r1];
    let server = server_config(&s).unwrap();
    let client = client_config(&ClientOptions::default());
    let (c, _) = handshake(client, server, "localhost").unwrap();
    assert_eq!(c.protocol_version(), Some(ProtocolVersion::TLSv1_2));
    let group = c.negotiated_key_exchange_group().unwrap().name();
    assert_eq!(group, NamedGroup::secp384r1);

    s.policy.min_version = TlsVersion::Tls13;
    s.policy.max_version = TlsVersion::Tls13;
    let server = server_config(&s).unwrap();
    let only12 = client_config(&ClientOptions {
        versions: Some(vec![&rustls::version::TLS12]),
        ..ClientOptions::default()
    });
    assert!(handshake(only12, server, "localhost").is_err());
}

#[test]
fn alpn_list_is_offered() {
    let dir = TempDir::new();
    let mut s = settings(&dir);
    s.policy.alpn = Vec::new();
    let (c, _) = handshake(
        client_config(&ClientOptions::default()),
        server_config(&s).unwrap(),
        "localhost",
    )
    .unwrap();
    assert_eq!(c.alpn_protocol(), None);
}

#[test]
fn sigalgs_restrict_the_server_signature() {
    let dir = TempDir::new();
    let mut s = TlsSettings::new(vec![CertSource::Combined(write(&dir, "r.pem", rsa()))]);
    s.policy.sigalgs = Some(vec![SigAlg::RsaPkcs1Sha256]);
    let server = server_config(&s).unwrap();
    let client = client_config(&ClientOptions {
        versions: Some(vec![&rustls::version::TLS12]),
        resumption: false,
        ..ClientOptions::default()
    });
    // rustls clients offer PSS first; only PKCS#1 is allowed, so that is what signs.
    assert!(handshake(client.clone(), server, "localhost").is_ok());
    s.policy.sigalgs = Some(vec![SigAlg::EcdsaP256Sha256]);
    let server = server_config(&s).unwrap();
    let err = handshake(client, server, "localhost").unwrap_err();
    assert!(
        err.to_string().contains("incompatible signing key"),
        "{err}"
    );
}

#[test]
fn strict_sni_refuses_unknown_and_absent_names_and_names_extend_the_san() {
    let dir = TempDir::new();
    let other = self_signed(&names(&["other.test"]), KeyKind::EcdsaP256).unwrap();
    let mut s = settings(&dir);
    s.certs.push(Certificate {
        source: CertSource::Combined(write(&dir, "o.pem", &other)),
        names: vec!["alias.test".to_owned(), "*.wild.test".to_owned()],
        ocsp: None,
    });
    s.strict_sni = true;
    let server = server_config(&s).unwrap();
    let client = || client_config(&ClientOptions::default());
    for name in ["alias.test", "a.wild.test", "other.test"] {
        let (c, _) = handshake(client(), server.clone(), name).unwrap();
        assert_eq!(
            c.peer_certificates().unwrap()[0],
            other.certified_key.cert[0]
        );
    }
    assert!(handshake(client(), server.clone(), "localhost").is_ok());
    assert!(handshake(client(), server.clone(), "unknown.test").is_err());
    // An IP address sends no SNI.
    assert!(handshake(client(), server, "127.0.0.1").is_err());
}

#[test]
fn cert_dir_loads_every_pem_in_name_order_with_split_keys_and_ocsp() {
    let dir = TempDir::new();
    let a = self_signed(&names(&["a.test"]), KeyKind::EcdsaP256).unwrap();
    let b = self_signed(&names(&["b.test"]), KeyKind::Rsa2048).unwrap();
    write(&dir, "a.pem", &a);
    dir.write("b.pem", &b.cert_pem);
    dir.write("b.pem.key", &b.key_pem);
    dir.write("b.pem.ocsp", b"\x30\x03\x0a\x01\x00");
    dir.write("notes.txt", "ignored");
    let mut s = TlsSettings::new(Vec::new());
    s.cert_dir = Some(dir.path().to_path_buf());
    let server = server_config(&s).unwrap();
    assert_eq!(crate::load_cert_dir(dir.path()).unwrap(), 2);
    let client = || client_config(&ClientOptions::default());
    let (c, _) = handshake(client(), server.clone(), "b.test").unwrap();
    assert_eq!(c.peer_certificates().unwrap()[0], b.certified_key.cert[0]);
    // The default is the first file by name.
    let (c, _) = handshake(client(), server, "unknown.test").unwrap();
    assert_eq!(c.peer_certificates().unwrap()[0], a.certified_key.cert[0]);
}

#[test]
fn explicit_ocsp_file_must_exist() {
    let dir = TempDir::new();
    let mut s = settings(&dir);
    s.certs[0].ocsp = Some(dir.path().join("missing.ocsp"));
    let err = server_config(&s).unwrap_err().to_string();
    assert!(err.contains("missing.ocsp"), "{err}");
}

/// Connects twice with one client configuration; the kind of the second handshake.
fn second_handshake(server: &Arc<rustls::ServerConfig>, tls12: bool) -> HandshakeKind {
    let client = client_config(&ClientOptions {
        versions: tls12.then(|| vec![&rustls::version::TLS12]),
        ..ClientOptions::default()
    });
    for _ in 0..2 {
        let (mut c, _) = handshake(client.clone(), server.clone(), "localhost").unwrap();
        // Let the client read the TLS 1.3 ticket that follows the handshake.
        let _ = c.process_new_packets();
    }
    let (c, _) = handshake(client, server.clone(), "localhost").unwrap();
    c.handshake_kind().unwrap()
}

#[test]
fn resumption_by_tickets_by_cache_or_not_at_all() {
    let dir = TempDir::new();
    let mut s = settings(&dir);
    for tls12 in [false, true] {
        s.resumption.tickets = true;
        s.resumption.cache_size = 0;
        let server = server_config(&s).unwrap();
        assert_eq!(second_handshake(&server, tls12), HandshakeKind::Resumed);
        s.resumption.tickets = false;
        let server = server_config(&s).unwrap();
        assert_eq!(second_handshake(&server, tls12), HandshakeKind::Full);
        s.resumption.cache_size = 100;
        let server = server_config(&s).unwrap();
        assert_eq!(
            second_handshake(&server, tls12),
            HandshakeKind::Resumed,
            "{tls12}"
        );
    }
}

#[test]
fn a_shared_key_file_resumes_across_configurations() {
    let dir = TempDir::new();
    let key: String = super::super::tickets::keyfile_for_tests(&[5u8; 48]);
    let mut s = settings(&dir);
    s.resumption.ticket_key_file = Some(dir.write("keys", key));
    let one = server_config(&s).unwrap();
    let two = server_config(&s).unwrap();
    let client = client_config(&ClientOptions::default());
    let (mut c, _) = handshake(client.clone(), one, "localhost").unwrap();
    let _ = c.process_new_packets();
    let (c, _) = handshake(client, two, "localhost").unwrap();
    assert_eq!(c.handshake_kind(), Some(HandshakeKind::Resumed));
}
