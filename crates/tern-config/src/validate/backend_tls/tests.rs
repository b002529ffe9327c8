#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::model::{CheckKind, ServerSni, ServerTls, ServerVerify};
use crate::test_support::{backend_error, backend_with_servers, parse_backend, parse_ok};

const CERT: &str = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
const KEY: &str = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";

/// A file with `text` in a directory of this test's own.
fn file(test: &str, name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-config-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn show(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn tls_true_needs_a_ca_unless_verify_none() {
    let error = backend_error("tls = true");
    assert!(
        error.contains("backend[0].tls: verify = \"required\""),
        "{error}"
    );
    let be = parse_backend("tls = { verify = \"none\" }");
    assert_eq!(
        be.servers[0].tls,
        Some(ServerTls {
            verify: ServerVerify::None,
            sni: ServerSni::None,
            alpn: Vec::new(),
            cert: None,
            session_reuse: true,
        })
    );
}

#[test]
fn backend_default_and_server_overrides() {
    let ca = file("overrides", "ca.pem", CERT);
    let client = file("overrides", "client.pem", &format!("{CERT}{KEY}"));
    let text = backend_with_servers(
        &format!(
            "tls = {{ ca = \"{}\", sni = \"api.example.com\", alpn = [\"http/1.1\"] }}",
            show(&ca)
        ),
        &[
            "{ name = \"a\", address = \"127.0.0.1:1\" }",
            "{ name = \"b\", address = \"127.0.0.1:2\", tls = false }",
            &format!(
                "{{ name = \"c\", address = \"127.0.0.1:3\", tls = {{ sni = \"host\", cert = \"{}\", session_reuse = false }} }}",
                show(&client)
            ),
        ],
    );
    let config = parse_ok(&text);
    let servers = &config.backends[0].servers;
    let a = servers[0].tls.as_ref().unwrap();
    assert_eq!(a.verify, ServerVerify::Required { ca: ca.clone() });
    assert_eq!(a.sni, ServerSni::Fixed("api.example.com".into()));
    assert_eq!(a.alpn, vec!["http/1.1".to_owned()]);
    assert!(servers[1].tls.is_none());
    let c = servers[2].tls.as_ref().unwrap();
    assert_eq!(c.verify, ServerVerify::Required { ca });
    assert_eq!(c.sni, ServerSni::Host);
    assert_eq!(c.cert.as_deref(), Some(client.as_path()));
    assert!(!c.session_reuse);
}

#[test]
fn files_are_read_and_their_pem_checked() {
    let missing = std::env::temp_dir().join("tern-config-no-such-dir/ca.pem");
    let error = backend_error(&format!("tls = {{ ca = \"{}\" }}", show(&missing)));
    assert!(
        error.contains(":8: backend[0].tls.ca: cannot read"),
        "{error}"
    );
    let empty = file("pem", "empty.pem", "no pem here\n");
    let error = backend_error(&format!("tls = {{ ca = \"{}\" }}", show(&empty)));
    assert!(error.contains("backend[0].tls.ca:"), "{error}");
    assert!(error.contains("no certificate found"), "{error}");
    let bad = file("pem", "bad.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n");
    let error = backend_error(&format!("tls = {{ ca = \"{}\" }}", show(&bad)));
    assert!(error.contains("malformed PEM"), "{error}");
    let no_key = file("pem", "nokey.pem", CERT);
    let error = backend_error(&format!(
        "tls = {{ verify = \"none\", cert = \"{}\" }}",
        show(&no_key)
    ));
    assert!(error.contains("backend[0].tls.cert:"), "{error}");
    assert!(error.contains("no private key found"), "{error}");
}

#[test]
fn sni_must_be_a_dns_name_or_host() {
    let error = backend_error("tls = { verify = \"none\", sni = \"not a name\" }");
    assert!(
        error.contains(":8: backend[0].tls.sni: `not a name` is not a DNS name"),
        "{error}"
    );
    let error = backend_error("tls = { verify = \"none\", sni = \"10.0.0.1\" }");
    assert!(error.contains("is an IP address"), "{error}");
}

#[test]
fn unknown_values_are_refused() {
    let error = backend_error("tls = { verify = \"optional\" }");
    assert!(
        error.contains("backend[0].tls.verify: unknown value `optional`"),
        "{error}"
    );
    let error = backend_error("tls = { verify = \"none\", alpn = [\"h3\"] }");
    assert!(
        error.contains("backend[0].tls.alpn[0]: unsupported protocol `h3`"),
        "{error}"
    );
    let error = backend_error("tls = { verify = \"none\", sni_name = \"x\" }");
    assert!(error.contains("sni_name"), "{error}");
}

#[test]
fn checks_of_tls_servers_go_over_tls() {
    let be = parse_backend(
        "tls = { verify = \"none\", sni = \"api.example.com\" }\ncheck = { type = \"http\" }",
    );
    match &be.servers[0].check.as_ref().unwrap().kind {
        CheckKind::Tls { sni, http } => {
            assert_eq!(sni.as_deref(), Some("api.example.com"));
            assert!(http.is_some());
        }
        other => panic!("expected an https check, got {other:?}"),
    }
    // A check on another port is not the TLS service: left as written.
    let be = parse_backend("tls = { verify = \"none\" }\ncheck = { type = \"http\", port = 9000 }");
    assert!(matches!(
        be.servers[0].check.as_ref().unwrap().kind,
        CheckKind::Http(_)
    ));
}
