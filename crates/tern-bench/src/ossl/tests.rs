#![allow(clippy::unwrap_used)]

use super::client::wire_alpn;
use super::names::{key_exchange, suite_name, version_name};
use super::OsslSetup;
use crate::args::BenchArgs;

fn args(extra: &[&str]) -> BenchArgs {
    let mut all = vec!["https://localhost:8443/", "--tls-engine", "openssl"];
    all.extend_from_slice(extra);
    BenchArgs::from_args(all).unwrap()
}

#[test]
fn names_read_like_the_rustls_engine() {
    assert_eq!(version_name("TLSv1"), "TLSv1_0");
    assert_eq!(version_name("TLSv1.2"), "TLSv1_2");
    assert_eq!(
        suite_name("TLS_AES_128_GCM_SHA256"),
        "TLS13_AES_128_GCM_SHA256"
    );
    assert_eq!(
        suite_name("TLS_RSA_WITH_AES_128_CBC_SHA"),
        "TLS_RSA_WITH_AES_128_CBC_SHA"
    );
}

#[test]
fn key_exchange_from_the_suite_or_the_group() {
    let desc = |kx: &str| format!("AES128-SHA SSLv3 Kx={kx} Au=RSA Enc=AES(128) Mac=SHA1");
    assert_eq!(key_exchange(&desc("RSA"), None), "RSA");
    assert_eq!(key_exchange(&desc("DH"), Some("DH2048")), "DHE");
    assert_eq!(key_exchange(&desc("ECDH"), Some("X25519")), "ECDHE");
    assert_eq!(key_exchange(&desc("any"), Some("X25519")), "ECDHE");
    assert_eq!(key_exchange(&desc("any"), Some("DH3072")), "DHE");
    assert_eq!(key_exchange("", None), "any");
}

#[test]
fn alpn_wire_format() {
    let wire = wire_alpn(&["h2".to_owned(), "http/1.1".to_owned()]).unwrap();
    assert_eq!(wire, b"\x02h2\x08http/1.1");
    assert!(wire_alpn(&[String::new()]).is_err());
}

#[test]
fn contexts_for_legacy_suites_and_versions() {
    for extra in [
        &["--ciphers", "AES128-SHA"][..],
        &[
            "--ciphers",
            "DHE-RSA-AES128-GCM-SHA256,ECDHE-RSA-AES128-SHA",
        ],
        &["--ciphers", "AES128-SHA:AES256-SHA", "--tls-version", "1.0"],
        &["--ciphers", "TLS_AES_128_GCM_SHA256", "--group", "p256"],
        &["--sigalg", "rsa_pss_rsae_sha256", "--alpn", "http/1.1"],
        &["--h2"],
    ] {
        assert!(
            OsslSetup::new(&args(extra), "localhost", true).is_ok(),
            "{extra:?}"
        );
    }
    let setup = OsslSetup::new(&args(&[]), "127.0.0.1", true).unwrap();
    assert!(setup.ssl().is_ok());
}

#[test]
fn refuses_what_it_cannot_do() {
    let err = |extra: &[&str]| {
        OsslSetup::new(&args(extra), "localhost", true)
            .unwrap_err()
            .to_string()
    };
    assert!(err(&["--ciphers", "NOPE-SHA"]).contains("cipher string"));
    assert!(err(&["--resume", "ticket"]).contains("--resume"));
    // The reference probe never resumes: --resume does not concern it.
    assert!(OsslSetup::new(&args(&["--resume", "ticket"]), "localhost", false).is_ok());
}
