//! Certificate selection by SNI through real handshakes, from files as configured.

use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use tern_config::model::{CertSource, TlsSettings};

use super::{handshake, names, TempDir};
use crate::{client_config, self_signed, server_config, ClientOptions, KeyKind, TlsError};

/// Writes one combined file per certificate and returns the sources and the leaf certificates.
fn configured(dir: &TempDir, sets: &[&[&str]]) -> (TlsSettings, Vec<CertificateDer<'static>>) {
    let mut certs = Vec::new();
    let mut leaves = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let generated = self_signed(&names(set), KeyKind::EcdsaP256).unwrap();
        let pem = format!("{}{}", generated.cert_pem, generated.key_pem);
        certs.push(CertSource::Combined(dir.write(&format!("{i}.pem"), pem)));
        leaves.push(generated.certified_key.cert[0].clone());
    }
    (TlsSettings::new(certs), leaves)
}

fn served_for(config: &Arc<rustls::ServerConfig>, name: &str) -> CertificateDer<'static> {
    let client = client_config(&ClientOptions::default());
    let (client, _) = handshake(client, config.clone(), name).unwrap();
    client.peer_certificates().unwrap()[0].clone()
}

#[test]
fn picks_by_sni_exact_before_wildcard_else_default() {
    let dir = TempDir::new();
    let (settings, leaves) = configured(
        &dir,
        &[
            &["default.test"],
            &["*.example.com"],
            &["exact.example.com", "other.test"],
        ],
    );
    let config = server_config(&settings).unwrap();
    let cases = [
        ("default.test", 0),
        ("exact.example.com", 2),
        ("EXACT.Example.COM", 2),
        ("other.test", 2),
        ("x.example.com", 1),
        ("a.b.example.com", 0),
        ("example.com", 0),
        ("unknown.test", 0),
        ("127.0.0.1", 0), // an IP address sends no SNI
    ];
    for (name, expected) in cases {
        assert!(
            served_for(&config, name) == leaves[expected],
            "{name} should get cert #{expected}"
        );
    }
}

#[test]
fn single_certificate_is_always_served() {
    let dir = TempDir::new();
    let (settings, leaves) = configured(&dir, &[&["only.test"]]);
    let config = server_config(&settings).unwrap();
    for name in ["only.test", "something.else", "127.0.0.1"] {
        assert!(served_for(&config, name) == leaves[0], "{name}");
    }
}

#[test]
fn load_errors_surface_from_server_config() {
    let dir = TempDir::new();
    let (mut settings, _) = configured(&dir, &[&["a.test"]]);
    let missing = dir.path().join("missing.pem");
    settings
        .certs
        .push(CertSource::Combined(missing.clone()).into());
    let err = server_config(&settings).unwrap_err();
    assert!(
        matches!(err, TlsError::Read { ref path, .. } if *path == missing),
        "{err:?}"
    );
    assert!(matches!(
        server_config(&TlsSettings::new(vec![])),
        Err(TlsError::NoCertificates)
    ));
}
