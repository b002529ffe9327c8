//! Validation of `tls.engine` and the OpenSSL engine's policy.

#![allow(clippy::unwrap_used)]

use crate::model::{KxGroup, OsslVersion, SigAlg, TlsEngine};
use crate::test_support::*;
use crate::TlsSettings;

fn tls(table: &str) -> TlsSettings {
    let text = with_frontend_lines(&format!("tls = {{ {table} }}"));
    parse_ok(&text).frontends[0].binds[0].tls.clone().unwrap()
}

fn tls_error(table: &str, key_path: &str, needle: &str) {
    let text = with_frontend_lines(&format!("tls = {{ {table} }}"));
    assert_error(&text, 5, key_path, needle);
}

#[test]
fn openssl_engine_takes_legacy_versions_and_cipher_strings() {
    let t = tls(
        "certs = [\"a.pem\"], engine = \"openssl\", min_version = \"1.0\", \
         ciphers = [\"AES128-SHA:DHE-RSA-AES128-GCM-SHA256\", \"!aNULL\"], \
         suites = [\"TLS_AES_128_GCM_SHA256\"], dh_param_file = \"dh.pem\"",
    );
    let TlsEngine::OpenSsl(p) = &t.engine else {
        panic!("not openssl: {:?}", t.engine)
    };
    assert_eq!(p.min_version, OsslVersion::Tls10);
    assert_eq!(p.max_version, OsslVersion::Tls13);
    assert!(p.below_tls12());
    assert_eq!(
        p.ciphers.as_deref(),
        Some("AES128-SHA:DHE-RSA-AES128-GCM-SHA256:!aNULL")
    );
    assert_eq!(p.suites.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
    assert!(p.dh_param_file.as_ref().unwrap().ends_with("dh.pem"));
    // The default ALPN is the rustls engine's: HTTP/2 first.
    assert_eq!(t.policy.alpn, ["h2", "http/1.1"]);
    let t = tls("certs = [\"a.pem\"], engine = \"openssl\", alpn = [\"http/1.1\", \"h2\"]");
    assert_eq!(t.policy.alpn, ["http/1.1", "h2"]);
}

#[test]
fn rustls_stays_the_default_and_refuses_legacy() {
    let t = tls("certs = [\"a.pem\"]");
    assert_eq!(t.engine, TlsEngine::Rustls);
    tls_error(
        "certs = [\"a.pem\"], min_version = \"1.0\"",
        "frontend[0].tls.min_version",
        "unsupported TLS version",
    );
    tls_error(
        "certs = [\"a.pem\"], dh_param_file = \"dh.pem\"",
        "frontend[0].tls.dh_param_file",
        "only engine = \"openssl\"",
    );
    tls_error(
        "certs = [\"a.pem\"], engine = \"gnutls\"",
        "frontend[0].tls.engine",
        "unknown TLS engine `gnutls`",
    );
}

#[test]
fn refused_suites_are_errors_naming_the_reason() {
    tls_error(
        "certs = [\"a.pem\"], engine = \"openssl\", ciphers = [\"AES128-SHA\", \"RC4-SHA\"]",
        "frontend[0].tls.ciphers[1]",
        "`RC4-SHA`: RC4 is prohibited in TLS by RFC 7465",
    );
    tls_error(
        "certs = [\"a.pem\"], engine = \"openssl\", ciphers = [\"NULL-SHA\"]",
        "frontend[0].tls.ciphers[0]",
        "`NULL-SHA`: NULL suites do not encrypt",
    );
    tls_error(
        "certs = [\"a.pem\"], engine = \"openssl\", ciphers = [\"HIGH:DES-CBC3-SHA\"]",
        "frontend[0].tls.ciphers[0]",
        "Sweet32",
    );
    tls_error(
        "certs = [\"a.pem\"], engine = \"openssl\", ciphers = [\"ADH-AES128-SHA\"]",
        "frontend[0].tls.ciphers[0]",
        "anonymous",
    );
}

#[test]
fn groups_and_sigalgs_take_the_rustls_names() {
    let t = tls(
        "certs = [\"a.pem\"], engine = \"openssl\", groups = [\"P-256\", \"x25519\"], \
         sigalgs = [\"rsa_pss_rsae_sha256\", \"ECDSA+SHA256\"]",
    );
    let TlsEngine::OpenSsl(p) = &t.engine else {
        panic!("not openssl: {:?}", t.engine)
    };
    assert_eq!(
        p.groups.as_deref(),
        Some(&[KxGroup::Secp256r1, KxGroup::X25519][..])
    );
    assert_eq!(
        p.sigalgs.as_deref(),
        Some(&[SigAlg::RsaPssSha256, SigAlg::EcdsaP256Sha256][..])
    );
    assert_eq!(
        tls("certs = [\"a.pem\"], engine = \"openssl\"").engine,
        TlsEngine::OpenSsl(Default::default())
    );
}

#[test]
fn what_the_openssl_engine_lacks_is_refused_by_name() {
    tls_error(
        "certs = [\"a.pem\"], engine = \"openssl\", alpn = [\"h3\"]",
        "frontend[0].tls.alpn[0]",
        "unsupported ALPN protocol `h3`",
    );
    tls_error(
        "certs = [\"a.pem\"], engine = \"openssl\", groups = [\"x25519\", \"ffdhe2048\"]",
        "frontend[0].tls.groups[1]",
        "ffdhe2048",
    );
    tls_error(
        "certs = [\"a.pem\"], engine = \"openssl\", sigalgs = []",
        "frontend[0].tls.sigalgs",
        "must list at least one",
    );
    tls_error(
        "certs = [\"a.pem\"], engine = \"openssl\", min_version = \"1.3\", max_version = \"1.0\"",
        "frontend[0].tls.min_version",
        "above max_version",
    );
}

#[test]
fn check_notes_name_openssl_binds_and_warn_below_tls12() {
    let text = with_frontend_lines(
        "tls = { certs = [\"a.pem\"], engine = \"openssl\", min_version = \"1.1\" }",
    );
    let notes = parse_ok(&text).openssl_notes();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].starts_with("note: frontend"), "{notes:?}");
    assert!(notes[1].contains("accepts TLS 1.1"), "{notes:?}");
    let plain = with_frontend_lines("tls = { certs = [\"a.pem\"] }");
    assert!(parse_ok(&plain).openssl_notes().is_empty());
}
