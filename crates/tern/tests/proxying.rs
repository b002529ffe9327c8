//! HTTP/1.1 proxying through the real `tern` binary: keep-alive on both sides, bodies framed by
//! content-length and chunked in both directions (streamed, not buffered), `Connection: close`,
//! HEAD, `Expect: 100-continue`, hop-by-hop header removal, `X-Forwarded-*`, Host handling,
//! absolute-form targets and HTTP/1.0 clients. Regressions: duplicate Host headers are refused,
//! userinfo in an absolute-form target never reaches the Host header, and response trailers
//! cross the proxy for a client that asked for them with `TE: trailers`.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::Request;

const WAIT: Duration = Duration::from_secs(5);

/// One term `s1` behind a default tern (one plain bind, one worker).
fn term_and_tern() -> (Term, Tern) {
    let term = Term::start("s1");
    let tern = Tern::run(&Config::new().terms(&[&term]).toml());
    (term, tern)
}

/// Sends a raw request and reads until tern closes the connection (bounded).
fn raw(addr: SocketAddr, request: &str) -> Raw {
    raw_exchange(addr, request.as_bytes(), WAIT)
}

/// The lines of a `?h=1` dump, as the server received the request head.
fn dump_lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}

fn header_lines<'a>(lines: &'a [String], name: &str) -> Vec<&'a str> {
    let prefix = format!("{name}: ");
    lines
        .iter()
        .filter_map(|l| l.strip_prefix(&prefix))
        .collect()
}

/// A GET of `/?h=1` with extra headers, over plain or TLS; returns the dump the server sent.
async fn dump(addr: SocketAddr, tls: bool, extra: &[(&str, &str)]) -> Vec<String> {
    let mut req = Request::get("/?h=1").header("host", "localhost");
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let mut conn = connect(addr, tls).await;
    let got = send(&mut conn, req.body(Body::default()).unwrap()).await;
    assert_eq!(got.status, 200, "{}", got.text());
    dump_lines(&got.text())
}

#[tokio::test]
async fn keep_alive_on_both_sides_uses_one_connection_each() {
    let (term, tern) = term_and_tern();
    let mut conn = connect(tern.addr(), false).await;
    for _ in 0..3 {
        let got = send(&mut conn, get_req("/")).await;
        assert_eq!(got.status, 200);
        assert_eq!(got.header("x-term-server"), Some("s1"));
    }
    drop(conn);
    let c = tern.stop_clean();
    assert_eq!(
        c.get("frontend web", "sessions"),
        1,
        "one client connection"
    );
    assert_eq!(c.get("frontend web", "requests"), 3);
    assert_eq!(c.get("server app/s1", "requests"), 3);
    assert_eq!(
        c.get("server app/s1", "connects"),
        1,
        "one server connection"
    );
    assert_eq!(
        c.get("server app/s1", "reused"),
        2,
        "reused for requests 2 and 3"
    );
    let t = term.stop_counters();
    assert_eq!(t["connections"], 1, "term saw one connection: {t:?}");
    assert_eq!(t["requests"], 3);
}

#[tokio::test]
async fn content_length_bodies_cross_intact_both_ways() {
    let (_term, tern) = term_and_tern();
    let mut conn = connect(tern.addr(), false).await;

    // Upload 5 MiB with a content-length and get it echoed back.
    let upload = Bytes::from(garbage(5 << 20, 42));
    let req = Request::post("/?e=1")
        .header("host", "localhost")
        .body(Body::new(upload.clone()))
        .unwrap();
    let got = send(&mut conn, req).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body.len(), upload.len());
    assert!(got.body == upload, "echoed body differs from the upload");

    // The server received the upload framed by content-length, not re-chunked.
    let req = Request::post("/?h=1")
        .header("host", "localhost")
        .body(Body::new(Bytes::from(vec![b'x'; 1000])))
        .unwrap();
    let lines = dump_lines(&send(&mut conn, req).await.text());
    assert_eq!(
        header_lines(&lines, "content-length"),
        ["1000"],
        "{lines:?}"
    );
    assert!(
        header_lines(&lines, "transfer-encoding").is_empty(),
        "{lines:?}"
    );

    // Download 10 MiB with a content-length on the same connection.
    let got = send(&mut conn, get_req("/?s=10m")).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.header("content-length"), Some("10485760"));
    assert_eq!(got.body.len(), 10 << 20);
    assert_eq!(
        fill_mismatch(&got.body),
        None,
        "download corrupted at this offset"
    );
    drop(conn);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "resp_2xx"), 3);
}

