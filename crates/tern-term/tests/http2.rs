//! HTTP/2, checked with clients no one here wrote: curl (`--http2-prior-knowledge` on plain,
//! `--http2` with ALPN over TLS) and h2load. Both protocols share one port.
#![allow(clippy::unwrap_used)]

mod support;

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::sync::Arc;

use rustls::crypto::aws_lc_rs;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use support::*;
use tern_term::{fill_byte, TermHandle, TermOptions};

/// Runs a client to its end; each is bounded by its own `--max-time`/`-T` option.
fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

/// `curl` with `args`, its body and its `-w` line (`HTTP_VERSION STATUS`) apart.
fn curl(args: &[&str]) -> (Vec<u8>, String, Option<i32>) {
    let mut all = vec![
        "-s",
        "--max-time",
        "10",
        "-w",
        "\n%{http_version} %{http_code}",
    ];
    all.extend_from_slice(args);
    let out = run("curl", &all);
    let at = out.stdout.iter().rposition(|&b| b == b'\n').unwrap();
    let line = String::from_utf8_lossy(&out.stdout[at + 1..]).into_owned();
    (out.stdout[..at].to_vec(), line, out.status.code())
}

/// A term with a fresh self-signed certificate, offering ALPN `h2` then `http/1.1`.
fn start_tls() -> (TermHandle, SocketAddr) {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
    let mut server =
        rustls::ServerConfig::builder_with_provider(Arc::new(aws_lc_rs::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![ck.cert.der().clone()], key)
            .unwrap();
    server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let term = tern_term::start(TermOptions {
        tls: Some(Arc::new(server)),
        ..options(1)
    })
    .unwrap();
    let addr = term.local_addrs()[0];
    (term, addr)
}

fn is_fill(body: &[u8]) -> bool {
    body.iter()
        .enumerate()
        .all(|(i, &b)| b == fill_byte(i as u64))
}

#[test]
fn plain_port_serves_h2c_with_prior_knowledge_and_http1() {
    let (term, addr) = start(1);
    let url = format!("http://{addr}/?s=70k");
    let (body, line, code) = curl(&["--http2-prior-knowledge", &url]);
    assert_eq!((line.as_str(), code), ("2 200", Some(0)));
    assert_eq!(body.len(), 70 * 1024);
    assert!(is_fill(&body));
    let (body, line, _) = curl(&["--http1.1", &url]);
    assert_eq!(line, "1.1 200");
    assert_eq!(body.len(), 70 * 1024);
    assert_eq!(term.stats().http2, 1);
    assert_eq!(term.stats().requests, 2);
}

#[test]
fn tls_port_serves_h2_by_alpn_and_http1_to_those_who_ask() {
    let (term, addr) = start_tls();
    let url = format!("https://localhost:{}/?s=1k", addr.port());
    let resolve = format!("localhost:{}:127.0.0.1", addr.port());
    let (body, line, _) = curl(&["-k", "--http2", "--resolve", &resolve, &url]);
    assert_eq!(line, "2 200");
    assert_eq!(body.len(), 1024);
    let (_, line, _) = curl(&["-k", "--http1.1", "--resolve", &resolve, &url]);
    assert_eq!(line, "1.1 200");
    let stats = term.stats();
    assert_eq!((stats.http2, stats.tls_full), (1, 2));
}

#[test]
fn query_parameters_mean_the_same_on_http2() {
    let (_term, addr) = start(1);
    let base = format!("http://{addr}");
    let h2 = "--http2-prior-knowledge";
    let (_, line, _) = curl(&[h2, &format!("{base}/?r=503")]);
    assert_eq!(line, "2 503");
    let (body, _, _) = curl(&[h2, "-H", "x-test: yes", &format!("{base}/p?h=1")]);
    let dump = String::from_utf8(body).unwrap();
    assert!(
        dump.starts_with(&format!("GET http://{addr}/p?h=1 HTTP/2.0\n")),
        "{dump}"
    );
    assert!(dump.contains("x-test: yes\n"), "{dump}");
    let (body, line, _) = curl(&[h2, "--data-binary", "hello h2", &format!("{base}/?e=1")]);
    assert_eq!(
        (body.as_slice(), line.as_str()),
        (&b"hello h2"[..], "2 200")
    );
    let (body, _, _) = curl(&[
        h2,
        "-D",
        "-",
        "-o",
        "/dev/null",
        &format!("{base}/?sc=a=1&k=0"),
    ]);
    let head = String::from_utf8(body).unwrap().to_ascii_lowercase();
    assert!(head.contains("set-cookie: a=1; path=/"), "{head}");
    assert!(!head.contains("connection:"), "{head}");
    // `x=N` resets the stream at once: curl reports an HTTP/2 stream error (92), not a
    // complete body nor its own timeout (28).
    let (_, _, code) = curl(&[h2, &format!("{base}/?s=64k&x=100")]);
    assert_eq!(code, Some(92));
    let (_, line, _) = curl(&[h2, &format!("{base}/")]);
    assert_eq!(line, "2 200");
}

/// `h2load`'s summary line: `requests: N total, N started, N done, N succeeded, N failed, …`.
fn succeeded(out: &Output) -> (u64, u64) {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("requests:"))
        .unwrap_or_else(|| panic!("no summary: {text}"));
    let count = |word: &str| -> u64 {
        let at = line.find(word).unwrap();
        line[..at]
            .split_whitespace()
            .last()
            .unwrap()
            .parse()
            .unwrap()
    };
    (count(" succeeded"), count(" failed"))
}

#[test]
fn h2load_finds_every_stream_answered() {
    let (term, addr) = start(2);
    let out = run(
        "h2load",
        &[
            "-n",
            "400",
            "-c",
            "4",
            "-m",
            "16",
            "-T",
            "10",
            &format!("http://{addr}/?s=1k"),
        ],
    );
    assert_eq!(succeeded(&out), (400, 0), "{out:?}");
    let (tls_term, tls_addr) = start_tls();
    let out = run(
        "h2load",
        &[
            "-n",
            "200",
            "-c",
            "2",
            "-m",
            "8",
            "-T",
            "10",
            &format!("https://127.0.0.1:{}/?s=1k", tls_addr.port()),
        ],
    );
    assert_eq!(succeeded(&out), (200, 0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Application protocol: h2"));
    assert_eq!(term.stats().http2, 4);
    assert_eq!(tls_term.stats().http2, 2);
}
