#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn the_request_carries_the_url_as_pseudo_headers() {
    let target = Target::parse("https://example.test:8443/a?s=1k").unwrap();
    let plan = H2Plan::new(&target, 32).unwrap();
    let request = plan.request();
    assert_eq!(request.method(), http::Method::GET);
    assert_eq!(request.uri().scheme_str(), Some("https"));
    assert_eq!(request.uri().authority().unwrap(), "example.test:8443");
    assert_eq!(request.uri().path_and_query().unwrap(), "/a?s=1k");
    assert_eq!(request.headers()[USER_AGENT], "tern-bench");
    assert_eq!(plan.streams, 32);
}

#[test]
fn the_budget_is_shared_and_spent_once() {
    let unlimited = Budget(Cell::new(None));
    assert!((0..1000).all(|_| unlimited.take()));
    let three = Budget(Cell::new(Some(3)));
    let taken = (0..10).filter(|_| three.take()).count();
    assert_eq!(taken, 3);
}

#[test]
fn errors_that_are_no_stream_reset_end_the_connection() {
    // Stream resets (RST_STREAM) cannot be made outside the h2 crate: tests/http2.rs checks
    // them against a server that resets streams.
    let broken = h2::Error::from(h2::Reason::PROTOCOL_ERROR);
    let expected = Failure {
        counted: Some(ErrorKind::Protocol),
        next: Next::Closed,
    };
    assert_eq!(Failure::of(&broken, false), expected);
    assert_eq!(Failure::of(&broken, true), expected);
}
