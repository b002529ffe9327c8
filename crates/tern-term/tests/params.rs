//! Each query parameter, HEAD, keep-alive and bad values, over plain HTTP/1.1.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::{Duration, Instant};

use http::StatusCode;
use http_body_util::BodyExt;
use support::*;
use tern_term::fill_byte;

#[tokio::test]
async fn default_page_names_the_server() {
    let (term, addr) = start(1);
    let (parts, body) = get(addr, "/anything/at/all").await;
    let name = format!("term-{}", addr.port());
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(header(&parts, "x-term-server"), Some(name.as_str()));
    assert_eq!(
        header(&parts, "content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        header(&parts, "content-length"),
        Some(body.len().to_string().as_str())
    );
    let text = String::from_utf8(body.to_vec()).unwrap();
    assert!(text.contains(&format!("server {name}<")), "{text}");
    // `/health` is not special, unknown parameters are ignored.
    let (parts, again) = get(addr, "/health?foo=bar&z").await;
    assert_eq!((parts.status, again), (StatusCode::OK, body));
    term.shutdown();
}

#[tokio::test]
async fn name_option_is_used() {
    let opts = tern_term::TermOptions {
        name: Some("alpha".into()),
        ..options(1)
    };
    let term = tern_term::start(opts).unwrap();
    let (parts, body) = get(term.local_addrs()[0], "/").await;
    assert_eq!(header(&parts, "x-term-server"), Some("alpha"));
    assert!(support::contains(&body, b"server alpha<"));
}

#[tokio::test]
async fn size_sets_length_and_fill_pattern() {
    let (_term, addr) = start(1);
    let (parts, body) = get(addr, "/?s=100k").await;
    assert_eq!(header(&parts, "content-length"), Some("102400"));
    assert_eq!(
        header(&parts, "content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(body.len(), 102_400);
    assert!(body
        .iter()
        .enumerate()
        .all(|(i, &b)| b == fill_byte(i as u64)));
    let (_, empty) = get(addr, "/?s=0").await;
    assert!(empty.is_empty());
}

#[tokio::test]
async fn sixteen_megabytes_stream_in_frames() {
    let (term, addr) = start(1);
    let mut sender = connect(addr).await;
    let resp = send(&mut sender, request("GET", "/?s=16m", b"")).await;
    let (parts, mut body) = resp.into_parts();
    assert_eq!(header(&parts, "content-length"), Some("16777216"));
    let (mut total, mut frames) = (0u64, 0);
    while let Some(frame) = bounded(body.frame()).await {
        total += frame.unwrap().into_data().unwrap().len() as u64;
        frames += 1;
    }
    assert_eq!(total, 16 << 20);
    assert!(frames > 1);
    assert_eq!(term.stats().bytes_sent, 16 << 20);
}

#[tokio::test]
async fn chunked_has_no_content_length() {
    let (_term, addr) = start(1);
    let (parts, body) = get(addr, "/?s=1000&c=1").await;
    assert_eq!(header(&parts, "transfer-encoding"), Some("chunked"));
    assert_eq!(header(&parts, "content-length"), None);
    assert_eq!(body.len(), 1000);
    let (parts, page) = get(addr, "/?c=1").await;
    assert_eq!(header(&parts, "transfer-encoding"), Some("chunked"));
    assert!(support::contains(&page, b"tern term"));
}

#[tokio::test]
async fn status_is_chosen_and_204_304_have_no_body() {
    let (_term, addr) = start(1);
    let (parts, body) = get(addr, "/?r=503").await;
    assert_eq!(parts.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(!body.is_empty());
    for code in [204u16, 304] {
        let raw = raw_until_close(
            addr,
            format!("GET /?r={code}&s=10 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await;
        let (head, rest) = split_head(&raw);
        assert!(head.starts_with(&format!("http/1.1 {code}")), "{head}");
        assert!(!head.contains("content-length"), "{head}");
        assert!(!head.contains("transfer-encoding"), "{head}");
        assert!(head.contains("x-term-server: term-"), "{head}");
        assert!(rest.is_empty());
    }
}

#[tokio::test]
async fn delay_holds_the_head() {
    let (_term, addr) = start(1);
    let t0 = Instant::now();
    let (parts, _) = get(addr, "/?t=200").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert!(t0.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn head_gets_get_headers_without_body_and_keeps_alive() {
    let (term, addr) = start(1);
    let mut sender = connect(addr).await;
    let (parts, body) = fetch(&mut sender, "HEAD", "/?s=5000").await;
    assert_eq!(header(&parts, "content-length"), Some("5000"));
    assert!(body.is_empty());
    let (parts, body) = fetch(&mut sender, "HEAD", "/").await;
    let (_, page) = fetch(&mut sender, "GET", "/").await;
    assert_eq!(
        header(&parts, "content-length"),
        Some(page.len().to_string().as_str())
    );
    assert!(body.is_empty());
    assert_eq!(term.stats().connections, 1);
    assert_eq!(term.stats().requests, 3);
}

#[tokio::test]
async fn keep_alive_serves_two_requests_on_one_connection() {
    let (term, addr) = start(1);
    let mut sender = connect(addr).await;
    let (a, _) = fetch(&mut sender, "GET", "/?s=10").await;
    let (b, body) = fetch(&mut sender, "GET", "/?s=20").await;
    assert_eq!((a.status, b.status), (StatusCode::OK, StatusCode::OK));
    assert_eq!(body.len(), 20);
    let stats = term.stats();
    assert_eq!(
        (stats.connections, stats.requests, stats.bytes_sent),
        (1, 2, 30)
    );
}

#[tokio::test]
async fn k0_closes_after_the_response() {
    let (_term, addr) = start(1);
    // No `Connection: close` from the client: the server alone decides to close.
    let raw = raw_until_close(addr, b"GET /?k=0&s=3 HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let (head, rest) = split_head(&raw);
    assert!(head.contains("connection: close"), "{head}");
    assert_eq!(rest, b"012");
}

#[tokio::test]
async fn h1_dumps_the_request_head() {
    let (_term, addr) = start(1);
    let raw = raw_until_close(
        addr,
        b"GET /p?h=1&k=0 HTTP/1.1\r\nHost: dump.test\r\nX-Zeta: z\r\nX-Alpha: a b\r\n\r\n",
    )
    .await;
    let (head, body) = split_head(&raw);
    assert!(head.contains("content-type: text/plain"), "{head}");
    assert_eq!(
        std::str::from_utf8(body).unwrap(),
        "GET /p?h=1&k=0 HTTP/1.1\nhost: dump.test\nx-zeta: z\nx-alpha: a b\n"
    );
}

#[tokio::test]
async fn bad_value_is_400_naming_the_parameter() {
    let (_term, addr) = start(1);
    for (uri, param) in [
        ("/?s=lots", "'s'"),
        ("/?r=100", "'r'"),
        ("/?x=5k", "'x'"),
        ("/?k=2", "'k'"),
    ] {
        let (parts, body) = get(addr, uri).await;
        assert_eq!(parts.status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(header(&parts, "x-term-server").is_some());
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(text.contains(param), "{uri}: {text}");
    }
}

#[tokio::test]
async fn request_body_is_drained_before_answering() {
    let (_term, addr) = start(1);
    let mut sender = connect(addr).await;
    static UPLOAD: [u8; 200_000] = [7u8; 200_000];
    let resp = send(&mut sender, request("POST", "/?s=10", &UPLOAD)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let body = bounded(resp.into_body().collect())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(body.len(), 10);
    let (parts, _) = fetch(&mut sender, "GET", "/").await;
    assert_eq!(parts.status, StatusCode::OK);
}
