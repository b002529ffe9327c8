//! Timeouts of the real `tern` binary: `http_request` (408 for a slow or missing head),
//! `keep_alive` (idle connections closed silently, next request in time still served), `client`
//! (a request body that stops arriving) and the backend's `server` timeout (504 for a silent
//! server, but measured from the end of the upload, so a slow upload is not punished).
//! Regressions: the server timeout also covers a server that stops reading an upload, an early
//! response does not start the request/keep-alive timers while the upload continues, and a
//! client that stops reading a response is counted once, as a client timeout.
//!
//! The connect timeout is not tested: on loopback a connection is refused or accepted at once,
//! and no address reliably black-holes SYNs on every machine.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::Request;

/// Every expiry in these tests is configured at 1 s; this bounds how long we wait for it.
const WITHIN: Duration = Duration::from_secs(5);

fn tern_with(term: &Term, frontend: &[&str], backend: &[&str]) -> Tern {
    Tern::run(
        &Config::new()
            .terms(&[term])
            .with_lines(frontend, backend)
            .toml(),
    )
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
fn a_stop_closes_a_connection_that_sent_nothing_at_once() {
    // A plain connection waits for its first bytes before its session is built
    // (listen/first_bytes.rs): a stop still reaches it, closing it without a word.
    let term = Term::start("s1");
    let tern = tern_with(&term, &["timeouts = { http_request = \"60s\" }"], &[]);
    let mut idle = TcpStream::connect(tern.addr()).unwrap();
    // A request answered on another connection: the worker is up and has taken the idle one.
    let r = raw_exchange(
        tern.addr(),
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        WITHIN,
    );
    assert_eq!(r.status(), Some(200), "{:?}", r.text());
    tern.proc.signal("TERM");
    let r = read_until_closed(&mut idle, WITHIN);
    assert!(r.closed && r.bytes.is_empty(), "{:?}", r.text());
    let (status, _) = tern.proc.stop();
    assert!(status.success());
}

#[test]
fn a_head_sent_after_a_pause_is_served() {
    // The first bytes end the wait before the session exists; the rest come to the session.
    let term = Term::start("s1");
    let tern = tern_with(&term, &[], &[]);
    let mut c = TcpStream::connect(tern.addr()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    c.write_all(b"GET / HTTP/1.1\r\nHo").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    c.write_all(b"st: x\r\nConnection: close\r\n\r\n").unwrap();
    let r = read_until_closed(&mut c, WITHIN);
    assert_eq!(r.status(), Some(200), "{:?}", r.text());
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "requests"), 1);
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

/// A tern with one raw backend server `s1` at `addr`.
fn tern_raw(addr: std::net::SocketAddr, frontend: &[&str], backend: &[&str]) -> Tern {
    let cfg = Config::new().server("s1", &addr.to_string(), 1);
    Tern::run(&cfg.with_lines(frontend, backend).toml())
}

#[test]
fn server_timeout_fires_while_the_server_stops_reading_an_upload() {
    // The server reads the request head, then neither reads nor answers; it holds the socket
    // until the test releases it (at most 15 s).
    let (release, held) = mpsc::channel::<()>();
    let (addr, backend) = raw_backend(Duration::from_secs(20), move |mut s| {
        let (head, found) = read_until_contains(&mut s, b"\r\n\r\n", Duration::from_secs(10));
        let _ = held.recv_timeout(Duration::from_secs(15));
        (found, head)
    });
    let tern = tern_raw(
        addr,
        &["timeouts = { client = \"30s\" }"],
        &["timeouts = { server = \"1s\" }"],
    );

    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 67108864\r\n\r\n")
        .unwrap();
    // The 64 MiB upload goes on in its own thread; it stops at the first write error (tern
    // closed, or the test shut the socket down).
    let mut w = s.try_clone().unwrap();
    let uploader = std::thread::spawn(move || {
        let chunk = vec![b'u'; 64 * 1024];
        for _ in 0..1024 {
            if w.write_all(&chunk).is_err() {
                break;
            }
        }
    });

    let (bytes, found) = read_until_contains(&mut s, b"\r\n\r\n", Duration::from_secs(8));
    let r = Raw {
        bytes,
        closed: !found,
    };
    assert!(
        found,
        "no response within 8 s while the server stopped reading the upload; got {:?}",
        r.text()
    );
    assert_eq!(r.status(), Some(504), "{:?}", r.text());
    let _ = s.shutdown(Shutdown::Both);
    uploader.join().unwrap();
    drop(release);

    let c = tern.stop_clean();
    assert_eq!(c.get("backend app", "server_timeouts"), 1);
    let (saw_head, head) = backend.join().unwrap().expect("tern never connected");
    assert!(saw_head, "backend got no request head: {head:?}");
}

#[test]
fn early_response_does_not_start_the_idle_timers_while_the_upload_continues() {
    const BODY: usize = 20_000;
    // The server answers as soon as it has the head, then drains the body and counts it.
    let (addr, backend) = raw_backend(Duration::from_secs(20), |mut s| {
        let (head, found) = read_until_contains(&mut s, b"\r\n\r\n", Duration::from_secs(10));
        if !found {
            return 0;
        }
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            .unwrap();
        let head_len = head.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let mut body = head.len() - head_len;
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut buf = [0u8; 65536];
        while body < BODY {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            s.set_read_timeout(Some(left)).unwrap();
            match s.read(&mut buf) {
                Ok(n) if n > 0 => body += n,
                _ => break,
            }
        }
        body
    });
    let tern = tern_raw(
        addr,
        &["timeouts = { client = \"5s\", http_request = \"1s\", keep_alive = \"1s\" }"],
        &[],
    );

    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.set_nodelay(true).unwrap();
    // Everything the client receives, until tern closes or 3 s after the upload ended.
    let mut reader = s.try_clone().unwrap();
    let (upload_done, upload_done_rx) = mpsc::channel::<Instant>();
    let read_thread = std::thread::spawn(move || {
        let hard_stop = Instant::now() + Duration::from_secs(20);
        let mut stop_at = hard_stop;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        reader
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        loop {
            if let Ok(done) = upload_done_rx.try_recv() {
                stop_at = (done + Duration::from_secs(3)).min(hard_stop);
            }
            if Instant::now() >= stop_at {
                break;
            }
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
        got
    });

    // The slow client of the scenario: 20 pieces of 1000 bytes, one every 200 ms (about 4 s,
    // longer than http_request and keep_alive, each gap far shorter than client).
    let _ = s.write_all(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 20000\r\n\r\n");
    for i in 0..BODY / 1000 {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(200));
        }
        if s.write_all(&[b'a' + (i % 26) as u8; 1000]).is_err() {
            break;
        }
    }
    // The reader may already have stopped (tern closed the connection).
    let _ = upload_done.send(Instant::now());
    let got = read_thread.join().unwrap();
    let text = String::from_utf8_lossy(&got).into_owned();
    drop(s);

    assert_eq!(
        text.matches("HTTP/1.").count(),
        1,
        "expected exactly one response; the client got {text:?}"
    );
    assert!(!text.contains("408"), "the client got a 408: {text:?}");
    assert!(text.starts_with("HTTP/1.1 200"), "{text:?}");
    let received = backend.join().unwrap().expect("tern never connected");
    assert_eq!(received, BODY, "the server did not receive the whole body");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "request_timeouts"), 0);
}

#[test]
fn client_write_timeout_is_counted_once() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &["timeouts = { client = \"1s\" }"], &[]);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    // A 256 MiB response to a client that never reads it.
    s.write_all(b"GET /?s=256m HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();

    // Without reading, detect tern's close: once tern closed the connection, writing a
    // further (pipelined) request fails with a reset / broken pipe. Bounded poll.
    let start = Instant::now();
    let deadline = start + Duration::from_secs(10);
    let mut closed = false;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        if s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .is_err()
        {
            closed = true;
            break;
        }
    }
    assert!(
        closed,
        "tern kept the connection of a client that reads nothing open for 10 s"
    );
    drop(s);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "client_timeouts"), 1, "{:?}", c.0);
    assert_eq!(c.get("frontend web", "client_aborts"), 0, "{:?}", c.0);
}
