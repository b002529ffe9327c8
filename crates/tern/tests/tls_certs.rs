//! Certificate features of a TLS bind through the real binary: SNI selection among the files of
//! a `cert_dir` (split `<file>.key` keys included) and configured certificates with extra
//! `names`; the default certificate for unknown or absent SNI, or a refused handshake with
//! `strict_sni`; an ECDSA and an RSA certificate for one name, chosen by the signature schemes
//! the client offers (`openssl s_client -sigalgs`); OCSP responses stapled from an explicit
//! `ocsp` file and from `<file>.ocsp` next to a certificate.

#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::*;
use support::*;

use std::path::Path;

use rustls::version::{TLS12, TLS13};
use tern_tls::KeyKind;

/// A configuration whose frontend `tls` table is `{ TLS }`.
fn tls_config(tls: &str) -> String {
    Config::new().frontend(&format!("tls = {{ {tls} }}")).toml()
}

/// A `cert_dir` with `a.pem` (a.test), `b.pem` with its key in `b.pem.key` (b.test, *.b.test)
/// and `c.pem` (c.test, RSA), plus a file that is not a certificate.
fn hosted_dir(dir: &Path) -> [rustls::pki_types::CertificateDer<'static>; 3] {
    let hosted = dir.join("hosted");
    std::fs::create_dir_all(&hosted).unwrap();
    let a = write_named_cert(&hosted, "a", &["a.test"], KeyKind::EcdsaP256);
    let b = write_named_cert(&hosted, "b", &["b.test", "*.b.test"], KeyKind::EcdsaP256);
    std::fs::rename(hosted.join("b.crt"), hosted.join("b.pem")).unwrap();
    std::fs::rename(hosted.join("b.key"), hosted.join("b.pem.key")).unwrap();
    let c = write_named_cert(&hosted, "c", &["c.test"], KeyKind::Rsa2048);
    for leftover in ["a.crt", "a.key", "c.crt", "c.key"] {
        std::fs::remove_file(hosted.join(leftover)).unwrap();
    }
    std::fs::write(hosted.join("README.txt"), "not a certificate").unwrap();
    [a, b, c]
}

#[tokio::test]
async fn sni_selects_among_cert_dir_and_configured_names() {
    let dir = temp_dir("certs-sni");
    let [a, b, c] = hosted_dir(&dir);
    let main = write_named_cert(&dir, "main", &["main.test"], KeyKind::EcdsaP256);
    let tls = format!(
        "certs = [{{ cert = {}, key = {}, names = [\"alias.test\", \"*.alias.test\"] }}], \
         cert_dir = {}",
        toml_path(&dir.join("main.crt")),
        toml_path(&dir.join("main.key")),
        toml_path(&dir.join("hosted")),
    );
    let tern = Tern::run_in(dir.clone(), &tls_config(&tls));
    let client = rustls_client(&[&TLS13, &TLS12], false);
    let cases = [
        ("a.test", &a),
        ("b.test", &b),
        ("www.b.test", &b),
        ("C.TEST", &c),
        ("main.test", &main),
        ("alias.test", &main),
        ("x.alias.test", &main),
        // Unknown names and no SNI (an IP address) get the first certificate of `certs`.
        ("unknown.test", &main),
        ("127.0.0.1", &main),
    ];
    for (sni, expected) in cases {
        let n = handshake_and_get(tern.addr(), client.clone(), sni).await;
        assert_eq!(n.leaf.as_ref(), Some(expected), "SNI {sni:?}");
    }
    let counters = tern.stop_clean();
    assert_eq!(counters.get("frontend web", "tls_full"), cases.len() as u64);

    // With only the directory, the default is its first file by name.
    let tern = Tern::run_in(
        dir.clone(),
        &tls_config(&format!("cert_dir = {}", toml_path(&dir.join("hosted")))),
    );
    for (sni, expected) in [("unknown.test", &a), ("127.0.0.1", &a), ("c.test", &c)] {
        let n = handshake_and_get(tern.addr(), client.clone(), sni).await;
        assert_eq!(
            n.leaf.as_ref(),
            Some(expected),
            "cert_dir only: SNI {sni:?}"
        );
    }
    tern.stop_clean();
}

