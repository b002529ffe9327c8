//! `e=1`: the request body comes back as it arrives, so streaming both ways can be tested.
#![allow(clippy::unwrap_used)]

mod support;

use http::StatusCode;
use http_body_util::BodyExt;
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[tokio::test]
async fn first_chunk_is_echoed_before_the_upload_finishes() {
    let (_term, addr) = start(1);
    let mut stream = bounded(TcpStream::connect(addr)).await.unwrap();
    stream
        .write_all(
            b"POST /?e=1 HTTP/1.1\r\nHost: t\r\nContent-Type: text/x-probe\r\n\
              Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        )
        .await
        .unwrap();
    let mut buf = Vec::new();
    // The upload is still open: the echo of the first chunk must already arrive.
    read_until(&mut stream, &mut buf, b"hello").await;
    let (head, _) = split_head(&buf);
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    assert!(head.contains("content-type: text/x-probe"), "{head}");
    stream.write_all(b"6\r\n world\r\n0\r\n\r\n").await.unwrap();
    read_until(&mut stream, &mut buf, b"\r\n0\r\n\r\n").await;
    let (_, body) = split_head(&buf);
    assert_eq!(body, b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
}

#[tokio::test]
async fn sized_upload_is_echoed_and_connection_reused() {
    let (term, addr) = start(1);
    let mut sender = connect(addr).await;
    let resp = send(&mut sender, request("PUT", "/up?e=1", b"some bytes")).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["transfer-encoding"], "chunked");
    let body = bounded(resp.into_body().collect())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(&body[..], b"some bytes");
    let (parts, empty) = fetch(&mut sender, "GET", "/?e=1").await;
    assert_eq!(parts.status, StatusCode::OK);
    assert!(empty.is_empty());
    assert_eq!(term.stats().bytes_sent, 10);
}
