//! `x=N`: the body is announced in full, exactly N bytes arrive, then the connection closes.
#![allow(clippy::unwrap_used)]

mod support;

use http_body_util::BodyExt;
use support::*;
use tern_term::fill_byte;

#[tokio::test]
async fn raw_client_gets_exactly_n_bytes_then_eof() {
    let (_term, addr) = start(1);
    let raw = raw_until_close(addr, b"GET /?s=10000&x=100 HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let (head, body) = split_head(&raw);
    assert!(head.contains("content-length: 10000"), "{head}");
    assert!(head.contains("connection: close"), "{head}");
    assert_eq!(body.len(), 100);
    assert!(body
        .iter()
        .enumerate()
        .all(|(i, &b)| b == fill_byte(i as u64)));
}

#[tokio::test]
async fn zero_bytes_and_large_cuts_are_exact() {
    let (_term, addr) = start(1);
    for (query, sent) in [
        ("x=0", 0usize),
        ("s=4m&x=3m", 3 << 20),
        ("s=1m&x=65537", 65537),
    ] {
        let req = format!("GET /?{query} HTTP/1.1\r\nHost: t\r\n\r\n");
        let raw = raw_until_close(addr, req.as_bytes()).await;
        let (head, body) = split_head(&raw);
        assert!(head.starts_with("http/1.1 200"), "{query}: {head}");
        assert_eq!(body.len(), sent, "{query}");
    }
}

#[tokio::test]
async fn hyper_client_sees_an_incomplete_body() {
    let (term, addr) = start(1);
    let resp = send(
        &mut connect(addr).await,
        request("GET", "/?s=10000&x=100", b""),
    )
    .await;
    let (parts, mut body) = resp.into_parts();
    assert_eq!(header(&parts, "content-length"), Some("10000"));
    let mut received = 0;
    let err = loop {
        match bounded(body.frame()).await {
            Some(Ok(frame)) => received += frame.into_data().unwrap().len(),
            Some(Err(e)) => break e,
            None => panic!("body ended cleanly after {received} bytes"),
        }
    };
    assert_eq!(received, 100);
    // hyper reports a body shorter than its content-length as an unexpected EOF.
    let io = std::error::Error::source(&err)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    assert_eq!(io, Some(std::io::ErrorKind::UnexpectedEof), "{err:?}");
    assert!(term.stats().bytes_sent >= 100);
}

#[tokio::test]
async fn chunked_abort_never_sends_the_last_chunk() {
    let (_term, addr) = start(1);
    let raw = raw_until_close(addr, b"GET /?s=500&x=50&c=1 HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let (head, body) = split_head(&raw);
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    assert!(!body.ends_with(b"0\r\n\r\n"));
    assert!(support::contains(body, &tern_term::FILL_PATTERN[..50]));
}

#[tokio::test]
async fn head_with_abort_announces_but_sends_nothing() {
    let (_term, addr) = start(1);
    let raw = raw_until_close(addr, b"HEAD /?s=900&x=9 HTTP/1.1\r\nHost: t\r\n\r\n").await;
    let (head, body) = split_head(&raw);
    assert!(head.contains("content-length: 900"), "{head}");
    assert!(body.is_empty());
}
