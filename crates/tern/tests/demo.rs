//! `tern demo`: one command starts three `term` backends (s1, s2, s3) and a TLS frontend with a
//! generated certificate. It prints `listening:`, `ready:` and curl hints for its address,
//! spreads requests over TLS round-robin over the three backends, answers its monitor URI
//! `/test` itself, stops on SIGINT (Ctrl-C) with exit status 0 and its counters, and refuses to
//! start on a port in use.

#![allow(clippy::unwrap_used)]

// The configuration builder is not needed: the demo configures itself.
#[allow(unused_imports)]
mod support;
use support::*;

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(10);

/// A running demo: the process and its TLS address, once every line up to the hints is read.
fn start_demo() -> (Proc, SocketAddr) {
    let dir = temp_dir("demo");
    let mut proc = Proc::spawn(&["demo", "--listen", "127.0.0.1:0"], &dir);
    proc.wait_line("ready:");
    proc.wait_line("press Ctrl-C to stop");
    let binds = proc.listening();
    assert_eq!(binds.len(), 1, "{:?}", proc.seen);
    assert_eq!(binds[0].0, "https", "{:?}", proc.seen);
    (proc, binds[0].1)
}

#[test]
fn demo_prints_its_address_readiness_and_curl_hints() {
    let (proc, addr) = start_demo();
    let url = format!("https://{addr}");
    let seen = &proc.seen;
    assert_eq!(seen[0], format!("listening: demo {url}"), "{seen:?}");
    assert_eq!(seen[1], "ready: 2 workers", "{seen:?}");
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    let hints: Vec<&String> = seen
        .iter()
        .filter(|l| l.trim_start().starts_with("curl "))
        .collect();
    assert!(hints.len() >= 3, "{seen:?}");
    assert!(
        hints.iter().all(|h| h.contains(&url)),
        "hints not for {url}: {hints:?}"
    );
    assert!(
        hints.iter().any(|h| h.contains(&format!("{url}/test"))),
        "{hints:?}"
    );
    assert!(
        seen.iter().any(|l| l.contains("3 term backends")),
        "{seen:?}"
    );

    // The first hint works as printed (curl is optional on CI machines).
    if have("curl") {
        let out = Command::new("curl")
            .args([
                "-sk",
                "--max-time",
                "10",
                "-o",
                "/dev/null",
                "-D",
                "-",
                &format!("{url}/"),
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let head = String::from_utf8_lossy(&out.stdout);
        // TLS binds offer `h2` first: curl takes it.
        assert!(head.starts_with("HTTP/2 200"), "{head}");
        assert!(
            head.to_ascii_lowercase().contains("x-term-server: s"),
            "{head}"
        );
    } else {
        println!("skipped curl part: curl not installed");
    }
}

#[tokio::test]
async fn requests_over_tls_are_spread_over_three_backends() {
    let (mut proc, addr) = start_demo();
    let mut served: HashMap<String, usize> = HashMap::new();
    for i in 0..6 {
        // A new TLS connection each time, so the kernel spreads them over both workers.
        let got = tokio::time::timeout(WAIT, get(addr, true, "/"))
            .await
            .expect("request timed out");
        assert_eq!(got.status, 200, "request {i}");
        let server = got
            .header("x-term-server")
            .unwrap_or_else(|| panic!("request {i}: no x-term-server"));
        assert!(
            got.text().contains(server),
            "the page names its server: {}",
            got.text()
        );
        *served.entry(server.to_owned()).or_default() += 1;
    }
    for name in ["s1", "s2", "s3"] {
        assert!(
            served.contains_key(name),
            "{name} served nothing: {served:?}"
        );
    }
    assert_eq!(served.len(), 3, "{served:?}");

    let monitor = tokio::time::timeout(WAIT, get(addr, true, "/test"))
        .await
        .unwrap();
    assert_eq!(monitor.status, 200);
    assert_eq!(
        monitor.header("x-term-server"),
        None,
        "/test must not reach a backend"
    );

    let c = stop_with_sigint(&mut proc);
    assert_eq!(c.get("frontend demo", "requests"), 7);
    assert_eq!(c.get("frontend demo", "monitor"), 1);
    assert_eq!(c.get("frontend demo", "tls_full"), 7);
    assert_eq!(c.get("backend terms", "requests"), 6);
    for name in ["s1", "s2", "s3"] {
        assert_eq!(
            c.get(&format!("server terms/{name}"), "requests"),
            served[name] as u64
        );
    }
}

/// Sends SIGINT (as Ctrl-C does), waits for exit status 0 and returns the counters.
fn stop_with_sigint(proc: &mut Proc) -> Counters {
    proc.signal("INT");
    let status = proc.wait_exit(WAIT);
    assert_eq!(status.code(), Some(0), "stderr: {}", proc.stderr_text());
    proc.wait_line("stats: server terms/s3 ");
    assert!(
        proc.stderr_text().contains("SIGINT"),
        "{}",
        proc.stderr_text()
    );
    Counters::parse(&proc.seen)
}

#[test]
fn sigint_stops_the_demo_with_status_zero() {
    let (mut proc, addr) = start_demo();
    let started = Instant::now();
    let c = stop_with_sigint(&mut proc);
    assert!(started.elapsed() < WAIT);
    assert_eq!(c.get("frontend demo", "requests"), 0);
    // The frontend is gone.
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "{addr} still accepts connections"
    );
}

#[test]
fn demo_on_a_port_in_use_is_refused_naming_it() {
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = holder.local_addr().unwrap().to_string();
    let out = tern_finish(&["demo", "--listen", &taken], Duration::from_secs(20));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains(&format!("cannot listen on {taken}")),
        "{out:?}"
    );
    assert!(!out.stdout.contains("ready:"), "{out:?}");
}