#[tokio::test]
async fn strict_sni_refuses_unknown_and_absent_names() {
    let dir = temp_dir("certs-strict");
    let [a, b, _] = hosted_dir(&dir);
    let tls = format!(
        "cert_dir = {}, strict_sni = true",
        toml_path(&dir.join("hosted"))
    );
    let tern = Tern::run_in(dir, &tls_config(&tls));
    let client = rustls_client(&[&TLS13, &TLS12], false);
    for (sni, expected) in [("a.test", &a), ("x.b.test", &b)] {
        let n = handshake_and_get(tern.addr(), client.clone(), sni).await;
        assert_eq!(n.leaf.as_ref(), Some(expected), "SNI {sni:?}");
    }
    let mut refused = 0;
    for sni in ["unknown.test", "localhost", "127.0.0.1"] {
        let attempt = try_tls_connect(tern.addr(), client.clone(), sni).await;
        assert!(attempt.is_err(), "strict_sni served SNI {sni:?}");
        refused += 1;
    }
    if have("openssl") {
        let s = s_client(tern.addr(), None, &[], None);
        assert!(
            !s.ok && s.out.contains("Cipher is (NONE)"),
            "no SNI served:\n{}",
            s.out
        );
        let s = s_client(tern.addr(), Some("nope.test"), &[], None);
        assert!(
            !s.ok && s.out.contains("Cipher is (NONE)"),
            "unknown served:\n{}",
            s.out
        );
        let s = s_client(tern.addr(), Some("a.test"), &[], None);
        assert!(s.ok && s.new_session(), "a.test refused:\n{}", s.out);
        refused += 2;
    } else {
        println!("openssl part skipped: openssl not installed");
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_failures"), refused, "{c:?}");
}

#[tokio::test]
async fn dual_rsa_and_ecdsa_certificates_follow_the_client_signature_schemes() {
    let dir = temp_dir("certs-dual");
    let ecdsa = write_named_cert(&dir, "ecdsa", &["dual.test"], KeyKind::EcdsaP256);
    write_named_cert(&dir, "rsa", &["dual.test"], KeyKind::Rsa2048);
    // Among certificates for a name, the first (in order) whose key can sign with one of the
    // client's schemes serves: ECDSA first, so ECDSA-capable clients get it and RSA-only
    // clients fall through to the RSA certificate.
    let tls = format!(
        "certs = [{}, {}]",
        toml_path(&dir.join("ecdsa.pem")),
        toml_path(&dir.join("rsa.pem"))
    );
    let tern = Tern::run_in(dir, &tls_config(&tls));
    // tern's rustls client offers ECDSA and RSA schemes: ECDSA, on both versions.
    for version in [&TLS13, &TLS12] {
        let n = handshake_and_get(tern.addr(), rustls_client(&[version], false), "dual.test").await;
        assert_eq!(n.leaf.as_ref(), Some(&ecdsa), "{version:?}");
    }
    if !have("openssl") {
        println!("openssl part skipped: openssl not installed");
        tern.stop_clean();
        return;
    }
    let cases = [
        ("-tls1_3", "ECDSA+SHA256", "ECDSA", "256 bit"),
        ("-tls1_3", "RSA-PSS+SHA256", "RSA-PSS", "2048 bit"),
        // A client accepting both gets the first certificate that fits, whatever its order.
        ("-tls1_3", "RSA-PSS+SHA256:ECDSA+SHA256", "ECDSA", "256 bit"),
        ("-tls1_2", "ECDSA+SHA256", "ECDSA", "256 bit"),
        ("-tls1_2", "RSA-PSS+SHA256", "RSA-PSS", "2048 bit"),
        ("-tls1_2", "RSA+SHA256", "RSA", "2048 bit"),
    ];
    for (version, sigalgs, signature, key) in cases {
        let s = s_client(
            tern.addr(),
            Some("dual.test"),
            &[version, "-sigalgs", sigalgs],
            None,
        );
        let what = format!("{version} -sigalgs {sigalgs}");
        assert!(s.ok && s.new_session(), "{what}:\n{}", s.out);
        assert!(
            s.out
                .contains(&format!("Peer signature type: {signature}\n")),
            "{what}:\n{}",
            s.out
        );
        assert!(
            s.out.contains(&format!("Server public key is {key}")),
            "{what}:\n{}",
            s.out
        );
    }
    tern.stop_clean();
}

#[tokio::test]
async fn ocsp_responses_are_stapled() {
    let dir = temp_dir("certs-ocsp");
    write_named_cert(&dir, "explicit", &["explicit.test"], KeyKind::EcdsaP256);
    let hosted = dir.join("hosted");
    std::fs::create_dir_all(&hosted).unwrap();
    write_named_cert(&hosted, "implicit", &["implicit.test"], KeyKind::EcdsaP256);
    write_named_cert(&hosted, "plain", &["plain.test"], KeyKind::EcdsaP256);
    // tern staples the file as is, so any bytes do for the exact comparison.
    let explicit_bytes = b"\x30\x03\x0a\x01\x00 explicit".to_vec();
    std::fs::write(dir.join("explicit.der"), &explicit_bytes).unwrap();
    let openssl = have("openssl");
    let implicit_path = hosted.join("implicit.pem.ocsp");
    if openssl {
        write_ocsp_response(
            &hosted.join("implicit.crt"),
            &hosted.join("implicit.key"),
            &implicit_path,
        );
    } else {
        std::fs::write(&implicit_path, b"\x30\x03\x0a\x01\x00 implicit").unwrap();
    }
    let implicit_bytes = std::fs::read(&implicit_path).unwrap();
    for leftover in ["implicit.crt", "implicit.key", "plain.crt", "plain.key"] {
        std::fs::remove_file(hosted.join(leftover)).unwrap();
    }
    let tls = format!(
        "certs = [{{ cert = {}, ocsp = \"explicit.der\" }}], cert_dir = \"hosted\"",
        toml_path(&dir.join("explicit.pem")),
    );
    let tern = Tern::run_in(dir, &tls_config(&tls));

    for (sni, expected) in [
        ("explicit.test", &explicit_bytes[..]),
        ("implicit.test", &implicit_bytes[..]),
        ("plain.test", &b""[..]),
    ] {
        let (client, recorder) = ocsp_client();
        handshake_and_get(tern.addr(), client, sni).await;
        let stapled = recorder.stapled.lock().unwrap().clone();
        assert_eq!(stapled.as_deref(), Some(expected), "SNI {sni}");
    }

    if openssl {
        for version in ["-tls1_3", "-tls1_2"] {
            let s = s_client(
                tern.addr(),
                Some("implicit.test"),
                &[version, "-status"],
                None,
            );
            assert!(s.ok, "{}", s.out);
            assert!(
                s.out.contains("OCSP Response Status: successful"),
                "{version}:\n{}",
                s.out
            );
            assert!(s.out.contains("Cert Status: good"), "{version}:\n{}", s.out);
        }
        let s = s_client(tern.addr(), Some("plain.test"), &["-status"], None);
        assert!(s.ok, "{}", s.out);
        assert!(
            s.out.contains("OCSP response: no response sent"),
            "{}",
            s.out
        );
    } else {
        println!("openssl part skipped: openssl not installed");
    }
    tern.stop_clean();
}
