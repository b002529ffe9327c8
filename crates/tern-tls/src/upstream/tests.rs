#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use tern_config::model::{ServerSni, ServerTls, ServerVerify};

use super::*;
use crate::{self_signed, KeyKind};

fn file(test: &str, name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-tls-upstream-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn settings(verify: ServerVerify) -> ServerTls {
    ServerTls {
        verify,
        sni: ServerSni::None,
        alpn: vec!["http/1.1".to_owned()],
        cert: None,
        session_reuse: true,
    }
}

#[test]
fn builds_with_a_ca_a_client_certificate_and_alpn() {
    let ca = self_signed(&["backend.test".to_owned()], KeyKind::EcdsaP256).unwrap();
    let client = self_signed(&["tern".to_owned()], KeyKind::EcdsaP256).unwrap();
    let mut tls = settings(ServerVerify::Required {
        ca: file("ok", "ca.pem", &ca.cert_pem),
    });
    tls.cert = Some(file(
        "ok",
        "client.pem",
        &format!("{}{}", client.cert_pem, client.key_pem),
    ));
    let config = upstream_config(&tls).unwrap();
    assert!(config.client_auth_cert_resolver.has_certs());
    assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
}

#[test]
fn session_reuse_off_disables_the_store() {
    let mut tls = settings(ServerVerify::None);
    tls.session_reuse = false;
    let config = upstream_config(&tls).unwrap();
    assert!(format!("{:?}", config.resumption).contains("Disabled"));
}

#[test]
fn bad_files_name_themselves() {
    let empty = file("bad", "empty.pem", "nothing\n");
    let err = upstream_config(&settings(ServerVerify::Required { ca: empty.clone() }))
        .unwrap_err()
        .to_string();
    assert!(err.contains(&empty.display().to_string()), "{err}");
    assert!(err.contains("no certificate"), "{err}");
    let ca = self_signed(&["x.test".to_owned()], KeyKind::EcdsaP256).unwrap();
    let mut tls = settings(ServerVerify::None);
    tls.cert = Some(file("bad", "nokey.pem", &ca.cert_pem));
    let err = upstream_config(&tls).unwrap_err().to_string();
    assert!(err.contains("no private key"), "{err}");
}
