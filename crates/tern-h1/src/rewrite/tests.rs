#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;
use crate::{parse_request, parse_response, Limits, Method, Status};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));

fn fwd() -> Forwarding {
    Forwarding::none().with_for(CLIENT).with_proto(true)
}

/// Parses `raw` and returns the rewritten head as text.
fn rewrite(raw: &str, fwd: &Forwarding) -> String {
    let mut head = RequestHead::new();
    let got = parse_request(raw.as_bytes(), &Limits::default(), &mut head).unwrap();
    assert!(matches!(got, Status::Complete(_)));
    let mut out = Vec::new();
    write_request(&head, raw.as_bytes(), fwd, &mut out);
    String::from_utf8(out).unwrap()
}

/// Parses a response to a request with `info` and returns the client's head and the plan.
fn respond(raw: &str, info: RequestInfo) -> (String, ResponsePlan) {
    let mut head = ResponseHead::new();
    parse_response(raw.as_bytes(), &Limits::default(), &mut head, info.method).unwrap();
    let mut out = Vec::new();
    let plan = write_response(&head, raw.as_bytes(), &info, &mut out);
    (String::from_utf8(out).unwrap(), plan)
}

const GET11: RequestInfo = RequestInfo {
    method: Method::Get,
    version: Version::Http11,
    keep_alive: true,
    upgrade: false,
};

const GET10: RequestInfo = RequestInfo {
    method: Method::Get,
    version: Version::Http10,
    keep_alive: false,
    upgrade: false,
};

#[test]
fn hop_by_hop_fields_are_removed_and_end_to_end_kept_in_order() {
    let out = rewrite(
        "GET /a HTTP/1.1\r\nConnection: keep-alive, x-secret\r\nKeep-Alive: timeout=5\r\n\
         X-Secret: 1\r\nTE: gzip\r\nUpgrade: websocket\r\nProxy-Connection: close\r\n\
         Expect: 100-continue\r\nX-Kept: yes\r\nHost: example.test\r\nTrailer: x-sum\r\n\r\n",
        &fwd(),
    );
    assert_eq!(
        out,
        "GET /a HTTP/1.1\r\nX-Kept: yes\r\nHost: example.test\r\nTrailer: x-sum\r\n\
         x-forwarded-for: 192.0.2.7\r\nx-forwarded-proto: https\r\n\r\n"
    );
}

#[test]
fn forwarded_for_joins_the_chain_and_appends_the_client() {
    let out = rewrite(
        "GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 10.0.0.1\r\nA: b\r\n\
         x-forwarded-for: 10.0.0.2, 10.0.0.3\r\nX-Forwarded-Proto: http\r\n\r\n",
        &fwd(),
    );
    assert_eq!(
        out,
        "GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 10.0.0.1, 10.0.0.2, 10.0.0.3, 192.0.2.7\r\n\
         A: b\r\nx-forwarded-proto: https\r\n\r\n"
    );
    let v6 = Forwarding::none().with_for(IpAddr::V6(Ipv6Addr::LOCALHOST));
    let out = rewrite("GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For:\r\n\r\n", &v6);
    assert_eq!(
        out,
        "GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: ::1\r\n\r\n"
    );
}

#[test]
fn forwarding_fields_are_left_alone_when_off() {
    let raw =
        "GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 10.0.0.1\r\nX-Forwarded-Proto: ftp\r\n\r\n";
    assert_eq!(rewrite(raw, &Forwarding::none()), raw);
}

