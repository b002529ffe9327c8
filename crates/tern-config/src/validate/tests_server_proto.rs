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

/// The HTTP check of the first server, whose table has `keys`.
fn http_check(keys: &str) -> crate::HttpCheck {
    match &parse_ok(&with_server_keys(keys)).backends[0].servers[0]
        .check
        .as_ref()
        .unwrap()
        .kind
    {
        crate::CheckKind::Http(http)
        | crate::CheckKind::Tls {
            http: Some(http), ..
        } => http.clone(),
        other => panic!("not an HTTP check: {other:?}"),
    }
}

#[test]
fn http_checks_follow_the_servers_proto_unless_their_own_is_written() {
    assert!(!http_check("check = { path = \"/up\" }").h2);
    assert!(http_check("proto = \"h2\", check = { path = \"/up\" }").h2);
    assert!(
        http_check("proto = \"h2\", tls = { verify = \"none\" }, check = { type = \"https\" }").h2
    );
    assert!(!http_check("proto = \"h2\", check = { path = \"/up\", proto = \"h1\" }").h2);
    assert!(http_check("check = { path = \"/up\", proto = \"h2\" }").h2);
    // A negotiated protocol is not known in advance: checks stay HTTP/1.1.
    assert!(
        !http_check("tls = { verify = \"none\", alpn = [\"h2\", \"http/1.1\"] }, check = { type = \"https\" }")
            .h2
    );
}

#[test]
fn a_check_proto_must_be_h1_or_h2_on_an_http_check() {
    assert_error(
        &with_server_keys("check = { path = \"/\", proto = \"h3\" }"),
        8,
        "backend[0].servers[0].check.proto",
        "unknown check protocol `h3`",
    );
    assert_error(
        &with_server_keys("check = { type = \"tcp\", proto = \"h2\" }"),
        8,
        "backend[0].servers[0].check.proto",
        "only applies with type = \"http\" or \"https\"",
    );
}

#[test]
fn ws_chooses_the_protocol_of_websockets_apart_from_proto() {
    use crate::WsProto;
    let server = &parse_ok(MINIMAL).backends[0].servers[0];
    assert_eq!(
        (server.ws, server.websocket_proto()),
        (WsProto::Auto, ServerProto::Http1)
    );
    let server = &parse_ok(&with_server_keys("proto = \"h2\"")).backends[0].servers[0];
    assert_eq!(server.websocket_proto(), ServerProto::Http2);
    let server = &parse_ok(&with_server_keys("proto = \"h2\", ws = \"h1\"")).backends[0].servers[0];
    assert_eq!(
        (server.ws, server.websocket_proto()),
        (WsProto::H1, ServerProto::Http1)
    );
    assert_eq!(server.proto, ServerProto::Http2);
    let server = &parse_ok(&with_server_keys("ws = \"H2\"")).backends[0].servers[0];
    assert_eq!(server.websocket_proto(), ServerProto::Http2);
    assert_error(
        &with_server_keys("ws = \"h3\""),
        8,
        "backend[0].servers[0].ws",
        "expected \"auto\", \"h1\" or \"h2\"",
    );
}

#[test]
fn ws_on_a_tls_server_needs_its_protocol_in_alpn() {
    use crate::WsProto;
    let ok =
        with_server_keys("tls = { verify = \"none\", alpn = [\"h2\", \"http/1.1\"] }, ws = \"h1\"");
    let server = &parse_ok(&ok).backends[0].servers[0];
    assert_eq!(
        (server.proto, server.ws),
        (ServerProto::Negotiated, WsProto::H1)
    );
    assert_error(
        &with_server_keys("tls = { verify = \"none\" }, proto = \"h2\", ws = \"h1\""),
        8,
        "backend[0].servers[0].ws",
        "leaves out \"http/1.1\"",
    );
    assert_error(
        &with_server_keys("tls = { verify = \"none\", alpn = [\"http/1.1\"] }, ws = \"h2\""),
        8,
        "backend[0].servers[0].ws",
        "leaves out \"h2\"",
    );
    // Without `alpn` a TLS server is offered nothing: HTTP/1.1 goes without ALPN.
    let plain_tls = with_server_keys("tls = { verify = \"none\" }, ws = \"h1\"");
    assert_eq!(parse_ok(&plain_tls).backends[0].servers[0].ws, WsProto::H1);
}
