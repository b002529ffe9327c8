#![allow(clippy::unwrap_used)]

use super::*;
use tern_h1::Status;

fn target(tls: bool) -> Target {
    Target {
        tls,
        addr: "127.0.0.1:8443".parse().unwrap(),
    }
}

fn request(head: &str, tls: bool) -> Result<Request<()>, Untranslatable> {
    let mut parsed = RequestHead::new();
    let status = tern_h1::parse_request(head.as_bytes(), &HEAD_LIMITS, &mut parsed).unwrap();
    assert!(matches!(status, Status::Complete(_)), "{head}");
    translate(&parsed, head.as_bytes(), target(tls))
}

#[test]
fn the_request_line_and_host_become_pseudo_fields() {
    let r = request(
        "GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n",
        true,
    )
    .unwrap();
    assert_eq!(r.method(), Method::GET);
    assert_eq!(r.uri().to_string(), "https://example.com/a?b=1");
    assert_eq!(r.headers().get("accept").unwrap(), "*/*");
    assert!(r.headers().get("host").is_none(), "Host is :authority");
}

#[test]
fn connection_specific_fields_are_dropped_and_te_trailers_kept() {
    let head = "POST /rpc HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, x-hop\r\nX-Hop: 1\r\n\
                Keep-Alive: timeout=5\r\nTE: trailers\r\nTransfer-Encoding: chunked\r\n\
                Content-Type: application/grpc\r\n\r\n";
    let r = request(head, false).unwrap();
    assert_eq!(r.uri().to_string(), "http://a/rpc");
    let names: Vec<&str> = r.headers().keys().map(|n| n.as_str()).collect();
    assert_eq!(names, ["content-type", "te"], "{names:?}");
    assert_eq!(r.headers().get("te").unwrap(), "trailers");
}

#[test]
fn an_absolute_target_names_the_authority_and_http_1_0_without_host_gets_the_address() {
    let r = request(
        "GET http://b.example:81/x HTTP/1.1\r\nHost: b.example:81\r\n\r\n",
        false,
    )
    .unwrap();
    assert_eq!(r.uri().to_string(), "http://b.example:81/x");
    let r = request("GET /y HTTP/1.0\r\n\r\n", false).unwrap();
    assert_eq!(r.uri().to_string(), "http://127.0.0.1:8443/y");
}

#[test]
fn a_body_follows_a_length_or_chunks_only() {
    let parse = |head: &str| {
        let mut parsed = RequestHead::new();
        tern_h1::parse_request(head.as_bytes(), &HEAD_LIMITS, &mut parsed).unwrap();
        has_body(&parsed)
    };
    assert!(!parse("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    assert!(!parse(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
    ));
    assert!(parse(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n"
    ));
    assert!(parse(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    ));
}