#[test]
fn absolute_form_becomes_origin_form_with_its_authority_as_host() {
    // RFC 9112 §3.2.2: the target's authority replaces Host; userinfo never reaches it.
    let out = rewrite(
        "GET http://user:pw@example.test:8080/p?q=1 HTTP/1.1\r\nHost: other\r\n\r\n",
        &Forwarding::none(),
    );
    assert_eq!(
        out,
        "GET /p?q=1 HTTP/1.1\r\nHost: example.test:8080\r\n\r\n"
    );
    let out = rewrite(
        "GET http://h HTTP/1.1\r\nHost: h\r\n\r\n",
        &Forwarding::none(),
    );
    assert_eq!(out, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    let out = rewrite(
        "GET http://h?x=1 HTTP/1.1\r\nHost: h\r\n\r\n",
        &Forwarding::none(),
    );
    assert_eq!(out, "GET /?x=1 HTTP/1.1\r\nHost: h\r\n\r\n");
    // HTTP/1.0 without Host: the authority becomes one.
    let out = rewrite(
        "GET http://h:81/ HTTP/1.0\r\nA: b\r\n\r\n",
        &Forwarding::none(),
    );
    assert_eq!(out, "GET / HTTP/1.1\r\nhost: h:81\r\nA: b\r\n\r\n");
    let out = rewrite("GET /x HTTP/1.0\r\n\r\n", &Forwarding::none());
    assert_eq!(out, "GET /x HTTP/1.1\r\nhost: \r\n\r\n");
}

#[test]
fn host_is_preserved_exactly_and_lines_end_in_crlf() {
    let out = rewrite(
        "GET /?h=1 HTTP/1.0\r\nHost:WWW.Example.COM:8080  \r\nX-Sp:\t a  b \t\r\n\r\n",
        &Forwarding::none(),
    );
    assert_eq!(
        out,
        "GET /?h=1 HTTP/1.1\r\nHost:WWW.Example.COM:8080\r\nX-Sp:\t a  b\r\n\r\n"
    );
    // Bare LF line endings are not passed on.
    let out = rewrite(
        "GET / HTTP/1.1\nHost: h\nA: 1\r\nB: 2\nC:\n\n",
        &Forwarding::none(),
    );
    assert_eq!(
        out,
        "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: \r\n\r\n"
    );
}

#[test]
fn te_trailers_is_kept_when_offered() {
    let out = rewrite(
        "GET / HTTP/1.1\r\nHost: h\r\nTE: gzip, Trailers;q=1\r\nTE: deflate\r\nConnection: TE\r\n\r\n",
        &Forwarding::none(),
    );
    assert_eq!(out, "GET / HTTP/1.1\r\nHost: h\r\nte: trailers\r\n\r\n");
}

#[test]
fn the_framing_field_is_rewritten_once_where_it_stood() {
    let f = Forwarding::none();
    let out = rewrite(
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 007\r\nA: b\r\nContent-Length: 7\r\n\r\n",
        &f,
    );
    assert_eq!(
        out,
        "POST / HTTP/1.1\r\nHost: h\r\ncontent-length: 7\r\nA: b\r\n\r\n"
    );
    let out = rewrite(
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n",
        &f,
    );
    assert_eq!(
        out,
        "POST / HTTP/1.1\r\nHost: h\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    // CL.TE: the Content-Length never reaches the server (RFC 9112 §6.3 item 3).
    let out = rewrite(
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n",
        &f,
    );
    assert_eq!(
        out,
        "POST / HTTP/1.1\r\nHost: h\r\ntransfer-encoding: chunked\r\n\r\n"
    );
}

#[test]
fn responses_lose_hop_by_hop_fields_and_keep_trailer() {
    let (out, plan) = respond(
        "HTTP/1.1 200 OK\r\nConnection: close, x-hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=1\r\n\
         Transfer-Encoding: chunked\r\nTrailer: x-sum\r\nUpgrade: h2c\r\nContent-Type: text/plain\r\n\r\n",
        GET11,
    );
    assert_eq!(
        out,
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nTrailer: x-sum\r\nContent-Type: text/plain\r\n\r\n"
    );
    assert_eq!(
        plan,
        ResponsePlan {
            body: ClientBody::Chunked,
            keep_alive: true
        }
    );
}

#[test]
fn an_http_1_0_client_gets_a_dechunked_body_and_a_close() {
    let (out, plan) = respond(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        GET10,
    );
    assert_eq!(out, "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n");
    assert_eq!(plan.body, ClientBody::Dechunk);
    assert!(!plan.keep_alive);
    // Even when it asked for keep-alive: the end of the body is the close.
    let info = RequestInfo {
        keep_alive: true,
        ..GET10
    };
    let (_, plan) = respond(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        info,
    );
    assert!(!plan.keep_alive);
    // A length-delimited body keeps a keep-alive 1.0 client, and says so.
    let (out, plan) = respond("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n", info);
    assert_eq!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\n"
    );
    assert!(plan.keep_alive);
}

#[test]
fn a_body_until_close_is_rechunked_for_http_1_1() {
    let (out, plan) = respond("HTTP/1.0 200 OK\r\nA: b\r\n\r\n", GET11);
    assert_eq!(
        out,
        "HTTP/1.1 200 OK\r\nA: b\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    assert_eq!(
        plan,
        ResponsePlan {
            body: ClientBody::Rechunk,
            keep_alive: true
        }
    );
    let (out, plan) = respond("HTTP/1.0 200 OK\r\n\r\n", GET10);
    assert_eq!(out, "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n");
    assert_eq!(plan.body, ClientBody::UntilClose);
}

#[test]
fn bodiless_responses_keep_or_drop_their_length() {
    let head = RequestInfo {
        method: Method::Head,
        ..GET11
    };
    let (out, plan) = respond("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", head);
    assert_eq!(out, "HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n");
    assert_eq!(plan.body, ClientBody::None);
    let (out, _) = respond(
        "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
        GET11,
    );
    assert_eq!(out, "HTTP/1.1 204 No Content\r\n\r\n");
    let (out, _) = respond(
        "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
        GET10,
    );
    assert_eq!(
        out,
        "HTTP/1.1 304 Not Modified\r\nconnection: close\r\n\r\n"
    );
    let (out, _) = respond("HTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n", GET11);
    assert_eq!(out, "HTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n");
}

#[test]
fn the_client_asked_to_close() {
    let info = RequestInfo {
        keep_alive: false,
        ..GET11
    };
    let (out, plan) = respond("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", info);
    assert_eq!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    assert!(!plan.keep_alive);
}

#[test]
fn a_successful_connect_is_a_tunnel() {
    let info = RequestInfo {
        method: Method::Connect,
        ..GET11
    };
    let (out, plan) = respond("HTTP/1.1 200 Connection Established\r\n\r\n", info);
    assert_eq!(out, "HTTP/1.1 200 Connection Established\r\n\r\n");
    assert!(!plan.keep_alive);
    assert_eq!(plan.body, ClientBody::Tunnel);
}

/// A WebSocket opening request (RFC 6455 §4.1) with another hop-by-hop option.
const WS_REQUEST: &str = "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\
    Connection: keep-alive, Upgrade, x-hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\n\
    Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

#[test]
fn an_upgrade_request_keeps_upgrade_and_says_connection_upgrade_only() {
    let out = rewrite(WS_REQUEST, &Forwarding::none());
    assert_eq!(
        out,
        "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         connection: upgrade\r\n\r\n"
    );
}

#[test]
fn upgrade_offers_that_tern_does_not_forward_are_stripped() {
    // With content (curl's `Upgrade: h2c` on a POST), in HTTP/1.0, without the Connection
    // option: forwarded as ordinary requests, so the server cannot switch.
    for raw in [
        "POST / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\
         HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\nContent-Length: 2\r\n\r\nhi",
        "GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n",
    ] {
        let out = rewrite(raw, &Forwarding::none());
        let lower = out.to_ascii_lowercase();
        assert!(
            !lower.contains("upgrade") && !lower.contains("http2-settings"),
            "{out}"
        );
    }
}

/// The response to [`WS_REQUEST`].
const WS_101: &str = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
    Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nServer: x\r\n\r\n";

#[test]
fn a_101_to_an_upgrade_request_is_a_tunnel_with_edits_applied() {
    let mut rules = crate::HeaderEdits::new();
    rules.delete(b"server");
    let edits = Edits {
        cookie: None,
        extra: b"set-cookie: SRV=w1; path=/\r\n",
        headers: Some(&rules),
    };
    let info = RequestInfo {
        upgrade: true,
        ..GET11
    };
    let mut head = ResponseHead::new();
    parse_response(
        WS_101.as_bytes(),
        &Limits::default(),
        &mut head,
        Method::Get,
    )
    .unwrap();
    assert!(head.upgrade());
    let mut out = Vec::new();
    let plan = write_response_edited(&head, WS_101.as_bytes(), &info, &edits, &mut out);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nset-cookie: SRV=w1; path=/\r\n\
         connection: upgrade\r\n\r\n"
    );
    assert_eq!(
        plan,
        ResponsePlan {
            body: ClientBody::Tunnel,
            keep_alive: false
        }
    );
}

