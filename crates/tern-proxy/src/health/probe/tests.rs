#![allow(clippy::unwrap_used)]

mod support;

use tern_config::{CheckKind, HttpCheck, ProxyProtocol};
use tokio::net::TcpListener;

use super::http::contains_from;
use super::*;
use support::*;

#[tokio::test]
async fn tcp_connect_passes() {
    let (addr, _server) = server(Reply::Never).await;
    let outcome = probe(&check(CheckKind::Tcp, addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L4Ok, "L4OK: connected in ");
    assert!(outcome.detail.ends_with(" ms"));
    assert!(outcome.took < WAIT);
}

#[tokio::test]
async fn tcp_refused_is_l4con() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let outcome = probe(&check(CheckKind::Tcp, addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L4Con, "L4CON: Connection refused");
    assert_eq!(outcome.detail, "L4CON: Connection refused");
}

#[tokio::test]
async fn http_ok_sends_the_documented_request() {
    let (addr, server) = server(Reply::AfterRequest(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ))
    .await;
    let outcome = probe(&check(CheckKind::Http(get()), addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L7Ok, "L7OK: status 200 in ");
    let expected = format!(
        "GET /health HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: tern-check\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(server.await.unwrap(), expected);
}

#[tokio::test]
async fn http_head_with_host_ignores_the_declared_length() {
    let (addr, server) = server(Reply::AfterRequest(
        b"HTTP/1.1 204 No Content\r\nContent-Length: 100\r\n\r\n",
    ))
    .await;
    let http = HttpCheck {
        method: "HEAD".to_owned(),
        path: "/ping?x=1".to_owned(),
        host: Some("app.example".to_owned()),
        ..expecting_body("")
    };
    let outcome = probe(&check(CheckKind::Http(http), addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L7Ok, "L7OK: status 204");
    let head = server.await.unwrap();
    assert!(
        head.starts_with("HEAD /ping?x=1 HTTP/1.1\r\nHost: app.example\r\n"),
        "{head}"
    );
}

#[tokio::test]
async fn http_bad_status_is_l7sts() {
    let reply = Reply::AfterRequest(b"HTTP/1.1 500 Internal Server Error\r\n\r\n");
    let outcome = http_probe(get(), reply, WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Sts,
        "L7STS: status 500 (expected 200-399) in ",
    );
}

#[tokio::test]
async fn http_status_list_is_shown_in_the_detail() {
    let http = HttpCheck {
        expect_status: vec![range(200, 200), range(204, 204)],
        ..get()
    };
    let reply = Reply::AfterRequest(b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n");
    let outcome = http_probe(http, reply, WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Sts,
        "L7STS: status 302 (expected 200,204)",
    );
}

#[tokio::test]
async fn body_with_length_found() {
    let reply = Reply::AfterRequest(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nstatus: up\n");
    let outcome = http_probe(expecting_body("up"), reply, WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Ok,
        "L7OK: status 200, body contains \"up\" in ",
    );
}

#[tokio::test]
async fn body_with_length_not_found() {
    let reply =
        Reply::AfterRequest(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nstatus: down\nup");
    // "up" is beyond the declared length: not part of the body.
    let outcome = http_probe(expecting_body("up"), reply, WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Body,
        "L7BODY: status 200, body does not contain \"up\" in ",
    );
}

#[tokio::test]
async fn chunked_body_found_across_chunks() {
    let reply = Reply::AfterRequest(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nall\r\n5\r\n good\r\n0\r\n\r\n",
    );
    let outcome = http_probe(expecting_body("all good"), reply, WAIT).await;
    assert_outcome(&outcome, CheckCode::L7Ok, "L7OK: status 200, body contains");
}

#[tokio::test]
async fn chunked_body_not_found() {
    let reply = Reply::AfterRequest(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbad!\r\n0\r\nX-Trailer: 1\r\n\r\n",
    );
    let outcome = http_probe(expecting_body("good"), reply, WAIT).await;
    assert_outcome(&outcome, CheckCode::L7Body, "L7BODY: ");
}

#[tokio::test]
async fn invalid_chunked_body_is_l7rsp() {
    let reply =
        Reply::AfterRequest(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n");
    let outcome = http_probe(expecting_body("ok"), reply, WAIT).await;
    assert_outcome(&outcome, CheckCode::L7Rsp, "L7RSP: invalid response body");
}

#[tokio::test]
async fn body_until_close_found() {
    let reply = Reply::AfterRequest(b"HTTP/1.0 200 OK\r\n\r\nhello world");
    let outcome = http_probe(expecting_body("world"), reply, WAIT).await;
    assert_outcome(&outcome, CheckCode::L7Ok, "L7OK: ");
}

#[tokio::test]
async fn only_the_first_16k_of_body_is_searched() {
    const BODY: &[u8] = &{
        let mut b = [b'a'; 17 * 1024 + 128];
        let head = b"HTTP/1.0 200 OK\r\n\r\n";
        let mut i = 0;
        while i < head.len() {
            b[i] = head[i];
            i += 1;
        }
        // The needle starts after 16 KiB of body.
        b[head.len() + 16 * 1024 + 10] = b'!';
        b
    };
    let outcome = http_probe(expecting_body("!"), Reply::AfterRequest(BODY), WAIT).await;
    assert_outcome(&outcome, CheckCode::L7Body, "L7BODY: ");
}

#[tokio::test]
async fn truncated_head_is_l7rsp() {
    let reply = Reply::AfterRequest(b"HTTP/1.1 200 OK\r\nContent-");
    let outcome = http_probe(get(), reply, WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Rsp,
        "L7RSP: connection closed in the response head",
    );
}

#[tokio::test]
async fn truncated_body_is_l7rsp() {
    let reply = Reply::AfterRequest(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
    let outcome = http_probe(expecting_body("missing"), reply, WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Rsp,
        "L7RSP: connection closed in the response body",
    );
}

#[tokio::test]
async fn empty_and_invalid_responses_are_l7rsp() {
    let outcome = http_probe(get(), Reply::AfterRequest(b""), WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Rsp,
        "L7RSP: connection closed without a response",
    );
    let outcome = http_probe(get(), Reply::AfterRequest(b"SSH-2.0-OpenSSH\r\n\r\n"), WAIT).await;
    assert_outcome(&outcome, CheckCode::L7Rsp, "L7RSP: invalid response head");
}

#[tokio::test]
async fn silent_server_times_out_within_the_check_timeout() {
    let outcome = http_probe(get(), Reply::Never, SHORT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Tout,
        "L7TOUT: timeout during the HTTP exchange",
    );
    assert!(outcome.took >= SHORT, "{:?}", outcome.took);
    assert!(outcome.took < WAIT, "{:?}", outcome.took);
}

#[tokio::test]
async fn interim_responses_are_skipped() {
    let reply = Reply::AfterRequest(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n\
          HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    );
    let outcome = http_probe(expecting_body("ok"), reply, WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Ok,
        "L7OK: status 200, body contains \"ok\"",
    );
}

#[tokio::test]
async fn endless_interim_responses_are_l7rsp() {
    const MANY: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n\
        HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n\
        HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n\
        HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n";
    let outcome = http_probe(get(), Reply::AfterRequest(MANY), WAIT).await;
    assert_outcome(
        &outcome,
        CheckCode::L7Rsp,
        "L7RSP: too many interim responses",
    );
}

#[tokio::test]
async fn tls_handshake_passes_and_sends_sni() {
    let (addr, server) = tls_server(Reply::Never).await;
    let kind = CheckKind::Tls {
        sni: Some("localhost".to_owned()),
        http: None,
    };
    let outcome = probe(&check(kind, addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L6Ok, "L6OK: TLSv1.3 ");
    let (sni, _) = server.await.unwrap();
    assert_eq!(sni.as_deref(), Some("localhost"));
}

#[tokio::test]
async fn tls_without_sni_sends_none() {
    let (addr, server) = tls_server(Reply::Never).await;
    let kind = CheckKind::Tls {
        sni: None,
        http: None,
    };
    let outcome = probe(&check(kind, addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L6Ok, "L6OK: ");
    assert_eq!(server.await.unwrap().0, None);
}

#[tokio::test]
async fn tls_then_http() {
    let (addr, server) = tls_server(Reply::AfterRequest(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\nhealthy\r\n0\r\n\r\n",
    ))
    .await;
    let kind = CheckKind::Tls {
        sni: Some("localhost".to_owned()),
        http: Some(expecting_body("healthy")),
    };
    let outcome = probe(&check(kind, addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L7Ok, "L7OK: status 200, body contains");
    let (_, head) = server.await.unwrap();
    assert!(head.starts_with("GET /health HTTP/1.1\r\n"), "{head}");
}

#[tokio::test]
async fn tls_then_bad_status() {
    let (addr, _server) =
        tls_server(Reply::AfterRequest(b"HTTP/1.1 503 Unavailable\r\n\r\n")).await;
    let kind = CheckKind::Tls {
        sni: None,
        http: Some(get()),
    };
    let outcome = probe(&check(kind, addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L7Sts, "L7STS: status 503");
}

#[tokio::test]
async fn tls_against_plain_text_is_l6rsp() {
    let reply = Reply::AtOnce(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    let (addr, _server) = server(reply).await;
    let kind = CheckKind::Tls {
        sni: None,
        http: None,
    };
    let outcome = probe(&check(kind, addr, WAIT), &tls(), None).await;
    assert_outcome(&outcome, CheckCode::L6Rsp, "L6RSP: TLS handshake failed");
}

#[tokio::test]
async fn silent_tls_server_is_l6tout() {
    let (addr, _server) = server(Reply::Never).await;
    let kind = CheckKind::Tls {
        sni: None,
        http: Some(get()),
    };
    let outcome = probe(&check(kind, addr, SHORT), &tls(), None).await;
    assert_outcome(
        &outcome,
        CheckCode::L6Tout,
        "L6TOUT: timeout during TLS handshake",
    );
    assert!(
        outcome.took >= SHORT && outcome.took < WAIT,
        "{:?}",
        outcome.took
    );
}

#[test]
fn incremental_search_looks_back_by_the_needle_length() {
    assert!(contains_from(b"abcdef", 4, b"cde"));
    assert!(!contains_from(b"abcdef", 6, b"cde"));
    assert!(contains_from(b"abc", 3, b""));
    assert!(!contains_from(b"ab", 0, b"abc"));
}

#[test]
fn codes_read_as_haproxy_writes_them() {
    let codes = [
        (CheckCode::L4Ok, "L4OK", true),
        (CheckCode::L4Tout, "L4TOUT", false),
        (CheckCode::L4Con, "L4CON", false),
        (CheckCode::L6Ok, "L6OK", true),
        (CheckCode::L6Tout, "L6TOUT", false),
        (CheckCode::L6Rsp, "L6RSP", false),
        (CheckCode::L7Ok, "L7OK", true),
        (CheckCode::L7Tout, "L7TOUT", false),
        (CheckCode::L7Rsp, "L7RSP", false),
        (CheckCode::L7Sts, "L7STS", false),
        (CheckCode::L7Body, "L7BODY", false),
        (CheckCode::SockErr, "SOCKERR", false),
    ];
    for (code, text, passed) in codes {
        assert_eq!(code.as_str(), text);
        assert_eq!(code.to_string(), text);
        assert_eq!(code.passed(), passed);
    }
}

#[tokio::test]
async fn checks_of_proxy_protocol_servers_open_with_a_header_of_their_own() {
    // v1: `PROXY UNKNOWN`, then the request.
    let (addr, server) = server(Reply::AfterRequest(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ))
    .await;
    let kind = CheckKind::Http(get());
    let outcome = probe(
        &check(kind, addr, WAIT),
        &tls(),
        local(ProxyProtocol::V1, false),
    )
    .await;
    assert_outcome(&outcome, CheckCode::L7Ok, "L7OK: status 200 in ");
    let head = server.await.unwrap();
    assert!(
        head.starts_with("PROXY UNKNOWN\r\nGET /health HTTP/1.1\r\n"),
        "{head:?}"
    );

    // v2: the LOCAL command, no addresses; then the same sealed with a CRC32C TLV.
    let header = local_header(ProxyProtocol::V2, false).await;
    assert_eq!(&header[..12], b"\r\n\r\n\0\r\nQUIT\n");
    assert_eq!(&header[12..], &[0x20, 0x00, 0x00, 0x00]);
    let header = local_header(ProxyProtocol::V2, true).await;
    assert_eq!(&header[12..19], &[0x20, 0x00, 0x00, 0x07, 0x03, 0x00, 0x04]);
    let Ok(tern_proxy_protocol::Parsed::Complete(h)) = tern_proxy_protocol::parse(&header) else {
        panic!("{header:?}");
    };
    assert_eq!(h.len, header.len());
}

fn local(version: ProxyProtocol, crc32c: bool) -> Option<Proxied<'static>> {
    Some(Proxied {
        version,
        origin: tern_proxy_protocol::Origin::Local,
        tls: None,
        crc32c,
        custom: None,
    })
}

/// What a TCP check of a server with `proxy_protocol` sends: its PROXY header only.
async fn local_header(version: ProxyProtocol, crc32c: bool) -> Vec<u8> {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let read = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut header = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut tcp, &mut header)
            .await
            .unwrap();
        header
    });
    let proxy = local(version, crc32c);
    let outcome = probe(&check(CheckKind::Tcp, addr, WAIT), &tls(), proxy).await;
    assert_outcome(&outcome, CheckCode::L4Ok, "L4OK");
    read.await.unwrap()
}
