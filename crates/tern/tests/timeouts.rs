//! Timeouts of the real `tern` binary: `http_request` (408 for a slow or missing head),
//! `keep_alive` (idle connections closed silently, next request in time still served), `client`
//! (a request body that stops arriving) and the backend's `server` timeout (504 for a silent
//! server, but measured from the end of the upload, so a slow upload is not punished).
//!
//! The connect timeout is not tested: on loopback a connection is refused or accepted at once,
//! and no address reliably black-holes SYNs on every machine.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::Request;

/// Every expiry in these tests is configured at 1 s; this bounds how long we wait for it.
const WITHIN: Duration = Duration::from_secs(5);

fn tern_with(term: &Term, frontend: &[&str], backend: &[&str]) -> Tern {
    let mut cfg = Config::new().terms(&[term]);
    for line in frontend {
        cfg = cfg.frontend(line);
    }
    for line in backend {
        cfg = cfg.backend(line);
    }
    Tern::run(&cfg.toml())
}

#[test]
fn partial_head_then_silence_gets_408_and_close() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &["timeouts = { http_request = \"1s\" }"], &[]);
    let start = Instant::now();
    let r = raw_exchange(
        tern.addr(),
        b"GET / HTTP/1.1\r\nHost: localhost\r\n",
        WITHIN,
    );
    assert_eq!(r.status(), Some(408), "{:?}", r.text());
    assert!(r.closed, "connection still open after the 408");
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "408 before the timeout"
    );
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "request_timeouts"), 1);
    assert_eq!(c.get("frontend web", "requests"), 0);
}

#[test]
fn connection_that_sends_nothing_gets_408() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &["timeouts = { http_request = \"1s\" }"], &[]);
    let r = raw_exchange(tern.addr(), b"", WITHIN);
    assert_eq!(r.status(), Some(408), "{:?}", r.text());
    assert!(r.closed);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "request_timeouts"), 1);
}

#[test]
fn idle_keep_alive_connection_is_closed_silently() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &["timeouts = { keep_alive = \"1s\" }"], &[]);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let first = read_response(&mut s, WITHIN);
    assert_eq!(first.status(), Some(200), "{:?}", first.text());
    assert!(!first.closed);

    let idle = read_until_closed(&mut s, WITHIN);
    assert!(
        idle.closed,
        "idle keep-alive connection not closed within {WITHIN:?}"
    );
    assert!(
        idle.bytes.is_empty(),
        "bytes sent on keep-alive expiry: {:?}",
        idle.text()
    );
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "keepalive_timeouts"), 1);
    assert_eq!(c.get("frontend web", "request_timeouts"), 0);
}

#[tokio::test]
async fn next_request_within_keep_alive_is_served() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &["timeouts = { keep_alive = \"2s\" }"], &[]);
    let mut conn = connect(tern.addr(), false).await;
    for _ in 0..3 {
        assert_eq!(send(&mut conn, get_req("/")).await.status, 200);
        // A client pausing well within the keep-alive time (the scenario, not synchronisation).
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    drop(conn);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "sessions"), 1);
    assert_eq!(c.get("frontend web", "requests"), 3);
    assert_eq!(c.get("frontend web", "keepalive_timeouts"), 0);
}

#[test]
fn request_body_that_stops_arriving_hits_the_client_timeout() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &["timeouts = { client = \"1s\" }"], &[]);
    let start = Instant::now();
    let r = raw_exchange(
        tern.addr(),
        b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n0123456789",
        WITHIN,
    );
    assert!(
        r.closed,
        "connection still open {WITHIN:?} after the body stopped"
    );
    assert!(start.elapsed() < WITHIN);
    if !r.bytes.is_empty() {
        assert_eq!(r.status(), Some(408), "{:?}", r.text());
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "client_timeouts"), 1);
}

#[tokio::test]
async fn silent_server_gets_504() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &[], &["timeouts = { server = \"1s\" }"]);
    let start = Instant::now();
    let got = tokio::time::timeout(WITHIN, get(tern.addr(), false, "/?t=3000"))
        .await
        .expect("no answer within 5 s");
    assert_eq!(got.status, 504, "{}", got.text());
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "504 before the timeout"
    );
    let c = tern.stop_clean();
    assert_eq!(c.get("backend app", "server_timeouts"), 1);
    assert_eq!(c.get("frontend web", "resp_5xx"), 1);
}

#[tokio::test]
async fn slow_upload_longer_than_server_timeout_succeeds() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &[], &["timeouts = { server = \"1s\" }"]);
    let mut conn = connect_streaming(tern.addr()).await;
    let (tx, body) = chan_body(1);
    // `/` without `e=1`: the term reads the whole body before it answers, so tern waits for
    // the response head during the entire 1.6 s upload.
    let req = Request::post("/?s=10")
        .header("host", "localhost")
        .body(body)
        .unwrap();
    conn.ready().await.unwrap();
    let response = tokio::spawn(conn.send_request(req));
    for i in 0..4u8 {
        tx.send(Bytes::from(vec![b'0' + i; 100])).await.unwrap();
        // The slow client of the scenario: one chunk every 400 ms.
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    drop(tx);
    let resp = tokio::time::timeout(WITHIN, response)
        .await
        .expect("no answer")
        .unwrap()
        .unwrap();
    assert_eq!(resp.status(), 200);
    let c = tern.stop_clean();
    assert_eq!(c.get("backend app", "server_timeouts"), 0);
    assert_eq!(c.get("frontend web", "resp_2xx"), 1);
}
