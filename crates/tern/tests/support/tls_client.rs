//! TLS clients for the frontend TLS feature tests (`tls_policy.rs`, `tls_certs.rs`,
//! `tls_resumption.rs`): a rustls client that reports what it negotiated (and the OCSP response
//! it was handed), `openssl s_client` runs bounded in time, `tern check` on a configuration
//! text, and certificate and OCSP files.
//!
//! Not re-exported from `support`: only those tests `use support::tls_client::*`, so these names
//! cannot collide with the helpers other test files define for themselves.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, HandshakeKind, NamedGroup, ProtocolVersion, SignatureScheme};
use tern_tls::{ClientOptions, KeyKind, Verify};
use tokio_rustls::TlsConnector;

use super::{get_req, send, temp_dir, tern_finish, Body, Finished, Got};

/// Bound on every network step; generous, only there so a broken tern fails instead of hanging.
pub const TLS_WAIT: Duration = Duration::from_secs(10);

/// What the client saw of one handshake.
#[derive(Debug)]
pub struct Negotiated {
    pub version: Option<ProtocolVersion>,
    pub group: Option<NamedGroup>,
    pub kind: Option<HandshakeKind>,
    /// The leaf certificate the server sent (on a resumed handshake: the one of the session).
    pub leaf: Option<CertificateDer<'static>>,
}

/// A rustls client with tern's provider, these versions (none: 1.2 and 1.3), resumption on or
/// off, and any certificate accepted (handshake signatures still checked).
pub fn rustls_client(
    versions: &[&'static rustls::SupportedProtocolVersion],
    resumption: bool,
) -> Arc<rustls::ClientConfig> {
    tern_tls::client_config(&ClientOptions {
        verify: Verify::Insecure,
        resumption,
        versions: Some(versions.to_vec()),
        ..ClientOptions::default()
    })
}

/// Connects over TLS with `config`, sending `sni` (an IP address sends no SNI); the handshake
/// error when it fails.
pub async fn try_tls_connect(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    sni: &str,
) -> std::io::Result<(SendRequest<Body>, Negotiated)> {
    let name = ServerName::try_from(sni.to_owned()).unwrap();
    let stream = tokio::time::timeout(TLS_WAIT, async {
        let tcp = tokio::net::TcpStream::connect(addr).await?;
        TlsConnector::from(config).connect(name, tcp).await
    })
    .await
    .expect("TLS handshake timed out")?;
    let (_, conn) = stream.get_ref();
    let negotiated = Negotiated {
        version: conn.protocol_version(),
        group: conn.negotiated_key_exchange_group().map(|g| g.name()),
        kind: conn.handshake_kind(),
        leaf: conn
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|c| c.clone().into_owned()),
    };
    let (sender, http) = http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(async move {
        let _ = http.await;
    });
    Ok((sender, negotiated))
}

/// [`try_tls_connect`], panicking when the handshake fails.
pub async fn tls_connect(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    sni: &str,
) -> (SendRequest<Body>, Negotiated) {
    try_tls_connect(addr, config, sni)
        .await
        .unwrap_or_else(|e| panic!("TLS handshake with {addr} (SNI {sni:?}) failed: {e}"))
}

/// One GET on `conn`, bounded.
pub async fn bounded_get(conn: &mut SendRequest<Body>, path: &str) -> Got {
    tokio::time::timeout(TLS_WAIT, send(conn, get_req(path)))
        .await
        .expect("request timed out")
}

/// A handshake and one request to the monitor URI (which makes a TLS 1.3 client read the
/// session ticket sent with the response); what was negotiated.
pub async fn handshake_and_get(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    sni: &str,
) -> Negotiated {
    let (mut conn, n) = tls_connect(addr, config, sni).await;
    assert_eq!(bounded_get(&mut conn, "/test").await.status, 200, "{n:?}");
    n
}

/// A verifier accepting any certificate (signatures checked) that records the OCSP response
/// stapled by the server.
#[derive(Debug)]
pub struct OcspRecorder {
    pub stapled: Mutex<Option<Vec<u8>>>,
    inner: Arc<dyn ServerCertVerifier>,
}

