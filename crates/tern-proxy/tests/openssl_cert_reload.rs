//! A certificate swap within a generation (`ProxyHandle::reload_certificates`) on an OpenSSL
//! bind (`engine = "openssl"`), with the proxy in-process: the `tern` binary reloads by
//! starting a new generation instead (crates/tern/tests/tls_openssl.rs), so only an embedding
//! reaches this entry point. New handshakes get the new certificate; a connection established
//! before keeps its own and is still served; a broken file keeps the certificate in use.

#![cfg(feature = "openssl-engine")]
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use openssl::ssl::{SslConnector, SslMethod, SslStream, SslVerifyMode};
use tern_proxy::{ProxyHandle, Snapshot};
use tern_tls::KeyKind;

const WAIT: Duration = Duration::from_secs(5);

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-ossl-reload-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a self-signed ECDSA certificate for `name` and its key to `path` (one PEM file).
fn write_pem(path: &Path, name: &str) {
    let cert = tern_tls::self_signed(&[name.to_owned()], KeyKind::EcdsaP256).unwrap();
    std::fs::write(path, format!("{}{}", cert.cert_pem, cert.key_pem)).unwrap();
}

/// One worker, one OpenSSL bind serving `pem`, answering `/test` itself.
fn proxy(pem: &Path, offload: bool) -> ProxyHandle {
    let toml = format!(
        "[global]\nworkers = 1\nhandshake_offload = {offload}\n\n[[frontend]]\nname = \"web\"\n\
         bind = [ {{ address = \"127.0.0.1:0\", tls = {{ certs = [{pem:?}], engine = \"openssl\" }} }} ]\n\
         monitor_uri = \"/test\"\ndefault_backend = \"app\"\n\n[[backend]]\nname = \"app\"\n\
         servers = [ {{ name = \"s1\", address = \"127.0.0.1:1\" }} ]\n"
    );
    let config = tern_config::parse(&toml, Path::new("test.toml")).unwrap();
    tern_proxy::start(Snapshot {
        tls: tern_proxy::frontend_tls(&config).unwrap(),
        openssl: tern_proxy::openssl_binds(&config).unwrap(),
        servers_tls: Vec::new(),
        config,
        access_log: None,
    })
    .unwrap()
}

/// A TLS connection to `addr` (any certificate accepted: the test reads which one it got).
fn connect(addr: SocketAddr) -> SslStream<TcpStream> {
    let mut builder = SslConnector::builder(SslMethod::tls()).unwrap();
    builder.set_verify(SslVerifyMode::NONE);
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let config = builder.build().configure().unwrap().verify_hostname(false);
    config.connect("site.test", tcp).unwrap()
}

/// The DNS name of the certificate the connection got.
fn served_name(s: &SslStream<TcpStream>) -> String {
    let cert = s.ssl().peer_certificate().unwrap();
    let names = cert.subject_alt_names().unwrap();
    names
        .iter()
        .find_map(|n| n.dnsname().map(str::to_owned))
        .unwrap()
}

/// Sends `GET /test` and reads the response head.
fn get(s: &mut SslStream<TcpStream>) -> String {
    s.write_all(b"GET /test HTTP/1.1\r\nHost: site.test\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn a_swap_serves_new_handshakes_and_keeps_established_connections() {
    swap(false);
}

/// The same with the handshakes on the worker's offload thread, which holds the listener.
#[test]
fn a_swap_serves_new_handshakes_offloaded() {
    swap(true);
}

fn swap(offload: bool) {
    let dir = temp_dir(if offload { "offload" } else { "inline" });
    let pem = dir.join("site.pem");
    write_pem(&pem, "old.test");
    let p = proxy(&pem, offload);
    let addr = p.binds()[0].address;
    let mut before = connect(addr);
    assert_eq!(served_name(&before), "old.test");
    assert!(get(&mut before).starts_with("HTTP/1.1 200"));

    write_pem(&pem, "new.test");
    let summary = p.reload_certificates().unwrap();
    assert_eq!((summary.binds, summary.certificates), (1, 1));
    // The accept loop looks at the swap before the next accept (`listen/accept.rs`, biased).
    let mut after = connect(addr);
    assert_eq!(served_name(&after), "new.test");
    assert!(get(&mut after).starts_with("HTTP/1.1 200"));
    // The connection established before keeps its certificate and is still served.
    assert_eq!(served_name(&before), "old.test");
    assert!(get(&mut before).starts_with("HTTP/1.1 200"));

    std::fs::write(&pem, "not a certificate\n").unwrap();
    let error = p.reload_certificates().unwrap_err().to_string();
    assert!(error.contains("no certificate found"), "{error}");
    assert_eq!(served_name(&connect(addr)), "new.test");
    let names = &p.tls_info()[0].certificates[0].loaded.sni_names;
    assert_eq!(names, &["new.test"]);

    drop((before, after));
    let stats = p.stats().clone();
    p.shutdown();
    p.join();
    let reloads = stats.snapshot().reloads;
    assert_eq!((reloads.reloads, reloads.failed), (1, 1));
    let _ = std::fs::remove_dir_all(&dir);
}
