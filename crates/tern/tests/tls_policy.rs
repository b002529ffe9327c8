//! Per-bind TLS policy through the real binary: `max_version = "1.2"` negotiates TLS 1.2 with
//! clients offering 1.3, a `groups` list is the group negotiated (and a client sharing none is
//! refused), `min_version = "1.3"` refuses TLS 1.2-only clients, and an unknown cipher, suite or
//! group name makes `tern check` fail with the line, the key and the supported names. Checked
//! with rustls clients, and with `openssl s_client` when installed.

#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::*;
use support::*;

use rustls::version::{TLS12, TLS13};
use rustls::{NamedGroup, ProtocolVersion};
use tern_tls::KeyKind;

/// tern with one ECDSA certificate for localhost and these extra keys in its `tls` table.
fn tern_with_policy(tag: &str, policy: &str) -> Tern {
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg = Config::new().frontend(&format!("tls = {{ certs = [{cert:?}], {policy} }}"));
    Tern::run_in(dir, &cfg.toml())
}

#[tokio::test]
async fn max_version_12_negotiates_tls12_with_a_tls13_client() {
    let tern = tern_with_policy("pol-max12", "max_version = \"1.2\"");
    let n = handshake_and_get(
        tern.addr(),
        rustls_client(&[&TLS13, &TLS12], false),
        "localhost",
    )
    .await;
    assert_eq!(n.version, Some(ProtocolVersion::TLSv1_2), "{n:?}");
    // A TLS 1.3-only client has nothing to negotiate.
    let refused = try_tls_connect(tern.addr(), rustls_client(&[&TLS13], false), "localhost").await;
    assert!(refused.is_err(), "TLS 1.3 accepted with max_version 1.2");
    if have("openssl") {
        let s = s_client(tern.addr(), Some("localhost"), &[], None);
        assert!(s.ok, "{}", s.out);
        assert!(
            s.out.contains("New, TLSv1.2, Cipher is ECDHE-ECDSA-"),
            "{}",
            s.out
        );
    } else {
        println!("openssl part skipped: openssl not installed");
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_failures"), 1, "{c:?}");
}

#[tokio::test]
async fn groups_list_is_the_group_negotiated() {
    let tern = tern_with_policy("pol-groups", "groups = [\"P-384\"]");
    // tern's client offers X25519 first (its key share), then P-256 and P-384: the server's list
    // decides, through a HelloRetryRequest on TLS 1.3.
    for version in [&TLS13, &TLS12] {
        let n = handshake_and_get(tern.addr(), rustls_client(&[version], false), "localhost").await;
        assert_eq!(n.group, Some(NamedGroup::secp384r1), "{n:?}");
    }
    if have("openssl") {
        let s = s_client(tern.addr(), Some("localhost"), &["-tls1_3"], None);
        assert!(s.ok, "{}", s.out);
        assert!(
            s.out.contains("Server Temp Key: ECDH, secp384r1"),
            "{}",
            s.out
        );
        // A client offering only X25519 shares no group with this bind.
        let s = s_client(tern.addr(), Some("localhost"), &["-groups", "X25519"], None);
        assert!(!s.ok, "handshake without a shared group:\n{}", s.out);
        assert!(s.out.contains("Cipher is (NONE)"), "{}", s.out);
    } else {
        println!("openssl part skipped: openssl not installed");
    }
    tern.stop_clean();
}

#[tokio::test]
async fn min_version_13_refuses_a_tls12_only_client() {
    let tern = tern_with_policy("pol-min13", "min_version = \"1.3\"");
    let refused = try_tls_connect(tern.addr(), rustls_client(&[&TLS12], false), "localhost").await;
    let err = refused.expect_err("TLS 1.2-only client accepted");
    assert!(err.to_string().contains("ProtocolVersion"), "{err}");
    let n = handshake_and_get(
        tern.addr(),
        rustls_client(&[&TLS13, &TLS12], false),
        "localhost",
    )
    .await;
    assert_eq!(n.version, Some(ProtocolVersion::TLSv1_3), "{n:?}");
    let mut failures = 1;
    if have("openssl") {
        let s = s_client(tern.addr(), Some("localhost"), &["-tls1_2"], None);
        assert!(!s.ok, "TLS 1.2 accepted:\n{}", s.out);
        assert!(s.out.contains("Cipher is (NONE)"), "{}", s.out);
        assert!(s.out.contains("alert protocol version"), "{}", s.out);
        failures += 1;
    } else {
        println!("openssl part skipped: openssl not installed");
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_failures"), failures, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_full"), 1, "{c:?}");
}

/// `tern check` on a frontend whose `tls` table has `key = value` on a line of its own; the
/// error must name the file and that line, the key path, the bad name and every supported one.
fn check_refuses(key: &str, value: &str, bad: &str, supported: &[&str]) {
    let dir = temp_dir("pol-check");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg = Config::new().frontend(&format!(
        "tls = {{ certs = [{cert:?}],\n  {key} = {value} }}"
    ));
    let toml = cfg.toml();
    let line = toml
        .lines()
        .position(|l| l.trim_start().starts_with(&format!("{key} =")))
        .unwrap()
        + 1;
    let (_, done) = check_config(&dir, &toml);
    assert_eq!(done.code, Some(2), "{done:?}");
    let err = done.stderr;
    assert!(
        err.contains(&format!("tern.toml:{line}:")),
        "line {line}: {err}"
    );
    assert!(err.contains(&format!("frontend[0].tls.{key}")), "{err}");
    assert!(err.contains(bad), "{err}");
    for name in supported {
        assert!(err.contains(name), "{name} not listed: {err}");
    }
}

#[test]
fn unknown_policy_names_fail_the_check_with_the_supported_names() {
    check_refuses(
        "groups",
        "[\"x25519\", \"brainpoolP256r1\"]",
        "brainpoolP256r1",
        &["x25519", "X25519MLKEM768", "secp256r1", "secp384r1"],
    );
    check_refuses(
        "ciphers",
        "[\"AES128-SHA\"]",
        "AES128-SHA",
        &[
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        ],
    );
    check_refuses(
        "suites",
        "[\"TLS_AES_128_CCM_SHA256\"]",
        "TLS_AES_128_CCM_SHA256",
        &[
            "TLS_AES_128_GCM_SHA256",
            "TLS_AES_256_GCM_SHA384",
            "TLS_CHACHA20_POLY1305_SHA256",
        ],
    );
    check_refuses("min_version", "\"1.1\"", "1.1", &["1.2", "1.3"]);

    // The same keys with supported names pass.
    let dir = temp_dir("pol-check-ok");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg = Config::new().frontend(&format!(
        "tls = {{ certs = [{cert:?}], groups = [\"X25519\", \"P-256\"], \
         ciphers = [\"ECDHE-ECDSA-AES128-GCM-SHA256\"], suites = [\"TLS_AES_256_GCM_SHA384\"] }}"
    ));
    let (_, done) = check_config(&dir, &cfg.toml());
    assert_eq!(done.code, Some(0), "{done:?}");
}
