//! End-to-end runs of the generator against small servers on 127.0.0.1:0: hyper over plain TCP
//! and over rustls, and a raw server for chunked and close-delimited framing, timeouts and
//! refused connections. Runs are short (well under a second) and bounded by `-d`.

#![allow(clippy::unwrap_used)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tern_bench::stats::ErrorKind;
use tern_bench::{BenchArgs, Report};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: BenchArgs,
}

fn bench(url: &str, extra: &[&str]) -> Report {
    let mut argv = vec!["bench", url];
    argv.extend_from_slice(extra);
    for (flag, default) in [("-d", "0.4"), ("--warmup", "0"), ("--timeout", "1")] {
        if !extra.contains(&flag) {
            argv.extend([flag, default]);
        }
    }
    let cli = Cli::try_parse_from(argv).unwrap();
    let report = tern_bench::execute(&cli.args).unwrap();
    println!("{report}");
    report
}

/// Runs an accept loop on its own thread and runtime; returns the bound address.
fn serve<F, Fut>(handle: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                tokio::spawn(handle(stream));
            }
        });
    });
    rx.recv().unwrap()
}

async fn hello(
    _req: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    Ok(hyper::Response::new(Full::new(Bytes::from_static(
        b"hello",
    ))))
}

fn hyper_plain() -> SocketAddr {
    serve(|stream| async move {
        let io = TokioIo::new(stream);
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(io, service_fn(hello))
            .await;
    })
}

/// hyper behind rustls with a self-signed ECDSA certificate; the server offers resumption
/// (stateful TLS 1.3 tickets and TLS 1.2 session IDs), which the client must not use.
fn hyper_tls() -> SocketAddr {
    let key = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert = key.cert.der().clone();
    let private = rustls::pki_types::PrivatePkcs8KeyDer::from(key.signing_key.serialize_der());
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], private.into())
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    serve(move |stream| {
        let acceptor = acceptor.clone();
        async move {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service_fn(hello))
                .await;
        }
    })
}

/// Answers `/chunked` with a chunked keep-alive response, `/close` with a close-delimited one,
/// and `/silent` never.
fn raw_server() -> SocketAddr {
    serve(|mut stream| async move {
        let mut buf = Vec::new();
        loop {
            let mut chunk = [0u8; 1024];
            let Ok(n) = stream.read(&mut chunk).await else {
                return;
            };
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
            let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            if head.starts_with("GET /silent") {
                continue;
            }
            if head.starts_with("GET /close") {
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\n\r\nuntil close")
                    .await;
                return;
            }
            let response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: 1\r\n\r\n";
            if stream.write_all(response).await.is_err() {
                return;
            }
        }
    })
}

fn assert_clean(report: &Report) {
    let s = &report.stats;
    assert!(s.requests > 0, "no requests completed");
    assert_eq!(report.error_count(), 0);
    assert_eq!(s.status[1], s.requests, "all responses 2xx");
    assert_eq!(s.resumed_handshakes, 0);
}

#[test]
fn plain_keep_alive() {
    let addr = hyper_plain();
    let report = bench(&format!("http://{addr}/"), &["-c", "4", "--threads", "2"]);
    assert_clean(&report);
    assert_eq!(
        report.stats.connections, 4,
        "one connection per client, kept alive"
    );
    assert!(report.stats.tls.is_none());
    assert!(report.cpu_us_per().is_some());
}

#[test]
fn plain_requests_per_connection() {
    let addr = hyper_plain();
    let report = bench(
        &format!("http://{addr}/x"),
        &["-c", "2", "--requests-per-conn", "3"],
    );
    assert_clean(&report);
    let s = &report.stats;
    // Connections at the window's edges may carry fewer requests.
    assert!(
        s.connections * 3 >= s.requests && s.connections <= s.requests / 3 + 2,
        "{s:?}"
    );
}

#[test]
fn tls13_full_handshakes_only() {
    let addr = hyper_tls();
    let url = format!("https://{addr}/test");
    let report = bench(
        &url,
        &["-c", "2", "--requests-per-conn", "1", "--sni", "localhost"],
    );
    assert_clean(&report);
    let s = &report.stats;
    assert!(s.full_handshakes > 0);
    // Every connection is one full handshake and one request (edges aside).
    assert!(s.full_handshakes.abs_diff(s.connections) <= 2, "{s:?}");
    assert!(s.requests.abs_diff(s.connections) <= 2, "{s:?}");
    let tls = s.tls.as_ref().unwrap();
    assert_eq!(
        (tls.version.as_str(), tls.group.as_str()),
        ("TLSv1_3", "X25519")
    );
    let json = report.to_json();
    assert!(json.contains("\"resumed\":0"), "{json}");
}

#[test]
fn tls12_and_pinned_suite() {
    let addr = hyper_tls();
    let url = format!("https://{addr}/");
    let extra = [
        "-c",
        "1",
        "--requests-per-conn",
        "1",
        "--tls-version",
        "1.2",
        "--groups",
        "p256",
        "--ciphers",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ];
    let report = bench(&url, &extra);
    assert_clean(&report);
    let tls = report.stats.tls.as_ref().unwrap();
    assert_eq!(tls.version, "TLSv1_2");
    assert_eq!(tls.suite, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
    assert_eq!(tls.group, "secp256r1");
}

#[test]
fn chunked_keep_alive_and_close_delimited() {
    let addr = raw_server();
    let report = bench(&format!("http://{addr}/chunked"), &["-c", "2"]);
    assert_clean(&report);
    assert_eq!(report.stats.connections, 2);

    let report = bench(&format!("http://{addr}/close"), &["-c", "2"]);
    assert_clean(&report);
    let s = &report.stats;
    assert!(
        s.requests.abs_diff(s.connections) <= 2,
        "one response per connection: {s:?}"
    );
}

#[test]
fn timeouts_and_refused_connections_are_errors() {
    let addr = raw_server();
    let report = bench(
        &format!("http://{addr}/silent"),
        &["-c", "2", "--timeout", "0.1"],
    );
    assert_eq!(report.stats.requests, 0);
    assert!(report.stats.errors_of(ErrorKind::Timeout) >= 2);

    // A port that was just free: nothing listens there now.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let report = bench(&format!("http://{closed}/"), &["-c", "1", "-d", "0.1"]);
    assert_eq!(report.stats.requests, 0);
    assert!(report.stats.errors_of(ErrorKind::Connect) > 0);
}

#[test]
fn run_writes_json() {
    let addr = hyper_plain();
    let path = std::env::temp_dir().join(format!("tern-bench-e2e-{}.json", std::process::id()));
    let path_arg = path.to_str().unwrap();
    let url = format!("http://{addr}/");
    let cli = Cli::try_parse_from([
        "bench", &url, "-d", "0.2", "--warmup", "0.1", "--json", path_arg,
    ])
    .unwrap();
    tern_bench::run(cli.args).unwrap();
    let json = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(json.starts_with('{') && json.ends_with("}\n"), "{json}");
    assert!(json.contains("\"errors_total\":0"), "{json}");
}

#[test]
fn cli_definition_is_consistent() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
    assert!(
        Cli::try_parse_from(["bench", "https://x/", "--insecure", "--cacert", "ca.pem"]).is_err()
    );
    assert!(Cli::try_parse_from(["bench", "gopher://x/"]).is_err());
}
