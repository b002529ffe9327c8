//! Validation of the `tls` table: policy names, certificates' names and OCSP, `cert_dir`,
//! `strict_sni` and resumption.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::Duration;

use crate::model::{KxGroup, SigAlg, Tls12Cipher, Tls13Suite, TlsVersion};
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
fn policy_names_in_any_spelling_keep_their_order() {
    let t = tls(
        "certs = [\"a.pem\"], min_version = \"1.2\", max_version = \"TLSv1.2\", \
         ciphers = [\"ECDHE-RSA-AES256-GCM-SHA384\", \"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\", \
         \"ecdhe-rsa-aes256-gcm-sha384\"], suites = [\"TLS_CHACHA20_POLY1305_SHA256\"], \
         groups = [\"P-256\", \"X25519MLKEM768\", \"x25519\"], sigalgs = [\"ECDSA+SHA256\", \
         \"rsa_pss_rsae_sha256\"], alpn = [], prefer_server_ciphers = false",
    );
    let p = &t.policy;
    assert_eq!(
        (p.min_version, p.max_version),
        (TlsVersion::Tls12, TlsVersion::Tls12)
    );
    assert_eq!(
        p.ciphers,
        [
            Tls12Cipher::EcdheRsaAes256Gcm,
            Tls12Cipher::EcdheEcdsaAes128Gcm
        ]
    );
    assert_eq!(p.suites, [Tls13Suite::Chacha20]);
    assert_eq!(
        p.groups,
        [KxGroup::Secp256r1, KxGroup::X25519Mlkem768, KxGroup::X25519]
    );
    assert_eq!(
        p.sigalgs,
        Some(vec![SigAlg::EcdsaP256Sha256, SigAlg::RsaPssSha256])
    );
    assert!(p.alpn.is_empty());
    assert!(!p.prefer_server_ciphers);
}

#[test]
fn defaults_are_tern_policy_and_tickets() {
    let t = tls("certs = [\"a.pem\"]");
    assert_eq!(t.policy, crate::model::TlsPolicy::default());
    assert_eq!(t.policy.alpn, ["h2", "http/1.1"]);
    assert!(t.resumption.tickets);
    assert_eq!(t.resumption.cache_size, 0);
    assert!(!t.strict_sni);
}

#[test]
fn unsupported_names_list_the_supported_ones() {
    tls_error(
        "certs = [\"a.pem\"], groups = [\"x25519\", \"ffdhe2048\"]",
        "frontend[0].tls.groups[1]",
        "unsupported name `ffdhe2048` (supported: x25519, X25519MLKEM768, secp256r1, secp384r1)",
    );
    tls_error(
        "certs = [\"a.pem\"], ciphers = [\"AES128-SHA\"]",
        "frontend[0].tls.ciphers[0]",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    );
    tls_error(
        "certs = [\"a.pem\"], min_version = \"1.1\"",
        "frontend[0].tls.min_version",
        "unsupported TLS version `1.1` (supported: 1.2, 1.3)",
    );
    tls_error(
        "certs = [\"a.pem\"], min_version = \"1.3\", max_version = \"1.2\"",
        "frontend[0].tls.min_version",
        "above max_version",
    );
    tls_error(
        "certs = [\"a.pem\"], suites = []",
        "frontend[0].tls.suites",
        "must list at least one of",
    );
    tls_error(
        "certs = [\"a.pem\"], alpn = [\"h3\"]",
        "frontend[0].tls.alpn[0]",
        "unsupported ALPN protocol `h3`: tern speaks h2, http/1.1, http/1.0",
    );
}

#[test]
fn an_empty_cipher_list_is_fine_when_tls12_is_off() {
    let t = tls("certs = [\"a.pem\"], min_version = \"1.3\", ciphers = []");
    assert!(t.policy.ciphers.is_empty());
}

#[test]
fn certificates_take_names_ocsp_and_a_directory() {
    let t = tls(
        "certs = [{ cert = \"a.pem\", names = [\"Www.Example.com\", \"*.example.net\"], \
         ocsp = \"a.der\" }], cert_dir = \"certs\", strict_sni = true",
    );
    assert_eq!(t.certs[0].names, ["www.example.com", "*.example.net"]);
    assert_eq!(t.certs[0].ocsp, Some(PathBuf::from("/etc/tern/a.der")));
    assert_eq!(t.cert_dir, Some(PathBuf::from("/etc/tern/certs")));
    assert!(t.strict_sni);
    let t = tls("cert_dir = \"/srv/certs\"");
    assert!(t.certs.is_empty());
    tls_error(
        "certs = [{ cert = \"a.pem\", names = [\"bad name\"] }]",
        "frontend[0].tls.certs[0].names[0]",
        "not a DNS name",
    );
    tls_error(
        "strict_sni = true",
        "frontend[0].tls.certs",
        "or give `cert_dir`",
    );
}

#[test]
fn resumption_settings() {
    let t = tls(
        "certs = [\"a.pem\"], resumption = { tickets = true, ticket_rotation = \"10m\", \
         ticket_key_file = \"keys\", cache_size = 20000 }",
    );
    let r = &t.resumption;
    assert_eq!(r.ticket_rotation, Duration::from_secs(600));
    assert_eq!(r.ticket_key_file, Some(PathBuf::from("/etc/tern/keys")));
    assert_eq!(r.cache_size, 20000);
    tls_error(
        "certs = [\"a.pem\"], resumption = { tickets = false, ticket_key_file = \"k\" }",
        "frontend[0].tls.resumption.ticket_key_file",
        "needs `tickets = true`",
    );
    tls_error(
        "certs = [\"a.pem\"], resumption = { ticket_rotation = \"5d\" }",
        "frontend[0].tls.resumption.ticket_rotation",
        "between 1s and 3d",
    );
    tls_error(
        "certs = [\"a.pem\"], resumption = { cache_size = -1 }",
        "frontend[0].tls.resumption.cache_size",
        "out of range",
    );
}
