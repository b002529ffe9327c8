//! A connection whose task panics costs that connection only: through the real binary, a
//! request that panics the task serving it (HTTP/1.1 connection, HTTP/2 stream) is closed,
//! the panic is logged at error level with its message and counted in the frontend's `panics`,
//! and the worker (there is one) goes on serving the connections it already had and new ones.
//!
//! The panic comes from a hook that exists in debug builds only (`TERN_DEBUG_PANIC_TARGET`,
//! `crates/tern-proxy/src/panics.rs`), so these tests run only when the test, and with it the
//! `tern` binary it runs, is a debug build; in a release build (`cargo test --release`) the
//! last test checks instead that the variable does nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);
const PANIC_PATH: &str = "/__panic_here";

fn tern_with_hook(term: &Term, frontend: &[&str]) -> Tern {
    let mut cfg = Config::new().terms(&[term]);
    for line in frontend {
        cfg = cfg.frontend(line);
    }
    Tern::run_env(
        temp_dir("panics"),
        &cfg.toml(),
        &[("TERN_DEBUG_PANIC_TARGET", PANIC_PATH)],
    )
}

#[cfg(debug_assertions)]
fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n")
}

#[cfg(debug_assertions)]
#[test]
fn a_panicking_connection_is_closed_counted_and_the_worker_goes_on() {
    use std::io::Write;
    use std::net::TcpStream;

    let term = Term::start("s1");
    let tern = tern_with_hook(&term, &[]);
    let addr = tern.addr();

    // A keep-alive connection the worker already serves, before the panic.
    let mut before = TcpStream::connect(addr).unwrap();
    before.write_all(get("/").as_bytes()).unwrap();
    assert_eq!(read_response(&mut before, WAIT).status(), Some(200));

    // The panicking request gets no response: its connection is closed.
    let panicked = raw_exchange(addr, get(PANIC_PATH).as_bytes(), WAIT);
    assert!(
        panicked.closed,
        "the connection of the panic was not closed"
    );
    assert!(panicked.bytes.is_empty(), "{}", panicked.text());

    // The same worker still serves the connection it had, and new ones.
    before.write_all(get("/").as_bytes()).unwrap();
    assert_eq!(read_response(&mut before, WAIT).status(), Some(200));
    for _ in 0..3 {
        let r = raw_exchange(
            addr,
            b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
            WAIT,
        );
        assert_eq!(r.status(), Some(200), "{}", r.text());
    }
    drop(before);

    let stderr = tern.proc.stderr_text();
    assert!(
        stderr.contains("a task panicked") && stderr.contains("TERN_DEBUG_PANIC_TARGET"),
        "no log line for the panic: {stderr}"
    );
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "panics"), 1);
    assert_eq!(c.get("frontend web", "requests"), 6);
}

#[cfg(debug_assertions)]
#[test]
fn a_panicking_http2_stream_ends_that_stream_only() {
    use std::process::{Command, Stdio};

    if !have("nghttp") {
        eprintln!("skipped: nghttp is not installed");
        return;
    }
    let term = Term::start("s1");
    let tern = tern_with_hook(&term, &["http2 = { cleartext = true }"]);
    let addr = tern.addr();
    // One connection, three streams at once: the middle one panics.
    let url = |path: &str| format!("http://{addr}{path}");
    let out = Command::new("timeout")
        .args(["20", "nghttp", "-nv"])
        .args([url("/a"), url(PANIC_PATH), url("/b")])
        .stdin(Stdio::null())
        .output()
        .expect("nghttp runs");
    let trace = String::from_utf8_lossy(&out.stdout).into_owned();
    let ok = trace.matches(":status: 200").count();
    let resets: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("error_code="))
        .collect();
    assert_eq!(ok, 2, "the other streams were not both answered: {trace}");
    assert!(
        resets.iter().any(|l| l.contains("INTERNAL_ERROR")),
        "the panicking stream was not reset: {trace}"
    );
    assert!(
        !trace.contains("recv GOAWAY frame"),
        "the connection was ended: {trace}"
    );

    let c = tern.stop();
    assert_eq!(c.get("frontend web", "panics"), 1);
    assert_eq!(c.get("frontend web", "h2_sessions"), 1);
}

#[cfg(not(debug_assertions))]
#[test]
fn release_builds_have_no_panic_hook() {
    let term = Term::start("s1");
    let tern = tern_with_hook(&term, &[]);
    let request = format!("GET {PANIC_PATH} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let r = raw_exchange(tern.addr(), request.as_bytes(), WAIT);
    assert_eq!(r.status(), Some(200), "{}", r.text());
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "panics"), 0);
}
