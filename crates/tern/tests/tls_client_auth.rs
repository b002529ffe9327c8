//! Client certificates (mTLS) through the real binary: `client_auth` with `verify = "required"`
//! accepts a certificate of its CA and passes its subject and fingerprint to the server
//! (`client_cert_headers`, seen in the request head `tern term` dumps for `/?h=1`), and refuses
//! with a TLS alert a client without a certificate, one from another CA, and a revoked one
//! (CRL); `optional` lets a client without a certificate through with `X-SSL-Client-Verify:
//! NONE`. Refusals are counted by reason. rustls clients, and `openssl s_client -cert -key`.
//! Each scenario runs on both engines of a bind: rustls, and OpenSSL (`engine = "openssl"`,
//! default build only).

#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::*;
use support::*;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, CertificateRevocationListParams,
    DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyIdMethod, KeyPair,
    KeyUsagePurpose, RevokedCertParams, SerialNumber,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;

struct Ca {
    params: CertificateParams,
    key: KeyPair,
}

impl Ca {
    fn new(name: &str, dir: &Path, file: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().unwrap();
        std::fs::write(dir.join(file), params.self_signed(&key).unwrap().pem()).unwrap();
        Ca { params, key }
    }

    /// Issues a certificate for `cn` (a server one for `localhost` when `server`), written as
    /// `<file>.crt` and `<file>.key`; returns its DER.
    fn issue(&self, dir: &Path, file: &str, cn: &str, serial: u64, server: bool) -> Vec<u8> {
        let sans = if server {
            vec!["localhost".to_owned()]
        } else {
            Vec::new()
        };
        let mut params = CertificateParams::new(sans).unwrap();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::OrganizationName, "Tern Test");
        params.distinguished_name.push(DnType::CommonName, cn);
        params.serial_number = Some(SerialNumber::from(serial));
        params.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        let key = KeyPair::generate().unwrap();
        let cert = params
            .signed_by(&key, &Issuer::from_params(&self.params, &self.key))
            .unwrap();
        std::fs::write(dir.join(format!("{file}.crt")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{file}.key")), key.serialize_pem()).unwrap();
        cert.der().to_vec()
    }

    /// Writes a CRL revoking these serial numbers to `file`.
    fn crl(&self, dir: &Path, file: &str, revoked: &[u64]) {
        let params = CertificateRevocationListParams {
            this_update: date_time_ymd(2020, 1, 1),
            next_update: date_time_ymd(2090, 1, 1),
            crl_number: SerialNumber::from(1u64),
            issuing_distribution_point: None,
            revoked_certs: revoked
                .iter()
                .map(|&serial| RevokedCertParams {
                    serial_number: SerialNumber::from(serial),
                    revocation_time: date_time_ymd(2021, 1, 1),
                    reason_code: None,
                    invalidity_date: None,
                })
                .collect(),
            key_identifier_method: KeyIdMethod::Sha256,
        };
        let crl = params
            .signed_by(&Issuer::from_params(&self.params, &self.key))
            .unwrap();
        std::fs::write(dir.join(file), crl.pem().unwrap()).unwrap();
    }
}

/// The files of a test: `ca.pem` (server and good clients), `server.crt/key`, `alice` (good),
/// `bob` (revoked in `ca.crl`), and `mallory` from `other-ca.pem`. Returns alice's DER.
fn pki(dir: &Path) -> Vec<u8> {
    let ca = Ca::new("Tern Test CA", dir, "ca.pem");
    ca.issue(dir, "server", "localhost", 1, true);
    let alice = ca.issue(dir, "alice", "alice", 10, false);
    ca.issue(dir, "bob", "bob", 7, false);
    ca.crl(dir, "ca.crl", &[7]);
    let other = Ca::new("Other CA", dir, "other-ca.pem");
    other.issue(dir, "mallory", "mallory", 10, false);
    alice
}

/// The bind keys choosing each engine.
const RUSTLS: &str = "";
#[cfg(feature = "openssl-engine")]
const OPENSSL: &str = ", engine = \"openssl\"";

/// A configuration whose single bind has `client_auth = { CLIENT_AUTH }` on the engine `engine`
/// names ([`RUSTLS`] or [`OPENSSL`]) and a term backend, with `client_cert_headers` on.
fn config(dir: &Path, term: &Term, client_auth: &str, engine: &str) -> String {
    let tls = format!(
        "tls = {{ certs = [{{ cert = {}, key = {} }}], client_auth = {{ {client_auth} }}{engine} }}",
        toml_path(&dir.join("server.crt")),
        toml_path(&dir.join("server.key")),
    );
    Config::new()
        .terms(&[term])
        .frontend(&tls)
        .frontend("client_cert_headers = true")
        .toml()
}

/// A rustls client trusting `ca.pem`, presenting `<cert>.crt` if given.
fn client(dir: &Path, cert: Option<&str>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(dir.join("ca.pem")).unwrap())
        .unwrap();
    let builder = rustls::ClientConfig::builder_with_provider(tern_tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match cert {
        Some(name) => {
            let chain =
                vec![CertificateDer::from_pem_file(dir.join(format!("{name}.crt"))).unwrap()];
            let key = PrivateKeyDer::from_pem_file(dir.join(format!("{name}.key"))).unwrap();
            builder.with_client_auth_cert(chain, key).unwrap()
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

/// Sends `GET /?h=1` with a forged `X-SSL-Client-DN` and reads the whole answer; the error
/// text when the handshake or the read fails (a TLS 1.3 client learns of a refused certificate
/// from the alert that answers its first read).
async fn request(addr: SocketAddr, config: Arc<rustls::ClientConfig>) -> Result<String, String> {
    let attempt = async {
        let tcp = tokio::net::TcpStream::connect(addr).await?;
        let name = ServerName::try_from("localhost").unwrap();
        let mut tls = TlsConnector::from(config).connect(name, tcp).await?;
        tls.write_all(
            b"GET /?h=1 HTTP/1.1\r\nHost: localhost\r\nX-SSL-Client-DN: CN=forged\r\n\
              Connection: close\r\n\r\n",
        )
        .await?;
        let mut out = Vec::new();
        tls.read_to_end(&mut out).await?;
        std::io::Result::Ok(String::from_utf8_lossy(&out).into_owned())
    };
    match tokio::time::timeout(TLS_WAIT, attempt).await {
        Err(_) => panic!("request to {addr} timed out"),
        Ok(result) => result.map_err(|e| e.to_string()),
    }
}

fn sha256_hex(der: &[u8]) -> String {
    tern_tls::ClientCertInfo::from_der(der).sha256
}

#[tokio::test]
async fn required_passes_a_good_certificate_and_refuses_the_others() {
    required(RUSTLS).await;
}

#[cfg(feature = "openssl-engine")]
#[tokio::test]
async fn openssl_engine_required_passes_a_good_certificate_and_refuses_the_others() {
    required(OPENSSL).await;
}

async fn required(engine: &str) {
    let dir = temp_dir("mtls-required");
    let alice = pki(&dir);
    let term = Term::start("s1");
    let auth = format!(
        "verify = \"required\", ca = {}, crl = [{}]",
        toml_path(&dir.join("ca.pem")),
        toml_path(&dir.join("ca.crl"))
    );
    let tern = Tern::run_in(dir.clone(), &config(&dir, &term, &auth, engine));

    let head = request(tern.addr(), client(&dir, Some("alice")))
        .await
        .unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("x-ssl-client-verify: success"), "{head}");
    assert!(
        lower.contains("x-ssl-client-dn: cn=alice,o=tern test"),
        "{head}"
    );
    let fingerprint = format!("x-ssl-client-sha256: {}", sha256_hex(&alice));
    assert!(lower.contains(&fingerprint), "{head}");
    assert!(
        !lower.contains("forged"),
        "a client-sent copy reached the server: {head}"
    );

    let refusals = [
        (None, "CertificateRequired"),
        (Some("mallory"), "UnknownCA"),
        (Some("bob"), "CertificateRevoked"),
    ];
    for (cert, alert) in refusals {
        let e = request(tern.addr(), client(&dir, cert)).await.unwrap_err();
        assert!(e.contains(alert), "{cert:?}: {e}");
    }

    let c = tern.stop_clean();
    let tls = |k: &str| c.get("tls web", k);
    assert_eq!(tls("fail_client_no_cert"), 1);
    assert_eq!(tls("fail_client_unknown_ca"), 1);
    assert_eq!(tls("fail_client_revoked"), 1);
    assert_eq!(tls("fail_client_expired"), 0);
    assert_eq!(c.get("frontend web", "tls_failures"), 3);
}

#[tokio::test]
async fn optional_lets_a_client_without_certificate_through() {
    optional(RUSTLS).await;
}

#[cfg(feature = "openssl-engine")]
#[tokio::test]
async fn openssl_engine_optional_lets_a_client_without_certificate_through() {
    optional(OPENSSL).await;
}

async fn optional(engine: &str) {
    let dir = temp_dir("mtls-optional");
    pki(&dir);
    let term = Term::start("s1");
    let auth = format!(
        "verify = \"optional\", ca = {}",
        toml_path(&dir.join("ca.pem"))
    );
    let tern = Tern::run_in(dir.clone(), &config(&dir, &term, &auth, engine));

    let head = request(tern.addr(), client(&dir, None)).await.unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("x-ssl-client-verify: none"), "{head}");
    assert!(!lower.contains("x-ssl-client-dn"), "{head}");

    let head = request(tern.addr(), client(&dir, Some("alice")))
        .await
        .unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("x-ssl-client-verify: success"),
        "{head}"
    );
    // A certificate that is presented must still verify.
    let e = request(tern.addr(), client(&dir, Some("mallory")))
        .await
        .unwrap_err();
    assert!(e.contains("UnknownCA"), "{e}");
    let c = tern.stop_clean();
    assert_eq!(c.get("tls web", "fail_client_unknown_ca"), 1);
}

#[tokio::test]
async fn openssl_s_client_with_and_without_a_certificate() {
    s_client_with_and_without_a_certificate(RUSTLS);
}

#[cfg(feature = "openssl-engine")]
#[tokio::test]
async fn openssl_engine_openssl_s_client_with_and_without_a_certificate() {
    s_client_with_and_without_a_certificate(OPENSSL);
}

fn s_client_with_and_without_a_certificate(engine: &str) {
    if !have("openssl") {
        eprintln!("openssl not installed: skipped");
        return;
    }
    let dir = temp_dir("mtls-openssl");
    pki(&dir);
    let term = Term::start("s1");
    let auth = format!("ca = {}", toml_path(&dir.join("ca.pem")));
    let tern = Tern::run_in(dir.clone(), &config(&dir, &term, &auth, engine));
    let request = b"GET /?h=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let (crt, key) = (dir.join("alice.crt"), dir.join("alice.key"));
    let args = [
        "-cert",
        crt.to_str().unwrap(),
        "-key",
        key.to_str().unwrap(),
    ];
    let good = s_client(tern.addr(), Some("localhost"), &args, Some(request));
    assert!(good.out.contains("HTTP/1.1 200"), "{}", good.out);
    assert!(
        good.out
            .to_ascii_lowercase()
            .contains("x-ssl-client-dn: cn=alice,o=tern test"),
        "{}",
        good.out
    );
    let refused = s_client(tern.addr(), Some("localhost"), &[], Some(request));
    assert!(!refused.out.contains("HTTP/1.1 200"), "{}", refused.out);
    assert!(refused.out.contains("alert"), "{}", refused.out);
    let c = tern.stop_clean();
    assert_eq!(c.get("tls web", "fail_client_no_cert"), 1);
}