#[tokio::test]
async fn chunked_upload_is_streamed_not_buffered() {
    let (_term, tern) = term_and_tern();
    let mut conn = connect_streaming(tern.addr()).await;
    let (tx, body) = chan_body(4);
    let req = Request::post("/?e=1")
        .header("host", "localhost")
        .body(body)
        .unwrap();
    let first = Bytes::from_static(b"first chunk of a chunked upload;");
    tx.send(first.clone()).await.unwrap();
    conn.ready().await.unwrap();

    // The upload is still open (tx alive), yet the response head and the first echoed chunk
    // arrive: tern forwards the body as it comes.
    let resp = tokio::time::timeout(WAIT, conn.send_request(req))
        .await
        .expect("response head while the upload is still open")
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let mut echoed = Vec::new();
    while echoed.len() < first.len() {
        let frame = tokio::time::timeout(WAIT, body.frame())
            .await
            .expect("first chunk echoed before the upload finished")
            .expect("body ended early")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            echoed.extend_from_slice(&data);
        }
    }
    assert_eq!(echoed, first);

    // Finish the upload; everything comes back.
    let mut expected = first.to_vec();
    for i in 0..20u8 {
        let chunk = Bytes::from(vec![b'a' + i; 1000 + usize::from(i)]);
        expected.extend_from_slice(&chunk);
        tx.send(chunk).await.unwrap();
    }
    drop(tx);
    let rest = tokio::time::timeout(WAIT, body.collect())
        .await
        .expect("echo finished")
        .unwrap();
    echoed.extend_from_slice(&rest.to_bytes());
    assert_eq!(echoed.len(), expected.len());
    assert!(echoed == expected, "echoed body differs from the upload");

    // The server received the upload chunked.
    let (tx, body) = chan_body(1);
    let req = Request::post("/?h=1")
        .header("host", "localhost")
        .body(body)
        .unwrap();
    tx.send(Bytes::from_static(b"some bytes")).await.unwrap();
    drop(tx);
    let resp = tokio::time::timeout(WAIT, conn.send_request(req))
        .await
        .unwrap()
        .unwrap();
    let text = resp.into_body().collect().await.unwrap().to_bytes();
    let lines = dump_lines(&String::from_utf8_lossy(&text));
    assert_eq!(
        header_lines(&lines, "transfer-encoding"),
        ["chunked"],
        "{lines:?}"
    );
    assert!(
        header_lines(&lines, "content-length").is_empty(),
        "{lines:?}"
    );
    drop(conn);
    tern.stop_clean();
}

#[tokio::test]
async fn chunked_download_arrives_complete() {
    let (_term, tern) = term_and_tern();
    let got = get(tern.addr(), false, "/?s=3m&c=1").await;
    assert_eq!(got.status, 200);
    assert_eq!(
        got.header("content-length"),
        None,
        "chunked, not content-length"
    );
    assert_eq!(got.body.len(), 3 << 20);
    assert_eq!(
        fill_mismatch(&got.body),
        None,
        "download corrupted at this offset"
    );
    tern.stop_clean();
}

#[test]
fn client_connection_close_keeps_the_server_connection() {
    let (_term, tern) = term_and_tern();
    let first = raw(
        tern.addr(),
        "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(first.status(), Some(200), "{}", first.text());
    assert!(
        first.closed,
        "tern closes the client connection after the response"
    );
    assert!(first
        .head_text()
        .to_ascii_lowercase()
        .contains("connection: close"));

    // The next client is served on the same, pooled server connection.
    let second = block_on(get(tern.addr(), false, "/"));
    assert_eq!(second.status, 200);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "sessions"), 2);
    assert_eq!(c.get("server app/s1", "connects"), 1);
    assert_eq!(c.get("server app/s1", "reused"), 1);
}