#[test]
fn a_101_to_another_request_is_no_tunnel() {
    let (out, plan) = respond(WS_101, GET11);
    assert_eq!(plan.body, ClientBody::None);
    assert!(!out.to_ascii_lowercase().contains("upgrade"), "{out}");
}

#[test]
fn numbers_are_written_in_decimal() {
    for n in [0, 7, 10, 999, u64::MAX] {
        let mut out = Vec::new();
        push_u64(&mut out, n);
        assert_eq!(out, n.to_string().as_bytes());
    }
}

#[test]
fn edits_strip_one_cookie_and_append_fields() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: a=1; SRV=w1\r\nX-A: 1\r\n\r\n";
    let mut head = RequestHead::new();
    parse_request(raw.as_bytes(), &Limits::default(), &mut head).unwrap();
    let mut out = Vec::new();
    let edits = Edits {
        cookie: Some(CookieEdit::Strip(b"SRV")),
        extra: b"x-extra: yes\r\n",
        headers: None,
    };
    write_request_edited(&head, raw.as_bytes(), &Forwarding::none(), &edits, &mut out);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "GET / HTTP/1.1\r\nHost: a\r\ncookie: a=1\r\nX-A: 1\r\nx-extra: yes\r\n\r\n"
    );
}

#[test]
fn response_edits_go_on_final_heads_only() {
    let edited = |raw: &str| {
        let mut head = ResponseHead::new();
        parse_response(raw.as_bytes(), &Limits::default(), &mut head, Method::Get).unwrap();
        let mut out = Vec::new();
        let edits = Edits {
            cookie: None,
            extra: b"set-cookie: SRV=w1; path=/\r\n",
            headers: None,
        };
        write_response_edited(&head, raw.as_bytes(), &GET11, &edits, &mut out);
        String::from_utf8(out).unwrap()
    };
    assert_eq!(
        edited("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nset-cookie: SRV=w1; path=/\r\n\r\n"
    );
    assert_eq!(
        edited("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"),
        "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
    );
}

#[test]
fn client_cert_fields_replace_those_the_client_sent() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nX-SSL-Client-Verify: SUCCESS\r\nAccept: */*\r\n\
               x-ssl-client-dn: CN=forged\r\nX-Ssl-Client-Anything: 1\r\nX-SSL-Clients: kept\r\n\r\n";
    let f = Forwarding::none().with_client_cert(Some(("CN=alice,O=Tern", "00ff")));
    assert_eq!(
        rewrite(raw, &f),
        "GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nX-SSL-Clients: kept\r\n\
         X-SSL-Client-Verify: SUCCESS\r\nX-SSL-Client-DN: CN=alice,O=Tern\r\n\
         X-SSL-Client-SHA256: 00ff\r\n\r\n"
    );
    let none = Forwarding::none().with_client_cert(None);
    assert_eq!(
        rewrite(raw, &none),
        "GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nX-SSL-Clients: kept\r\n\
         X-SSL-Client-Verify: NONE\r\n\r\n"
    );
    // Without the setting, the fields pass through untouched.
    assert_eq!(rewrite(raw, &Forwarding::none()), raw);
}

#[test]
fn client_cert_values_cannot_inject_lines() {
    let f = Forwarding::none().with_client_cert(Some((" CN=a\r\nX-Evil: 1 ", "ab\n")));
    assert_eq!(
        rewrite("GET / HTTP/1.1\r\nHost: a\r\n\r\n", &f),
        "GET / HTTP/1.1\r\nHost: a\r\nX-SSL-Client-Verify: SUCCESS\r\n\
         X-SSL-Client-DN: CN=aX-Evil: 1\r\nX-SSL-Client-SHA256: ab\r\n\r\n"
    );
}

/// The request `raw` rewritten with header rules' `edits` (and X-Forwarded-For on).
fn rewrite_with(raw: &str, edits: &crate::HeaderEdits) -> String {
    let mut head = RequestHead::new();
    parse_request(raw.as_bytes(), &Limits::default(), &mut head).unwrap();
    let mut out = Vec::new();
    let edits = Edits {
        headers: Some(edits),
        ..Edits::default()
    };
    let fwd = Forwarding::none().with_for(CLIENT);
    write_request_edited(&head, raw.as_bytes(), &fwd, &edits, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn header_rules_drop_fields_and_add_lines_before_forwarding_fields() {
    let mut e = crate::HeaderEdits::new();
    e.delete(b"x-debug");
    e.set(b"X-Env").push(b"prod");
    e.add(b"X-Via").push(b"tern");
    let out = rewrite_with(
        "POST /a HTTP/1.1\r\nHost: a\r\nX-Debug: 1\r\nX-ENV: test\r\nContent-Length: 2\r\n\
         x-debug: 2\r\nX-Kept: k\r\n\r\nhi",
        &e,
    );
    assert_eq!(
        out,
        "POST /a HTTP/1.1\r\nHost: a\r\ncontent-length: 2\r\nX-Kept: k\r\nX-Env: prod\r\n\
         X-Via: tern\r\nx-forwarded-for: 192.0.2.7\r\n\r\n"
    );
}

#[test]
fn header_rules_never_drop_framing_or_hop_by_hop_fields() {
    let mut e = crate::HeaderEdits::new();
    e.delete(b"content-length");
    e.delete(b"connection");
    let out = rewrite_with(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nConnection: x-a\r\nX-A: 1\r\n\r\n",
        &e,
    );
    assert_eq!(
        out,
        "POST / HTTP/1.1\r\nHost: a\r\ncontent-length: 1\r\nx-forwarded-for: 192.0.2.7\r\n\r\n"
    );
}

#[test]
fn a_replaced_host_is_written_once() {
    let mut e = crate::HeaderEdits::new();
    e.set(b"Host").push(b"inside.test");
    for raw in [
        "GET / HTTP/1.1\r\nHost: outside.test\r\n\r\n",
        "GET http://outside.test/ HTTP/1.1\r\nHost: outside.test\r\n\r\n",
        "GET / HTTP/1.0\r\n\r\n",
    ] {
        assert_eq!(
            rewrite_with(raw, &e),
            "GET / HTTP/1.1\r\nHost: inside.test\r\nx-forwarded-for: 192.0.2.7\r\n\r\n",
            "{raw:?}"
        );
    }
}

#[test]
fn a_deleted_forwarded_for_chain_restarts_at_the_client() {
    let mut e = crate::HeaderEdits::new();
    e.delete(b"X-Forwarded-For");
    let out = rewrite_with(
        "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 10.9.9.9\r\n\r\n",
        &e,
    );
    assert_eq!(
        out,
        "GET / HTTP/1.1\r\nHost: a\r\nx-forwarded-for: 192.0.2.7\r\n\r\n"
    );
}

#[test]
fn response_header_rules_apply_to_final_heads() {
    let mut e = crate::HeaderEdits::new();
    e.delete(b"server");
    e.set(b"Strict-Transport-Security").push(b"max-age=1");
    let edited = |raw: &str| {
        let mut head = ResponseHead::new();
        parse_response(raw.as_bytes(), &Limits::default(), &mut head, Method::Get).unwrap();
        let mut out = Vec::new();
        let edits = Edits {
            headers: Some(&e),
            ..Edits::default()
        };
        write_response_edited(&head, raw.as_bytes(), &GET11, &edits, &mut out);
        String::from_utf8(out).unwrap()
    };
    assert_eq!(
        edited("HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n"),
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nStrict-Transport-Security: max-age=1\r\n\r\n"
    );
    assert_eq!(
        edited("HTTP/1.1 103 Early Hints\r\nServer: x\r\n\r\n"),
        "HTTP/1.1 103 Early Hints\r\nServer: x\r\n\r\n"
    );
}

/// Parses a response and writes it for a body the proxy codes itself.
fn respond_encoded(raw: &str, info: RequestInfo) -> (String, ResponsePlan) {
    let mut head = ResponseHead::new();
    parse_response(raw.as_bytes(), &Limits::default(), &mut head, info.method).unwrap();
    let mut out = Vec::new();
    let edits = Edits::default();
    let plan = write_response_encoded(&head, raw.as_bytes(), &info, &edits, &mut out);
    (String::from_utf8(out).unwrap(), plan)
}

#[test]
fn an_encoded_body_loses_its_length_and_goes_chunked() {
    for raw in [
        "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nContent-Type: text/html\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
    ] {
        let (out, plan) = respond_encoded(raw, GET11);
        assert!(!out.contains("Content-Length") && out.contains("transfer-encoding: chunked\r\n"));
        assert_eq!(plan.body, ClientBody::Encoded, "{raw}");
    }
    // Nothing to code, or a client that cannot take chunks: the plain plan.
    let (out, plan) = respond_encoded("HTTP/1.1 204 No Content\r\n\r\n", GET11);
    assert_eq!(
        (out.as_str(), plan.body),
        ("HTTP/1.1 204 No Content\r\n\r\n", ClientBody::None)
    );
    let (_, plan) = respond_encoded("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", GET10);
    assert_eq!(plan.body, ClientBody::Length(9));
}
