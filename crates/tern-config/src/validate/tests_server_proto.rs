//! A server's `proto`, and how it reads with the TLS `alpn` offer.

#![allow(clippy::unwrap_used)]

use crate::test_support::*;
use crate::ServerProto;

/// `MINIMAL` with `keys` added to its server's table (line 8).
fn with_server_keys(keys: &str) -> String {
    MINIMAL.replace(
        "address = \"127.0.0.1:8080\" }",
        &format!("address = \"127.0.0.1:8080\", {keys} }}"),
    )
}

#[test]
fn servers_speak_http_1_1_unless_told() {
    let server = &parse_ok(MINIMAL).backends[0].servers[0];
    assert_eq!(server.proto, ServerProto::Http1);
    let server = &parse_ok(&with_server_keys("proto = \"h2\"")).backends[0].servers[0];
    assert_eq!(server.proto, ServerProto::Http2);
}

#[test]
fn the_backend_proto_is_the_servers_default() {
    let text = MINIMAL.replace("name = \"app\"\n", "name = \"app\"\nproto = \"h2\"\n");
    let server = &parse_ok(&text).backends[0].servers[0];
    assert_eq!(server.proto, ServerProto::Http2);
    let text = text.replace(
        "address = \"127.0.0.1:8080\" }",
        "address = \"127.0.0.1:8080\", proto = \"h1\" }",
    );
    assert_eq!(
        parse_ok(&text).backends[0].servers[0].proto,
        ServerProto::Http1
    );
}

#[test]
fn h2_on_a_tls_server_offers_alpn_h2_and_h2_in_alpn_negotiates() {
    let server = &parse_ok(&with_server_keys(
        "proto = \"h2\", tls = { verify = \"none\" }",
    ))
    .backends[0]
        .servers[0];
    assert_eq!(server.proto, ServerProto::Http2);
    assert_eq!(server.tls.as_ref().unwrap().alpn, ["h2"]);
    let server = &parse_ok(&with_server_keys(
        "tls = { verify = \"none\", alpn = [\"h2\", \"http/1.1\"] }",
    ))
    .backends[0]
        .servers[0];
    assert_eq!(server.proto, ServerProto::Negotiated);
}

#[test]
fn proto_and_alpn_must_agree() {
    assert_error(
        &with_server_keys("proto = \"h2\", tls = { verify = \"none\", alpn = [\"http/1.1\"] }"),
        8,
        "backend[0].servers[0].proto",
        "leaves out \"h2\"",
    );
    assert_error(
        &with_server_keys("proto = \"h1\", tls = { verify = \"none\", alpn = [\"h2\"] }"),
        8,
        "backend[0].servers[0].proto",
        "offers \"h2\"",
    );
    assert_error(
        &with_server_keys("proto = \"h3\""),
        8,
        "backend[0].servers[0].proto",
        "expected \"h1\" or \"h2\"",
    );
}