#[test]
fn head_returns_headers_and_no_body() {
    let (_term, tern) = term_and_tern();
    let r = raw(
        tern.addr(),
        "HEAD /?s=1000 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    assert!(r.closed);
    assert_eq!(r.head_value("content-length").as_deref(), Some("1000"));
    assert!(
        r.body_bytes().is_empty(),
        "HEAD response carried a body: {:?}",
        r.text()
    );
    tern.stop_clean();
}

/// Sends a POST of "hello" to `path` with `Expect: 100-continue`: the head first, then, once
/// the `100 Continue` arrived, the body. Returns the final response.
fn post_with_expect(addr: SocketAddr, path: &str) -> Raw {
    const CONTINUE: &str = "HTTP/1.1 100 Continue\r\n\r\n";
    let mut s = TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\
         Expect: 100-continue\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let (mut bytes, found) = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
    let interim = String::from_utf8_lossy(&bytes).into_owned();
    assert!(found, "no interim response; got {interim:?}");
    assert!(interim.starts_with(CONTINUE), "got {interim:?}");

    s.write_all(b"hello").unwrap();
    let tail = read_until_closed(&mut s, WAIT);
    bytes.extend_from_slice(&tail.bytes);
    Raw {
        bytes: bytes[CONTINUE.len()..].to_vec(),
        closed: tail.closed,
    }
}

#[test]
fn expect_100_continue_gets_continue_then_the_response() {
    let (_term, tern) = term_and_tern();
    // A server that reads the whole body before answering.
    let r = post_with_expect(tern.addr(), "/?s=10");
    assert_eq!(r.status(), Some(200), "{}", r.text());
    assert!(r.closed);
    assert_eq!(r.body_bytes(), b"0123456789");

    // A server that streams the body back (its final head may come before the body is sent).
    let r = post_with_expect(tern.addr(), "/?e=1");
    assert_eq!(r.status(), Some(200), "{}", r.text());
    assert!(r.closed);
    let body = String::from_utf8_lossy(r.body_bytes()).into_owned();
    assert!(body.contains("hello"), "echo missing: {body:?}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "resp_2xx"), 2);
}

#[test]
fn hop_by_hop_headers_are_removed_and_end_to_end_kept() {
    let (_term, tern) = term_and_tern();
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(
        b"GET /?h=1 HTTP/1.1\r\nHost: localhost\r\nConnection: x-foo\r\nx-foo: 1\r\n\
          Keep-Alive: timeout=5\r\nTE: gzip\r\nUpgrade: websocket\r\nx-end: 1\r\n\r\n",
    )
    .unwrap();
    let r = read_response(&mut s, WAIT);
    assert_eq!(r.status(), Some(200), "{}", r.text());
    let lines = dump_lines(&String::from_utf8_lossy(r.body_bytes()));
    for name in ["connection", "x-foo", "keep-alive", "te", "upgrade"] {
        assert!(
            header_lines(&lines, name).is_empty(),
            "{name} was forwarded: {lines:?}"
        );
    }
    assert_eq!(header_lines(&lines, "x-end"), ["1"], "{lines:?}");
    assert_eq!(header_lines(&lines, "host"), ["localhost"], "{lines:?}");
    drop(s);
    tern.stop_clean();
}

#[test]
fn x_forwarded_headers_are_added_per_bind() {
    let term = Term::start("s1");
    let dir = temp_dir("xff");
    let cert = write_cert(&dir, "ecdsa", tern_tls::KeyKind::EcdsaP256);
    let cfg = Config::new()
        .terms(&[&term])
        .binds(&[
            "{ address = \"127.0.0.1:0\", tls = false }",
            "\"127.0.0.1:0\"",
        ])
        .tls(&[&format!("{cert:?}")]);
    let tern = Tern::run_in(dir, &cfg.toml());
    let (plain, tls) = (tern.binds[0].1, tern.binds[1].1);
    assert!(!tern.is_tls(0) && tern.is_tls(1));

    let lines = block_on(dump(plain, false, &[]));
    assert_eq!(
        header_lines(&lines, "x-forwarded-for"),
        ["127.0.0.1"],
        "{lines:?}"
    );
    assert_eq!(
        header_lines(&lines, "x-forwarded-proto"),
        ["http"],
        "{lines:?}"
    );

    let lines = block_on(dump(tls, true, &[]));
    assert_eq!(
        header_lines(&lines, "x-forwarded-for"),
        ["127.0.0.1"],
        "{lines:?}"
    );
    assert_eq!(
        header_lines(&lines, "x-forwarded-proto"),
        ["https"],
        "{lines:?}"
    );

    // An existing X-Forwarded-For gets the client appended.
    let lines = block_on(dump(plain, false, &[("x-forwarded-for", "10.1.2.3")]));
    assert_eq!(
        header_lines(&lines, "x-forwarded-for"),
        ["10.1.2.3, 127.0.0.1"],
        "{lines:?}"
    );
    tern.stop_clean();
}

#[test]
fn x_forwarded_headers_absent_when_disabled() {
    let term = Term::start("s1");
    let cfg = Config::new()
        .terms(&[&term])
        .frontend("x_forwarded_for = false")
        .frontend("x_forwarded_proto = false");
    let tern = Tern::run(&cfg.toml());
    let lines = block_on(dump(tern.addr(), false, &[]));
    assert!(
        header_lines(&lines, "x-forwarded-for").is_empty(),
        "{lines:?}"
    );
    assert!(
        header_lines(&lines, "x-forwarded-proto").is_empty(),
        "{lines:?}"
    );
    tern.stop_clean();
}

#[test]
fn host_header_is_preserved_exactly() {
    let (_term, tern) = term_and_tern();
    let r = raw(
        tern.addr(),
        "GET /?h=1 HTTP/1.1\r\nHost: WWW.Example.COM:8080\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    let lines = dump_lines(&String::from_utf8_lossy(r.body_bytes()));
    assert_eq!(lines[0], "GET /?h=1 HTTP/1.1");
    assert_eq!(
        header_lines(&lines, "host"),
        ["WWW.Example.COM:8080"],
        "{lines:?}"
    );
    tern.stop_clean();
}

#[test]
fn absolute_form_target_becomes_origin_form_with_its_host() {
    let (_term, tern) = term_and_tern();
    let r = raw(
        tern.addr(),
        "GET http://example.com:81/p?h=1 HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    let lines = dump_lines(&String::from_utf8_lossy(r.body_bytes()));
    assert_eq!(lines[0], "GET /p?h=1 HTTP/1.1", "{lines:?}");
    assert_eq!(
        header_lines(&lines, "host"),
        ["example.com:81"],
        "{lines:?}"
    );
    tern.stop_clean();
}

#[test]
fn http_1_0_request_is_served_and_closed() {
    let (_term, tern) = term_and_tern();
    let r = raw(
        tern.addr(),
        "GET /?s=100 HTTP/1.0\r\nHost: localhost\r\n\r\n",
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    assert!(
        r.closed,
        "an HTTP/1.0 request without keep-alive ends the connection"
    );
    assert_eq!(r.body_bytes().len(), 100, "{:?}", r.text());
    assert_eq!(fill_mismatch(r.body_bytes()), None, "{:?}", r.text());
    tern.stop_clean();
}

#[test]
fn http_1_0_client_gets_an_unchunked_body_from_a_chunked_server() {
    let (_term, tern) = term_and_tern();
    let r = raw(
        tern.addr(),
        "GET /?s=100&c=1 HTTP/1.0\r\nHost: localhost\r\n\r\n",
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    assert!(r.closed);
    let head = r.head_text().to_ascii_lowercase();
    assert!(
        !head.contains("transfer-encoding"),
        "chunked sent to an HTTP/1.0 client: {head}"
    );
    assert_eq!(r.body_bytes().len(), 100, "{:?}", r.text());
    assert_eq!(fill_mismatch(r.body_bytes()), None, "{:?}", r.text());
    tern.stop_clean();
}

#[test]
fn duplicate_host_headers_get_400() {
    let (term, tern) = term_and_tern();
    let r = raw(
        tern.addr(),
        "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
    );
    assert_eq!(r.status(), Some(400), "{:?}", r.text());
    assert!(r.closed, "connection still open after the 400");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "bad_requests"), 1);
    let t = term.stop_counters();
    assert_eq!(t["requests"], 0, "the server saw the request: {t:?}");
}

#[test]
fn absolute_form_with_userinfo_does_not_leak_credentials_into_host() {
    let (_term, tern) = term_and_tern();
    let r = raw(
        tern.addr(),
        "GET http://user:pw@example.test:8080/p?h=1 HTTP/1.1\r\nHost: example.test:8080\r\n\
         Connection: close\r\n\r\n",
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    let lines = dump_lines(&String::from_utf8_lossy(r.body_bytes()));
    assert_eq!(lines[0], "GET /p?h=1 HTTP/1.1", "{lines:?}");
    assert_eq!(
        header_lines(&lines, "host"),
        ["example.test:8080"],
        "{lines:?}"
    );
    assert!(
        !r.text().contains("user:pw"),
        "credentials reached the server: {lines:?}"
    );
    tern.stop_clean();
}

#[test]
fn trailers_cross_the_proxy() {
    // A server that sends a chunked response with a trailer, but only to a request that
    // carries `TE: trailers`; it returns the request head it received.
    let (addr, backend) = raw_backend(Duration::from_secs(20), |mut s| {
        let (head, _) = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
        let head = String::from_utf8_lossy(&head).into_owned();
        let wants_trailers = head
            .to_ascii_lowercase()
            .lines()
            .any(|l| l.trim_end() == "te: trailers");
        let response: &[u8] = if wants_trailers {
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-checksum\r\n\r\n\
              5\r\nhello\r\n0\r\nx-checksum: abc\r\n\r\n"
        } else {
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nno te"
        };
        let _ = s.write_all(response);
        // Keep the connection until tern closes it (bounded), like a keep-alive server.
        let _ = read_until_closed(&mut s, WAIT);
        head
    });
    let tern = Tern::run(&Config::new().server("s1", &addr.to_string(), 1).toml());

    let r = raw(
        tern.addr(),
        "GET / HTTP/1.1\r\nHost: localhost\r\nTE: trailers\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    let body = String::from_utf8_lossy(r.body_bytes()).to_ascii_lowercase();
    assert!(
        body.contains("hello") && body.contains("0\r\nx-checksum: abc\r\n\r\n"),
        "trailer missing from the response: {:?}",
        r.text()
    );
    tern.stop_clean();
    let head = backend.join().unwrap().expect("tern never connected");
    assert!(
        head.to_ascii_lowercase()
            .lines()
            .any(|l| l.trim_end() == "te: trailers"),
        "the server did not see `te: trailers`: {head:?}"
    );
}

/// A head that arrives in pieces with pauses waits between them without its read buffer
/// (`http1/conn.rs` parks up to 2 KiB): each piece is kept, the request is served once it is
/// whole, with the server seeing the head the client sent, and the connection stays usable.
#[test]
fn a_head_in_pieces_with_pauses_is_served_whole() {
    let (_term, tern) = term_and_tern();
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.set_nodelay(true).unwrap();
    let long = "v".repeat(1500);
    for round in 0..2 {
        let head = format!(
            "GET /?h=1 HTTP/1.1\r\nHost: pieces\r\nX-Round: {round}\r\nX-Long: {long}\r\n\r\n"
        );
        // The pieces straddle the 2 KiB a waiting head may keep: parked, then not.
        for piece in head.as_bytes().chunks(700) {
            s.write_all(piece).unwrap();
            std::thread::sleep(Duration::from_millis(60));
        }
        let got = read_response(&mut s, WAIT);
        assert!(!got.closed, "round {round}: {}", got.text());
        assert_eq!(got.status(), Some(200), "{}", got.text());
        let text = got.text();
        let dump = dump_lines(text.split_once("\r\n\r\n").map_or("", |(_, body)| body));
        assert_eq!(header_lines(&dump, "x-round"), [round.to_string().as_str()]);
        assert_eq!(header_lines(&dump, "x-long"), [long.as_str()]);
    }
}
