//! `--h2` end to end against `tern term` served in-process: h2c and TLS (ALPN h2), streams per
//! connection, the request budget per connection, stream resets, timeouts and refused options.
//! Runs are half a second or less, bounded by `-d`.

#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use support::*;
use tern_bench::stats::ErrorKind;
use tern_tls::KeyKind;

#[test]
fn h2c_keeps_streams_in_flight_on_few_connections() {
    let (term, addr) = term(1);
    let report = bench(
        &format!("http://{addr}/?s=1k"),
        &["--h2", "-c", "2", "-m", "8"],
    );
    let s = &report.stats;
    assert!(s.requests > 50, "{}", s.requests);
    assert_eq!(s.ok, s.requests);
    assert_eq!(report.error_count(), 0);
    assert_eq!(
        s.connections, 2,
        "one connection per -c, reused for every stream"
    );
    assert_eq!(s.bytes, s.requests * 1024, "DATA bytes are the body bytes");
    assert!(s.tls.is_none());
    let served = term.stats();
    assert_eq!(served.http2, 2, "the server saw HTTP/2 connections");
    assert!(served.requests >= s.requests);
    assert_eq!(report.settings.protocol(), "HTTP/2");
    assert_eq!(report.settings.streams, Some(8));
    assert!(report
        .to_string()
        .contains("closed loop, 2 connections × 8 HTTP/2 streams"));
}

#[test]
fn tls_negotiates_h2_by_alpn() {
    let (term, addr) = tls_term(KeyKind::EcdsaP256, Resumption::Tickets);
    let url = format!("https://localhost:{}/?s=100", addr.port());
    let report = bench(&url, &["--h2", "-c", "2", "-m", "4"]);
    let s = &report.stats;
    assert!(s.requests > 20, "{}", s.requests);
    assert_eq!(report.error_count(), 0);
    assert_eq!(s.tls.as_ref().unwrap().alpn.as_deref(), Some("h2"));
    assert_eq!((s.connections, s.full_handshakes), (2, 2));
    assert_eq!(report.settings.alpn, vec!["h2".to_owned()]);
    assert_eq!(term.stats().http2, 2);
}

#[test]
fn requests_per_conn_is_a_budget_over_all_streams() {
    let (_term, addr) = term(1);
    let report = bench(
        &format!("http://{addr}/"),
        &["--h2", "-c", "1", "-m", "4", "--requests-per-conn", "10"],
    );
    let s = &report.stats;
    assert_eq!(report.error_count(), 0);
    assert!(s.connections >= 3, "{}", s.connections);
    // Every connection but the ones cut by the window's edges carried exactly ten requests.
    let per_conn = s.requests as f64 / s.connections as f64;
    assert!((8.0..=12.0).contains(&per_conn), "{per_conn}");
}

#[test]
fn a_reset_stream_is_a_protocol_error_and_the_connection_carries_on() {
    let (_term, addr) = term(1);
    // tern term resets an `x=N` stream after N bytes.
    let report = bench(
        &format!("http://{addr}/?s=64k&x=10"),
        &["--h2", "-c", "1", "-m", "2", "-d", "0.3"],
    );
    let s = &report.stats;
    assert_eq!(s.ok, 0);
    assert!(s.errors_of(ErrorKind::Protocol) > 10, "{:?}", s.errors);
    assert_eq!(s.connections, 1, "resets end streams, not the connection");
}

#[test]
fn a_slow_stream_times_out_and_is_cancelled() {
    let (_term, addr) = term(1);
    let report = bench(
        &format!("http://{addr}/?t=2000"),
        &[
            "--h2",
            "-c",
            "1",
            "-m",
            "3",
            "-d",
            "0.8",
            "--timeout",
            "0.2",
        ],
    );
    let s = &report.stats;
    assert_eq!(s.requests, 0);
    assert!(s.errors_of(ErrorKind::Timeout) >= 6, "{:?}", s.errors);
    assert_eq!(
        s.connections, 1,
        "a timeout cancels the stream, not the connection"
    );
}

#[test]
fn a_server_without_h2_fails_the_handshake() {
    let cert = tern_tls::self_signed(&["localhost".to_owned()], KeyKind::EcdsaP256).unwrap();
    let mut config =
        (*tern_tls::server_config_from_keys(vec![cert.certified_key]).unwrap()).clone();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let term = tern_term::start(tern_term::TermOptions {
        tls: Some(Arc::new(config)),
        ..tern_term::TermOptions::new("127.0.0.1:0".parse().unwrap())
    })
    .unwrap();
    let url = format!("https://localhost:{}/", term.local_addrs()[0].port());
    let report = bench(&url, &["--h2", "-c", "1", "-d", "0.2"]);
    assert_eq!(report.stats.requests, 0);
    assert!(
        report.stats.errors_of(ErrorKind::Tls) > 0,
        "{:?}",
        report.stats.errors
    );
}

#[test]
fn options_that_cannot_work_with_h2_are_refused() {
    let refused = |extra: &[&str]| {
        let mut all = vec!["--h2"];
        all.extend_from_slice(extra);
        let url = if extra.contains(&"--alpn") {
            "https://127.0.0.1:1/"
        } else {
            "http://127.0.0.1:1/"
        };
        tern_bench::execute(&args(url, &all))
            .unwrap_err()
            .to_string()
    };
    assert!(refused(&["--rate", "100"]).contains("no open loop"));
    assert!(refused(&["--alpn", "http/1.1"]).contains("needs h2"));
    let streams_alone = tern_bench::BenchArgs::from_args(["http://127.0.0.1:1/", "-m", "4"]);
    assert!(streams_alone.is_err(), "-m without --h2");
}
