//! Bad input to the real `tern` binary: malformed request lines, heads over the size and count
//! limits, no reachable server, a server that cuts its response short, garbage and plain HTTP on
//! a TLS port, binary garbage on a plain port. Each is answered or closed cleanly, counted, and
//! tern keeps serving the next client without panicking.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;

const WAIT: Duration = Duration::from_secs(5);

fn tern_with(term: &Term, frontend: &[&str]) -> Tern {
    Tern::run(
        &Config::new()
            .terms(&[term])
            .with_lines(frontend, &[])
            .toml(),
    )
}

/// tern still proxies a normal request on `addr`.
fn still_serves(addr: SocketAddr, tls: bool) {
    let got = block_on(get(addr, tls, "/"));
    assert_eq!(got.status, 200, "{}", got.text());
}

#[test]
fn malformed_request_line_gets_400_and_close() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &[]);
    let r = raw_exchange(tern.addr(), b"THIS IS NOT HTTP\r\n\r\n", WAIT);
    assert_eq!(r.status(), Some(400), "{:?}", r.text());
    assert!(r.closed, "connection still open after the 400");
    still_serves(tern.addr(), false);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "bad_requests"), 1);
    assert_eq!(
        c.get("frontend web", "requests"),
        1,
        "only the good request reached a stream"
    );
}

#[test]
fn head_over_max_head_size_gets_431_and_close() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &["limits = { max_head_size = \"8k\" }"]);
    let request = format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\nx-big: {}\r\n\r\n",
        "a".repeat(10_000)
    );
    let r = raw_exchange(tern.addr(), request.as_bytes(), WAIT);
    assert_eq!(r.status(), Some(431), "{:?}", r.text());
    assert!(r.closed);
    // A head under the limit is still fine.
    let request = format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\nx-big: {}\r\nConnection: close\r\n\r\n",
        "a".repeat(6_000)
    );
    assert_eq!(
        raw_exchange(tern.addr(), request.as_bytes(), WAIT).status(),
        Some(200)
    );
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "head_too_large"), 1);
}

#[test]
fn too_many_headers_get_431() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &["limits = { max_headers = 10 }"]);
    let mut request = String::from("GET / HTTP/1.1\r\nHost: localhost\r\n");
    for i in 0..20 {
        request.push_str(&format!("x-h{i}: {i}\r\n"));
    }
    request.push_str("\r\n");
    let r = raw_exchange(tern.addr(), request.as_bytes(), WAIT);
    assert_eq!(r.status(), Some(431), "{:?}", r.text());
    assert!(r.closed);
    // Ten headers are allowed.
    let mut request = String::from("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for i in 0..8 {
        request.push_str(&format!("x-h{i}: {i}\r\n"));
    }
    request.push_str("\r\n");
    assert_eq!(
        raw_exchange(tern.addr(), request.as_bytes(), WAIT).status(),
        Some(200)
    );
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "head_too_large"), 1);
}

#[test]
fn no_reachable_server_gets_503_at_once() {
    // Config::new() without servers: the only server is on a closed port.
    let tern = Tern::run(&Config::new().toml());
    let start = Instant::now();
    let got = block_on(async { tokio::time::timeout(WAIT, get(tern.addr(), false, "/")).await })
        .expect("503 within 5 s, not a hang");
    assert_eq!(got.status, 503, "{}", got.text());
    assert!(start.elapsed() < WAIT);
    let c = tern.stop_clean();
    assert_eq!(c.get("backend app", "no_server"), 1);
    // The first attempt and the default 3 retries, all on the only server.
    assert_eq!(c.get("backend app", "connect_errors"), 4);
    assert_eq!(c.get("backend app", "retries"), 3);
    assert_eq!(c.get("frontend web", "resp_5xx"), 1);
}

#[test]
fn server_cutting_its_response_closes_the_client_connection() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &[]);

    // hyper client: the head arrives with content-length 100000, then the body fails.
    let outcome = block_on(async {
        let mut conn = connect(tern.addr(), false).await;
        conn.ready().await.unwrap();
        let resp = conn
            .send_request(get_req("/?s=100000&x=5000"))
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-length"], "100000");
        tokio::time::timeout(WAIT, resp.into_body().collect()).await
    });
    assert!(
        outcome
            .expect("the client connection ended within 5 s")
            .is_err(),
        "full body received"
    );

    // Raw socket: EOF before content-length bytes.
    let r = raw_exchange(
        tern.addr(),
        b"GET /?s=100000&x=5000 HTTP/1.1\r\nHost: localhost\r\n\r\n",
        WAIT,
    );
    assert_eq!(r.status(), Some(200), "{:?}", r.head_text());
    assert!(
        r.closed,
        "connection still open after the server cut its response"
    );
    let got = r.body_bytes().len();
    assert!((5000..100_000).contains(&got), "got {got} body bytes");
    still_serves(tern.addr(), false);
    let c = tern.stop_clean();
    assert_eq!(c.get("backend app", "aborted_responses"), 2);
}

#[test]
fn garbage_and_plain_http_on_a_tls_port_fail_the_handshake() {
    let term = Term::start("s1");
    let dir = temp_dir("badtls");
    let cert = write_cert(&dir, "ecdsa", tern_tls::KeyKind::EcdsaP256);
    let cfg = Config::new().terms(&[&term]).tls(&[&format!("{cert:?}")]);
    let tern = Tern::run_in(dir, &cfg.toml());
    assert!(tern.is_tls(0));

    let r = raw_exchange(tern.addr(), &garbage(4096, 7), WAIT);
    assert!(r.closed, "garbage on a TLS port: connection still open");
    let r = raw_exchange(
        tern.addr(),
        b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
        WAIT,
    );
    assert!(r.closed, "plain HTTP on a TLS port: connection still open");
    assert!(
        !r.text().contains("HTTP/1.1 200"),
        "plain HTTP was served on a TLS port"
    );

    still_serves(tern.addr(), true);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_failures"), 2);
    assert_eq!(c.get("frontend web", "tls_full"), 1);
    assert_eq!(c.get("frontend web", "requests"), 1);
}

#[test]
fn binary_garbage_on_a_plain_port_gets_400_or_close() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &[]);
    for seed in [1, 2, 3] {
        let r = raw_exchange(tern.addr(), &garbage(4096, seed), WAIT);
        assert!(r.closed, "garbage (seed {seed}): connection still open");
        if !r.bytes.is_empty() {
            assert_eq!(
                r.status(),
                Some(400),
                "garbage (seed {seed}): {:?}",
                r.text()
            );
        }
    }
    still_serves(tern.addr(), false);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "requests"), 1);
    assert_eq!(c.get("frontend web", "resp_2xx"), 1);
}

#[test]
fn unknown_transfer_coding_gets_501_and_never_reaches_the_server() {
    let term = Term::start("s1");
    let tern = tern_with(&term, &[]);
    // hyper would decode the chunked framing and the gzip coding would be lost on the way.
    let r = raw_exchange(
        tern.addr(),
        b"POST /?h=1 HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
          5\r\nhello\r\n0\r\n\r\n",
        WAIT,
    );
    assert_eq!(r.status(), Some(501), "{:?}", r.text());
    assert!(r.closed, "connection still open after the 501");
    still_serves(tern.addr(), false);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "bad_requests"), 1);
    assert_eq!(term.stop_counters()["requests"], 1, "only the good request");
}
