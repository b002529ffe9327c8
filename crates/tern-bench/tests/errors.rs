//! Error accounting against `tern term`: every failure is counted once, by kind or status
//! class, and never enters the latency histograms.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use tern_bench::stats::ErrorKind;
use tern_bench::Report;
use tern_tls::KeyKind;

fn latency_samples(r: &Report) -> u64 {
    r.stats.total.len()
}

#[test]
fn error_statuses_are_counted_by_class_not_as_latency() {
    let (term, addr) = term(1);
    let r = bench(&format!("http://{addr}/?r=503"), &["-c", "2"]);
    let s = &r.stats;
    assert!(s.requests > 10);
    assert_eq!(s.status[4], s.requests, "all 5xx");
    assert_eq!(r.error_count(), s.requests);
    assert_eq!((s.ok, latency_samples(&r), s.ttfb.len()), (0, 0, 0));
    assert_eq!(
        s.series.errors[6].iter().sum::<u64>(),
        s.series.requests.iter().sum::<u64>()
    );
    assert!(!r.validity.valid, "nothing succeeded: {:?}", r.validity);
    assert!(term.stats().requests >= s.requests);

    let r = bench(&format!("http://{addr}/?r=404"), &["-c", "1", "-d", "0.2"]);
    assert_eq!(r.stats.status[3], r.stats.requests);
    assert_eq!(r.to_json_value()["status"]["4xx"], r.stats.requests);
}

#[test]
fn truncated_responses_are_protocol_errors() {
    let (_term, addr) = term(1);
    // Content-Length 5000 announced, 100 bytes sent, then the connection closes.
    let r = bench(&format!("http://{addr}/?s=5000&x=100"), &["-c", "2"]);
    let s = &r.stats;
    assert_eq!(s.requests, 0);
    assert!(s.errors_of(ErrorKind::Protocol) > 10, "{:?}", s.errors);
    assert_eq!(latency_samples(&r), 0);
    // Each failed exchange cost a connection: the bytes that came are still counted.
    assert!(s.bytes >= 100 * s.errors_of(ErrorKind::Protocol));
}

#[test]
fn slow_responses_over_the_timeout_are_timeouts() {
    let (_term, addr) = term(1);
    let r = bench(
        &format!("http://{addr}/?t=400"),
        &["-c", "2", "--timeout", "0.1"],
    );
    let s = &r.stats;
    assert_eq!(s.requests, 0);
    assert!(s.errors_of(ErrorKind::Timeout) >= 6, "{:?}", s.errors);
    assert_eq!(latency_samples(&r), 0);
    // Within the timeout they are ordinary, slow samples.
    let r = bench(
        &format!("http://{addr}/?t=50"),
        &["-c", "2", "--timeout", "1"],
    );
    assert!(r.stats.total.min() >= 50_000 && r.error_count() == 0);
}

#[test]
fn refused_connections_and_tls_failures_are_counted() {
    let r = bench(
        &format!("http://{}/", closed_port()),
        &["-c", "1", "-d", "0.2"],
    );
    assert_eq!(r.stats.requests, 0);
    assert!(r.stats.errors_of(ErrorKind::Connect) > 0);
    assert_eq!(r.stats.connect.len(), 0);

    // https to a plain-HTTP server: the handshake fails.
    let (_plain, addr) = term(1);
    let r = bench(&format!("https://{addr}/"), &["-c", "1", "-d", "0.2"]);
    assert_eq!(r.stats.requests, 0);
    assert!(
        r.stats.errors_of(ErrorKind::Tls) > 0,
        "{:?}",
        r.stats.errors
    );
    assert_eq!(r.stats.full_handshakes, 0);

    // http to a TLS server: the server answers no HTTP; the client sees a closed connection.
    let (tls, addr) = tls_term(KeyKind::EcdsaP256, Resumption::Tickets);
    let r = bench(&format!("http://{addr}/"), &["-c", "1", "-d", "0.2"]);
    assert_eq!(r.stats.requests, 0);
    assert!(r.error_count() > 0);
    assert!(tls.stats().tls_failures > 0);
}
