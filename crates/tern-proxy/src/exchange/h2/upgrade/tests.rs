#![allow(clippy::unwrap_used)]

use super::*;
use crate::exchange::h2::request::{translate, Target, HEAD_LIMITS};
use tern_h1::{parse_response, Status};

/// RFC 6455 §1.3's sample key and the accept value that answers it.
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

fn parsed(head: &str) -> RequestHead {
    let mut parsed = RequestHead::new();
    let status = tern_h1::parse_request(head.as_bytes(), &HEAD_LIMITS, &mut parsed).unwrap();
    assert!(matches!(status, Status::Complete(_)), "{head}");
    parsed
}

fn opening(upgrade: &str, key: &str) -> String {
    format!(
        "GET /chat?room=1 HTTP/1.1\r\nHost: example.com\r\nUpgrade: {upgrade}\r\n\
         Connection: keep-alive, Upgrade\r\n{key}Sec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Protocol: chat\r\n\r\n"
    )
}

fn with_key() -> String {
    opening("websocket", &format!("Sec-WebSocket-Key: {KEY}\r\n"))
}

#[test]
fn a_websocket_opening_becomes_an_extended_connect_without_its_key() {
    let head = with_key();
    let parsed = parsed(&head);
    let upgrade = Upgrade::of(&parsed, head.as_bytes()).unwrap();
    let target = Target {
        tls: false,
        addr: "127.0.0.1:80".parse().unwrap(),
    };
    let mut request = translate(&parsed, head.as_bytes(), target).unwrap();
    upgrade.apply(&mut request);
    assert_eq!(request.method(), Method::CONNECT);
    assert_eq!(
        request
            .extensions()
            .get::<h2::ext::Protocol>()
            .unwrap()
            .as_str(),
        "websocket"
    );
    // :scheme, :authority and :path stay (RFC 8441 §4).
    assert_eq!(request.uri().to_string(), "http://example.com/chat?room=1");
    let mut names: Vec<&str> = request.headers().keys().map(|n| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["sec-websocket-protocol", "sec-websocket-version"],
        "{names:?}"
    );
}

#[test]
fn websocket_may_be_any_protocol_offered_in_any_case() {
    let head = opening("foo/2, WebSocket", "");
    let upgrade = Upgrade::of(&parsed(&head), head.as_bytes()).unwrap();
    // No key: no accept value to give.
    assert_eq!(upgrade.accept, None);
}

#[test]
fn requests_that_are_not_upgrades_have_none() {
    for head in [
        "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        // Upgrade without Connection: upgrade is no upgrade request.
        "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n",
        // Nor one with a body.
        "POST / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\
         Content-Length: 2\r\n\r\n",
        // Other protocols go as plain requests (curl's offer of h2c with --http2).
        "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\
         HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n",
    ] {
        assert!(
            Upgrade::of(&parsed(head), head.as_bytes()).is_none(),
            "{head}"
        );
    }
}

#[test]
fn the_acceptance_becomes_a_101_with_the_accept_value_for_the_key() {
    let head = with_key();
    let upgrade = Upgrade::of(&parsed(&head), head.as_bytes()).unwrap();
    let parts = http::Response::builder()
        .status(200)
        .header("sec-websocket-protocol", "chat")
        .header("content-length", "0")
        .header("sec-websocket-accept", "forged")
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let mut out = Vec::new();
    upgrade.write_switch(&parts, &mut out);
    assert_eq!(
        String::from_utf8(out.clone()).unwrap(),
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nsec-websocket-protocol: chat\r\n\
             upgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-accept: {ACCEPT}\r\n\r\n"
        )
    );
    let mut response = tern_h1::ResponseHead::new();
    let parsed = parse_response(&out, &HEAD_LIMITS, &mut response, tern_h1::Method::Get);
    assert!(matches!(parsed, Ok(Status::Complete(n)) if n == out.len()));
    assert_eq!(response.status(), 101);
    assert!(response.upgrade());
}

#[test]
fn any_2xx_accepts_and_nothing_else_does() {
    for (status, accepted) in [
        (200, true),
        (204, true),
        (101, false),
        (404, false),
        (502, false),
    ] {
        let status = http::StatusCode::from_u16(status).unwrap();
        assert_eq!(Upgrade::accepted(status), accepted, "{status}");
    }
}

#[test]
fn the_refusal_is_recognised_through_an_io_error() {
    assert!(is_unsupported(&std::io::Error::other(Unsupported)));
    assert!(!is_unsupported(&std::io::Error::other("something else")));
    assert!(!is_unsupported(&std::io::ErrorKind::ConnectionReset.into()));
}