/// A client (no resumption) whose verifier records the stapled OCSP response.
pub fn ocsp_client() -> (Arc<rustls::ClientConfig>, Arc<OcspRecorder>) {
    let provider = tern_tls::provider();
    let recorder = Arc::new(OcspRecorder {
        stapled: Mutex::new(None),
        inner: tern_tls::insecure_verifier(provider.clone()),
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(recorder.clone())
        .with_no_client_auth();
    config.resumption = rustls::client::Resumption::disabled();
    (Arc::new(config), recorder)
}

impl ServerCertVerifier for OcspRecorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.stapled.lock().unwrap() = Some(ocsp_response.to_vec());
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// What one `openssl s_client` run printed.
#[derive(Debug)]
pub struct SClient {
    /// Exit status 0.
    pub ok: bool,
    /// stdout and stderr together.
    pub out: String,
}

impl SClient {
    /// Whether the handshake succeeded and was a resumption (`Reused, TLSv1.x, ...`).
    pub fn reused(&self) -> bool {
        self.out.contains("\nReused, TLSv1.")
    }

    /// Whether the handshake succeeded as a full one (`New, TLSv1.x, ...`).
    pub fn new_session(&self) -> bool {
        self.out.contains("\nNew, TLSv1.")
    }
}

/// Runs `openssl s_client -connect ADDR [-servername SNI] ARGS`, bounded. With `request`, those
/// bytes are its stdin and `-ign_eof` makes it wait for the server to close (send a request
/// with `Connection: close`); without, stdin is closed and it quits after the handshake.
pub fn s_client(
    addr: SocketAddr,
    sni: Option<&str>,
    args: &[&str],
    request: Option<&[u8]>,
) -> SClient {
    let dir = temp_dir("openssl");
    let out_path = dir.join("out");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut cmd = Command::new("openssl");
    cmd.args(["s_client", "-connect", &addr.to_string()]);
    if let Some(sni) = sni {
        cmd.args(["-servername", sni]);
    } else {
        cmd.arg("-noservername");
    }
    cmd.args(args);
    match request {
        Some(bytes) => {
            let input = dir.join("in");
            std::fs::write(&input, bytes).unwrap();
            cmd.arg("-ign_eof")
                .stdin(std::fs::File::open(input).unwrap());
        }
        None => {
            cmd.stdin(Stdio::null());
        }
    }
    let mut child = cmd
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + TLS_WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("openssl s_client {args:?} did not finish");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    SClient {
        ok: status.success(),
        out: std::fs::read_to_string(&out_path).unwrap_or_default(),
    }
}

/// A GET of the monitor URI that asks tern to close the connection after the response.
pub const CLOSE_REQUEST: &[u8] =
    b"GET /test HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// Writes a self-signed certificate for `names` as `<file>.pem` (chain then key), `<file>.crt`
/// and `<file>.key` in `dir`; returns the leaf's DER.
pub fn write_named_cert(
    dir: &Path,
    file: &str,
    names: &[&str],
    kind: KeyKind,
) -> CertificateDer<'static> {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let cert = tern_tls::self_signed(&names, kind).unwrap();
    std::fs::write(dir.join(format!("{file}.crt")), &cert.cert_pem).unwrap();
    std::fs::write(dir.join(format!("{file}.key")), &cert.key_pem).unwrap();
    std::fs::write(
        dir.join(format!("{file}.pem")),
        format!("{}{}", cert.cert_pem, cert.key_pem),
    )
    .unwrap();
    leaf_of(&dir.join(format!("{file}.crt")))
}

/// The DER of the (first) certificate in a PEM file.
pub fn leaf_of(pem: &Path) -> CertificateDer<'static> {
    CertificateDer::from_pem_file(pem).unwrap()
}

/// A path as a TOML string (quoted, escaped).
pub fn toml_path(path: &Path) -> String {
    format!("{:?}", path.to_str().unwrap())
}

/// Runs an `openssl` command to completion; panics with its output if it fails.
fn openssl(args: &[&str]) -> String {
    let out = Command::new("openssl")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Makes a DER OCSP response saying "good" for the self-signed certificate `crt` (key `key`),
/// signed by that certificate itself as its own issuer, with `openssl ocsp` and a one-line CA
/// index; writes it to `out`.
pub fn write_ocsp_response(crt: &Path, key: &Path, out: &Path) {
    let dir = temp_dir("ocsp");
    let serial = openssl(&["x509", "-in", crt.to_str().unwrap(), "-noout", "-serial"]);
    let serial = serial.trim().trim_start_matches("serial=");
    let index = dir.join("index.txt");
    std::fs::write(
        &index,
        format!("V\t351231235959Z\t\t{serial}\tunknown\t/CN=test\n"),
    )
    .unwrap();
    let request = dir.join("req.der");
    let crt = crt.to_str().unwrap();
    openssl(&[
        "ocsp",
        "-issuer",
        crt,
        "-cert",
        crt,
        "-no_nonce",
        "-reqout",
        request.to_str().unwrap(),
    ]);
    openssl(&[
        "ocsp",
        "-index",
        index.to_str().unwrap(),
        "-rsigner",
        crt,
        "-rkey",
        key.to_str().unwrap(),
        "-CA",
        crt,
        "-reqin",
        request.to_str().unwrap(),
        "-respout",
        out.to_str().unwrap(),
        "-ndays",
        "1",
    ]);
}

/// Writes `toml` as `tern.toml` into `dir` and runs `tern check` on it (bounded).
pub fn check_config(dir: &Path, toml: &str) -> (PathBuf, Finished) {
    let path = dir.join("tern.toml");
    std::fs::write(&path, toml).unwrap();
    let finished = tern_finish(
        &["check", "-c", path.to_str().unwrap()],
        Duration::from_secs(60),
    );
    (path, finished)
}
