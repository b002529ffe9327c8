//! Validation of `tls.client_auth` and the frontend's `client_cert_headers`.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use crate::model::{ClientAuth, ClientVerify};
use crate::test_support::*;

fn client_auth(table: &str) -> ClientAuth {
    let text = with_frontend_lines(&format!(
        "tls = {{ certs = [\"a.pem\"], client_auth = {{ {table} }} }}"
    ));
    let tls = parse_ok(&text).frontends[0].binds[0].tls.clone().unwrap();
    tls.client_auth
}

fn client_auth_error(table: &str, key_path: &str, needle: &str) {
    let text = with_frontend_lines(&format!(
        "tls = {{ certs = [\"a.pem\"], client_auth = {{ {table} }} }}"
    ));
    assert_error(&text, 5, key_path, needle);
}

#[test]
fn off_unless_configured() {
    let text = with_frontend_lines("tls = { certs = [\"a.pem\"] }");
    let config = parse_ok(&text);
    let tls = config.frontends[0].binds[0].tls.as_ref().unwrap();
    assert_eq!(tls.client_auth, ClientAuth::default());
    assert_eq!(tls.client_auth.verify, ClientVerify::None);
    assert!(!config.frontends[0].client_cert_headers);
}

#[test]
fn modes_ca_and_crls_resolve() {
    let c = client_auth("verify = \"optional\", ca = \"ca.pem\", crl = [\"a.crl\", \"b.crl\"]");
    assert_eq!(c.verify, ClientVerify::Optional);
    assert!(c.ca.as_ref().unwrap().ends_with("ca.pem"));
    assert!(c.ca.as_ref().unwrap().is_absolute());
    let crls: Vec<&PathBuf> = c.crl.iter().collect();
    assert!(crls[0].ends_with("a.crl") && crls[1].ends_with("b.crl"));
    assert_eq!(
        client_auth("verify = \"NONE\"").verify,
        ClientVerify::None,
        "names are case-insensitive"
    );
}

#[test]
fn a_table_without_verify_requires_certificates() {
    assert_eq!(
        client_auth("ca = \"ca.pem\"").verify,
        ClientVerify::Required
    );
}

#[test]
fn mistakes_name_their_key() {
    client_auth_error(
        "verify = \"sometimes\", ca = \"ca.pem\"",
        "frontend[0].tls.client_auth.verify",
        "unknown mode `sometimes`: expected one of \"none\", \"optional\", \"required\"",
    );
    client_auth_error(
        "verify = \"required\"",
        "frontend[0].tls.client_auth.ca",
        "missing key `ca`",
    );
    client_auth_error(
        "verify = \"optional\", crl = [\"a.crl\"]",
        "frontend[0].tls.client_auth.ca",
        "missing key `ca`",
    );
    client_auth_error(
        "verify = \"none\", ca = \"ca.pem\"",
        "frontend[0].tls.client_auth.ca",
        "has no effect with verify = \"none\"",
    );
    client_auth_error(
        "ca = \"ca.pem\", crl = [\"\"]",
        "frontend[0].tls.client_auth.crl[0]",
        "must not be empty",
    );
    client_auth_error(
        "ca = \"ca.pem\", crl_file = \"x\"",
        "frontend[0].tls.client_auth.crl_file",
        "unknown field `crl_file`, expected one of `verify`, `ca`, `crl`",
    );
}

#[test]
fn client_cert_headers_is_a_frontend_switch() {
    let text = with_frontend_lines("client_cert_headers = true");
    assert!(parse_ok(&text).frontends[0].client_cert_headers);
}
