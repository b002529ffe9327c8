#![allow(clippy::unwrap_used)]

use super::*;
use crate::http2::request::{self, BodyFraming};

/// An extended CONNECT request for `protocol`, with `fields`.
fn connect(protocol: &str, fields: &[(&str, &str)]) -> Parts {
    let mut b = http::Request::builder()
        .method("CONNECT")
        .uri("https://chat.example/ws?room=1")
        .extension(h2::ext::Protocol::from(protocol));
    for (n, v) in fields {
        b = b.header(*n, *v);
    }
    b.body(()).unwrap().into_parts().0
}

/// The value of the field `name` in a head.
fn field<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
}

#[test]
fn base64_matches_rfc_4648_vectors() {
    assert_eq!(&base64::<4>(b"f"), b"Zg==");
    assert_eq!(&base64::<4>(b"fo"), b"Zm8=");
    assert_eq!(&base64::<4>(b"foo"), b"Zm9v");
    assert_eq!(&base64::<8>(b"foobar"), b"Zm9vYmFy");
    assert_eq!(&base64::<8>(b"fooba"), b"Zm9vYmE=");
}

#[test]
fn the_accept_value_is_rfc_6455s_example() {
    // RFC 6455 §1.3: the sample nonce and the server's answer to it.
    assert_eq!(
        &accept_for(b"dGhlIHNhbXBsZSBub25jZQ=="),
        b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );
}

#[test]
fn a_websocket_connect_becomes_an_upgrade_get_with_a_fresh_key() {
    let p = connect(
        "websocket",
        &[
            ("sec-websocket-version", "13"),
            ("sec-websocket-protocol", "chat"),
            ("origin", "https://chat.example"),
        ],
    );
    let mut out = Vec::new();
    let framing = request::write_head(&p, false, &mut out).unwrap();
    let BodyFraming::Tunnel(handshake) = framing else {
        panic!("{framing:?}")
    };
    let head = String::from_utf8(out.clone()).unwrap();
    assert!(
        head.starts_with(
            "GET /ws?room=1 HTTP/1.1\r\nhost: chat.example\r\n\
             connection: upgrade\r\nupgrade: websocket\r\nsec-websocket-key: "
        ),
        "{head}"
    );
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    for (name, value) in [
        ("sec-websocket-version", "13"),
        ("sec-websocket-protocol", "chat"),
        ("origin", "https://chat.example"),
    ] {
        assert_eq!(field(&head, name), Some(value), "{head}");
    }
    let key = field(&head, "sec-websocket-key").unwrap();
    assert_eq!(key.len(), KEY_LEN);
    assert!(handshake.accepts(&accept_for(key.as_bytes())));
    assert!(!handshake.accepts(b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));

    // tern-h1 takes it for an upgrade request, with no body.
    let mut parsed = tern_h1::RequestHead::new();
    let status = tern_h1::parse_request(&out, &tern_h1::Limits::default(), &mut parsed).unwrap();
    assert_eq!(status, tern_h1::Status::Complete(out.len()));
    assert!(parsed.is_upgrade());
    assert_eq!(parsed.method(), tern_h1::Method::Get);

    // Each stream gets a key of its own.
    let mut again = Vec::new();
    request::write_head(&p, false, &mut again).unwrap();
    let other = String::from_utf8(again).unwrap();
    assert_ne!(field(&other, "sec-websocket-key"), Some(key));
}

#[test]
fn a_clients_key_accept_and_length_are_not_passed() {
    let p = connect(
        "WebSocket",
        &[
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("sec-websocket-accept", "x"),
            ("content-length", "0"),
        ],
    );
    let mut out = Vec::new();
    request::write_head(&p, false, &mut out).unwrap();
    let head = String::from_utf8(out).unwrap();
    assert_eq!(head.matches("sec-websocket-key").count(), 1, "{head}");
    assert!(!head.contains("dGhlIHNhbXBsZSBub25jZQ=="), "{head}");
    assert!(!head.contains("sec-websocket-accept"), "{head}");
    assert!(!head.contains("content-length"), "{head}");
}

#[test]
fn other_protocols_and_plain_connect_are_refused() {
    let mut out = Vec::new();
    let e = request::write_head(&connect("connect-udp", &[]), false, &mut out).unwrap_err();
    assert_eq!(e, Refused::Protocol);
    assert_eq!(e.status(), 501);
    let plain = http::Request::builder()
        .method("CONNECT")
        .uri("chat.example:443")
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let e = request::write_head(&plain, false, &mut out).unwrap_err();
    assert_eq!(e, Refused::Connect);
}

#[test]
fn the_accept_check_trims_spaces_and_wants_the_exact_value() {
    let h = Handshake {
        accept: accept_for(b"dGhlIHNhbXBsZSBub25jZQ=="),
    };
    assert!(h.accepts(b" s3pPLMBiTxaQ9kYGzzhZRbK+xOo= "));
    assert!(!h.accepts(b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo"));
    assert!(!h.accepts(b"S3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    assert!(!h.accepts(b""));
}
