//! The OpenSSL engine's acceptor: built from configured files, certificates chosen by SNI,
//! the policy's suites negotiated, and a cipher string selecting nothing refused by name.
//! Handshakes run over a socket pair with the `openssl` crate's client.

use std::os::unix::net::UnixStream;

use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode, SslVersion};
use tern_config::model::{CertSource, OpensslPolicy, TlsEngine, TlsSettings};

use super::{ecdsa, names, TempDir};
use crate::{openssl_acceptor, self_signed, KeyKind, TlsError};

/// An OpenSSL bind serving the ECDSA localhost certificate first, then an RSA one for
/// `other.test`.
fn settings(dir: &TempDir, ciphers: &str) -> TlsSettings {
    let e = ecdsa();
    let other = self_signed(&names(&["other.test"]), KeyKind::Rsa2048).unwrap();
    let mut s = TlsSettings::new(vec![
        CertSource::Combined(dir.write("e.pem", format!("{}{}", e.cert_pem, e.key_pem))),
        CertSource::Combined(dir.write("o.pem", format!("{}{}", other.cert_pem, other.key_pem))),
    ]);
    s.engine = TlsEngine::OpenSsl(OpensslPolicy {
        ciphers: Some(ciphers.to_owned()),
        ..OpensslPolicy::default()
    });
    s
}

/// A TLS 1.2 handshake offering `cipher` to `sni`: the suite and the certificate's subject.
fn handshake(s: &TlsSettings, sni: &str, cipher: &str) -> Result<(String, String), String> {
    let acceptor = openssl_acceptor(s).map_err(|e| e.to_string())?;
    let (a, b) = UnixStream::pair().unwrap();
    let ssl = acceptor.ssl().unwrap();
    let server = std::thread::spawn(move || ssl.accept(a).map(|_| ()).map_err(|e| e.to_string()));
    let mut c = SslConnector::builder(SslMethod::tls_client()).unwrap();
    c.set_verify(SslVerifyMode::NONE);
    c.set_max_proto_version(Some(SslVersion::TLS1_2)).unwrap();
    c.set_cipher_list(cipher).unwrap();
    let config = c.build().configure().unwrap().verify_hostname(false);
    let got = config.connect(sni, b).map_err(|e| e.to_string());
    let served = server.join().unwrap();
    let stream = got?;
    served?;
    let suite = stream.ssl().current_cipher().unwrap().name().to_owned();
    let cert = stream.ssl().peer_certificate().unwrap();
    let subject = format!(
        "{:?}",
        cert.subject_alt_names()
            .unwrap()
            .iter()
            .next()
            .unwrap()
            .dnsname()
    );
    Ok((suite, subject))
}

#[test]
fn sni_chooses_the_certificate_and_static_rsa_needs_the_rsa_one() {
    let dir = TempDir::new();
    let s = settings(&dir, "AES128-SHA:ECDHE-ECDSA-AES128-GCM-SHA256");
    let (suite, name) = handshake(&s, "other.test", "AES128-SHA").unwrap();
    assert_eq!(
        (suite.as_str(), name.as_str()),
        ("AES128-SHA", "Some(\"other.test\")")
    );
    let (suite, name) = handshake(&s, "localhost", "ECDHE-ECDSA-AES128-GCM-SHA256").unwrap();
    assert_eq!(suite, "ECDHE-ECDSA-AES128-GCM-SHA256");
    assert_eq!(name, "Some(\"localhost\")");
    // Static RSA with the ECDSA certificate: nothing in common.
    assert!(handshake(&s, "localhost", "AES128-SHA").is_err());
}

#[test]
fn refused_families_cannot_come_back_and_empty_selections_are_errors() {
    let dir = TempDir::new();
    let s = settings(&dir, "ALL:COMPLEMENTOFALL:@SECLEVEL=0");
    assert!(handshake(&s, "other.test", "NULL-SHA:@SECLEVEL=0").is_err());
    assert!(handshake(&s, "other.test", "ADH-AES128-SHA:@SECLEVEL=0").is_err());
    let s = settings(&dir, "NOSUCHCIPHER");
    match openssl_acceptor(&s) {
        Err(TlsError::OpenSsl(m)) => assert!(m.contains("ciphers"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn weak_dh_parameters_are_refused_naming_the_file() {
    let dir = TempDir::new();
    let mut s = settings(&dir, "DHE-RSA-AES128-GCM-SHA256");
    let dh = openssl::dh::Dh::get_1024_160().unwrap();
    let pem = dh.params_to_pem().unwrap();
    let path = dir.write("dh.pem", String::from_utf8(pem).unwrap());
    if let TlsEngine::OpenSsl(p) = &mut s.engine {
        p.dh_param_file = Some(path);
    }
    let e = openssl_acceptor(&s).unwrap_err().to_string();
    assert!(e.contains("dh.pem: DH prime of 1024 bits"), "{e}");
}
