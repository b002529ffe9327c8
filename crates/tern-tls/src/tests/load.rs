//! Certificate loading: both file layouts, every key type, and an error naming the file for
//! every way a file can be wrong.

use std::path::Path;

use rcgen::{CertificateParams, KeyPair};
use tern_config::model::CertSource;

use super::{ecdsa, names, rsa, TempDir};
use crate::{load_certified_key, self_signed, KeyKind, TlsError};

fn combined(dir: &TempDir, name: &str, cert_pem: &str, key_pem: &str) -> CertSource {
    CertSource::Combined(dir.write(name, format!("{cert_pem}{key_pem}")))
}

fn load_err(src: &CertSource) -> (TlsError, String) {
    let err = load_certified_key(src).unwrap_err();
    let message = err.to_string();
    (err, message)
}

fn mentions(message: &str, path: &Path) -> bool {
    message.contains(&path.display().to_string())
}

#[test]
fn loads_combined_and_split_rsa_and_ecdsa() {
    let dir = TempDir::new();
    for (label, generated) in [("rsa", rsa()), ("ecdsa", ecdsa())] {
        let key_first = dir.write(
            &format!("{label}-key-first.pem"),
            format!("{}{}", generated.key_pem, generated.cert_pem),
        );
        let sources = [
            combined(
                &dir,
                &format!("{label}.pem"),
                &generated.cert_pem,
                &generated.key_pem,
            ),
            CertSource::Combined(key_first),
            CertSource::Split {
                cert: dir.write(&format!("{label}.crt"), &generated.cert_pem),
                key: dir.write(&format!("{label}.key"), &generated.key_pem),
            },
        ];
        for src in &sources {
            let loaded = load_certified_key(src).unwrap();
            assert_eq!(loaded.cert, generated.certified_key.cert, "{src:?}");
            assert_eq!(
                loaded.key.algorithm(),
                generated.certified_key.key.algorithm()
            );
        }
    }
}

#[test]
fn loads_a_chain_in_order() {
    let dir = TempDir::new();
    let generated = ecdsa();
    let intermediate = rsa();
    let pem = format!(
        "{}{}{}",
        generated.cert_pem, intermediate.cert_pem, generated.key_pem
    );
    let loaded = load_certified_key(&CertSource::Combined(dir.write("chain.pem", pem))).unwrap();
    assert_eq!(loaded.cert.len(), 2);
    assert_eq!(loaded.cert[0], generated.certified_key.cert[0]);
    assert_eq!(loaded.cert[1], intermediate.certified_key.cert[0]);
}

#[test]
fn loads_p384_and_ed25519_keys() {
    let dir = TempDir::new();
    for alg in [&rcgen::PKCS_ECDSA_P384_SHA384, &rcgen::PKCS_ED25519] {
        let key = KeyPair::generate_for(alg).unwrap();
        let cert = CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let src = combined(&dir, "key.pem", &cert.pem(), &key.serialize_pem());
        let loaded = load_certified_key(&src).unwrap();
        assert_eq!(loaded.cert[0], *cert.der());
    }
}

#[test]
fn wrong_key_names_both_files() {
    let dir = TempDir::new();
    let cert = dir.write("a.crt", &ecdsa().cert_pem);
    let key = dir.write("b.key", &rsa().key_pem);
    let (err, message) = load_err(&CertSource::Split {
        cert: cert.clone(),
        key: key.clone(),
    });
    assert!(matches!(err, TlsError::KeyMismatch { .. }), "{err:?}");
    assert!(
        mentions(&message, &cert) && mentions(&message, &key),
        "{message}"
    );

    // Same key type, different key: still refused.
    let other = self_signed(&names(&["localhost"]), KeyKind::EcdsaP256).unwrap();
    let src = combined(&dir, "mixed.pem", &ecdsa().cert_pem, &other.key_pem);
    assert!(matches!(load_err(&src).0, TlsError::KeyMismatch { .. }));
}

#[test]
fn missing_file_is_named() {
    let dir = TempDir::new();
    let missing = dir.path().join("nope.pem");
    let (err, message) = load_err(&CertSource::Combined(missing.clone()));
    assert!(matches!(err, TlsError::Read { .. }), "{err:?}");
    assert!(mentions(&message, &missing), "{message}");

    // In the split form, a missing key file is named, not the certificate file.
    let cert = dir.write("c.crt", &ecdsa().cert_pem);
    let (_, message) = load_err(&CertSource::Split {
        cert,
        key: missing.clone(),
    });
    assert!(mentions(&message, &missing), "{message}");
}

#[test]
fn garbage_files_are_refused_with_their_name() {
    let dir = TempDir::new();
    let cases: [(&str, &[u8]); 3] = [
        ("text.pem", b"this is not a certificate\n"),
        ("binary.pem", &[0x30, 0x82, 0xff, 0x00, 0x01, 0x02]),
        ("empty.pem", b""),
    ];
    for (name, contents) in cases {
        let path = dir.write(name, contents);
        let (err, message) = load_err(&CertSource::Combined(path.clone()));
        assert!(
            matches!(err, TlsError::NoCertificate { .. }),
            "{name}: {err:?}"
        );
        assert!(mentions(&message, &path), "{message}");
    }

    let broken = dir.write("broken.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n");
    let (err, message) = load_err(&CertSource::Combined(broken.clone()));
    assert!(matches!(err, TlsError::Pem { .. }), "{err:?}");
    assert!(mentions(&message, &broken), "{message}");

    let bad_der = dir.write(
        "bad-der.pem",
        format!(
            "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n{}",
            ecdsa().key_pem
        ),
    );
    let (err, message) = load_err(&CertSource::Combined(bad_der.clone()));
    assert!(
        matches!(err, TlsError::InvalidCertificate { .. }),
        "{err:?}"
    );
    assert!(mentions(&message, &bad_der), "{message}");
}

#[test]
fn key_problems_are_named() {
    let dir = TempDir::new();
    let cert_only = dir.write("cert-only.pem", &ecdsa().cert_pem);
    let (err, message) = load_err(&CertSource::Combined(cert_only.clone()));
    assert!(matches!(err, TlsError::NoPrivateKey { .. }), "{err:?}");
    assert!(mentions(&message, &cert_only), "{message}");

    let two = combined(
        &dir,
        "two.pem",
        &ecdsa().cert_pem,
        &format!("{}{}", ecdsa().key_pem, rsa().key_pem),
    );
    assert!(matches!(
        load_err(&two).0,
        TlsError::SeveralKeys { count: 2, .. }
    ));

    let encrypted = combined(
        &dir,
        "encrypted.pem",
        &ecdsa().cert_pem,
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\naGVsbG8=\n-----END ENCRYPTED PRIVATE KEY-----\n",
    );
    assert!(matches!(
        load_err(&encrypted).0,
        TlsError::EncryptedKey { .. }
    ));

    let junk_key = dir.write(
        "junk.key",
        "-----BEGIN PRIVATE KEY-----\naGVsbG8=\n-----END PRIVATE KEY-----\n",
    );
    let src = CertSource::Split {
        cert: dir.write("junk.crt", &ecdsa().cert_pem),
        key: junk_key.clone(),
    };
    let (err, message) = load_err(&src);
    assert!(matches!(err, TlsError::UnsupportedKey { .. }), "{err:?}");
    assert!(mentions(&message, &junk_key), "{message}");
}
