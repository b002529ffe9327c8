//! `connection_mode` (HAProxy's `option http-keep-alive|http-server-close|httpclose`) through
//! the real binary, with `tern term` servers counting the connections they accept:
//! - `close` on the frontend: every response says `Connection: close` and the client
//!   connection ends after it; the server gets `Connection: close` and one request per
//!   connection;
//! - `server-close` (frontend or backend): the client connection carries several requests, each
//!   on a new server connection;
//! - keep-alive (the default) reuses both, which shows that the counts above can fail.
//!
//! Each case runs from TOML and from a HAProxy `.cfg`.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Bound on each read; generous for a loaded CI machine (a connection tern should close is
/// caught by `closed` staying false after the response, not by this running out).
const WAIT: Duration = Duration::from_secs(5);

/// A request whose response body is the request head the server received (`h=1`).
const ECHO_HEAD: &[u8] = b"GET /?h=1 HTTP/1.1\r\nHost: test\r\n\r\n";

fn run_cfg(cfg: &str) -> Tern {
    let dir = temp_dir("conn-mode-cfg");
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg).unwrap();
    let mut proc = Proc::spawn(&["run", "-c", path.to_str().unwrap()], &dir);
    proc.wait_line("ready:");
    let binds = proc.listening();
    Tern { proc, dir, binds }
}

fn cfg(term: &Term, frontend: &str, backend: &str) -> String {
    format!(
        "global\n  nbthread 1\ndefaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
         frontend web\n  bind 127.0.0.1:0\n{frontend}  default_backend app\n\
         backend app\n{backend}  server s1 {}\n",
        term.addr
    )
}

fn toml(term: &Term, frontend: &[&str], backend: &[&str]) -> String {
    Config::new()
        .terms(&[term])
        .with_lines(frontend, backend)
        .toml()
}

/// Whether the server saw `Connection: close` on the request, from an `h=1` body.
fn server_saw_close(body: &[u8]) -> bool {
    String::from_utf8_lossy(body)
        .to_ascii_lowercase()
        .lines()
        .any(|l| l.trim() == "connection: close")
}

/// Sends `n` requests on one client connection, each waited for; returns the responses.
fn on_one_connection(addr: SocketAddr, n: usize) -> Vec<Raw> {
    let mut s = TcpStream::connect(addr).unwrap();
    (0..n)
        .map(|_| {
            s.write_all(ECHO_HEAD).unwrap();
            let got = read_response(&mut s, WAIT);
            assert!(!got.closed, "connection closed early: {}", got.text());
            got
        })
        .collect()
}

/// The `httpclose` checks: `Connection: close` both ways, the client connection closed after
/// the one response, and one server connection per request.
fn assert_closes_both_sides(tern: Tern, term: Term) {
    for _ in 0..3 {
        let got = raw_exchange(tern.addr(), ECHO_HEAD, WAIT);
        assert_eq!(got.status(), Some(200), "{}", got.text());
        assert!(got.closed, "client connection left open: {}", got.text());
        assert_eq!(
            got.head_value("connection").as_deref(),
            Some("close"),
            "{}",
            got.head_text()
        );
        assert!(server_saw_close(got.body_bytes()), "{}", got.text());
    }
    tern.stop_clean();
    let counts = term.stop_counters();
    assert_eq!(counts["requests"], 3, "{counts:?}");
    assert_eq!(counts["connections"], 3, "{counts:?}");
}

/// The `http-server-close` checks: two requests on one client connection, no `Connection:
/// close` to the client, `Connection: close` to the server, two server connections.
fn assert_closes_server_side(tern: Tern, term: Term) {
    for got in on_one_connection(tern.addr(), 2) {
        assert_eq!(got.status(), Some(200), "{}", got.text());
        assert_eq!(got.head_value("connection"), None, "{}", got.head_text());
        assert!(server_saw_close(got.body_bytes()), "{}", got.text());
    }
    tern.stop_clean();
    let counts = term.stop_counters();
    assert_eq!(counts["requests"], 2, "{counts:?}");
    assert_eq!(counts["connections"], 2, "{counts:?}");
}

#[test]
fn keep_alive_reuses_both_connections() {
    let term = Term::start("s1");
    let tern = Tern::run(&toml(&term, &[], &[]));
    for got in on_one_connection(tern.addr(), 2) {
        assert_eq!(got.status(), Some(200), "{}", got.text());
        assert!(!server_saw_close(got.body_bytes()), "{}", got.text());
    }
    tern.stop_clean();
    let counts = term.stop_counters();
    assert_eq!(counts["requests"], 2, "{counts:?}");
    assert_eq!(counts["connections"], 1, "{counts:?}");
}

#[test]
fn close_on_the_frontend_closes_both_sides() {
    let term = Term::start("s1");
    let tern = Tern::run(&toml(&term, &["connection_mode = \"close\""], &[]));
    assert_closes_both_sides(tern, term);
}

#[test]
fn httpclose_in_a_cfg_closes_both_sides() {
    let term = Term::start("s1");
    let tern = run_cfg(&cfg(&term, "  option httpclose\n", ""));
    assert_closes_both_sides(tern, term);
}

#[test]
fn close_also_ends_connections_after_tern_s_own_answers() {
    let term = Term::start("s1");
    let tern = Tern::run(&toml(&term, &["connection_mode = \"close\""], &[]));
    let got = raw_exchange(
        tern.addr(),
        b"GET /test HTTP/1.1\r\nHost: test\r\n\r\n",
        WAIT,
    );
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert!(got.closed, "{}", got.text());
    assert_eq!(got.head_value("connection").as_deref(), Some("close"));
    tern.stop_clean();
}

#[test]
fn server_close_on_the_backend_keeps_the_client() {
    let term = Term::start("s1");
    let tern = Tern::run(&toml(&term, &[], &["connection_mode = \"server-close\""]));
    assert_closes_server_side(tern, term);
}

#[test]
fn server_close_on_the_frontend_reaches_the_backend() {
    let term = Term::start("s1");
    let tern = Tern::run(&toml(&term, &["connection_mode = \"server-close\""], &[]));
    assert_closes_server_side(tern, term);
}

#[test]
fn http_server_close_in_a_cfg_keeps_the_client() {
    let term = Term::start("s1");
    let tern = run_cfg(&cfg(&term, "", "  option http-server-close\n"));
    assert_closes_server_side(tern, term);
}

#[test]
fn httpclose_on_a_cfg_backend_closes_only_server_connections() {
    let term = Term::start("s1");
    let tern = run_cfg(&cfg(&term, "", "  option httpclose\n"));
    assert_closes_server_side(tern, term);
}

#[test]
fn check_refuses_close_on_a_backend() {
    let dir = temp_dir("conn-mode-check");
    let text = Config::new().backend("connection_mode = \"close\"").toml();
    let path = dir.join("tern.toml");
    std::fs::write(&path, text).unwrap();
    let out = tern_finish(&["check", "-c", path.to_str().unwrap()], WAIT * 4);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("backend[0].connection_mode")
            && out.stderr.contains("write \"server-close\""),
        "{out:?}"
    );
}
