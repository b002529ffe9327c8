//! File descriptor exhaustion through the real binary (issue 19): tern started with a
//! descriptor limit far below its `maxconn`, and more connection attempts than it has
//! descriptors. It says so at start-up (the limit cannot hold `maxconn`), logs the failed
//! accepts once with what they mean (not twenty times a second), keeps running, and once the
//! connections close it accepts again, says so, and serves the clients that waited in the
//! kernel's backlog meanwhile.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// tern's descriptor limit.
const NOFILE: u64 = 128;
/// Connection attempts: well above the limit, well below the listen backlog (1024), so that
/// every attempt completes in the kernel.
const ATTEMPTS: usize = 400;

fn wait_for(tern: &Tern, needle: &str, limit: Duration) {
    let start = Instant::now();
    while !tern.proc.stderr_text().contains(needle) {
        assert!(
            start.elapsed() < limit,
            "no {needle:?} in the log after {limit:?}: {}",
            tern.proc.stderr_text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn out_of_descriptors_is_logged_survived_and_recovered_from() {
    let term = Term::start("s1");
    let cfg = Config::new()
        .terms(&[&term])
        .frontend("timeouts = { http_request = \"60s\", keep_alive = \"60s\" }");
    let tern = Tern::run_nofile(temp_dir("nofile"), &cfg.toml(), NOFILE);
    let addr = tern.addr();
    // The default maxconn (10000) does not fit in 128 descriptors: said at start-up.
    wait_for(&tern, "cannot hold maxconn", Duration::from_secs(5));

    // Idle connections until tern has no descriptor left; the rest wait in the backlog.
    let mut idle: Vec<TcpStream> = (0..ATTEMPTS)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok())
        .collect();
    let opened = idle.len() as u64;
    assert!(opened > NOFILE, "only {opened} connections");
    wait_for(
        &tern,
        "accept failed: out of file descriptors",
        Duration::from_secs(10),
    );
    let fds = tern.open_fds() as u64;
    assert!(
        fds >= NOFILE - 2,
        "tern has {fds} descriptors open, expected about {NOFILE}"
    );

    // A well-behaved client waits in the backlog meanwhile.
    let mut waiting = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).unwrap();
    waiting
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));

    // Connections close: tern accepts again and serves the client that waited.
    idle.clear();
    let answer = read_until_closed(&mut waiting, Duration::from_secs(20));
    assert_eq!(answer.status(), Some(200), "{}", answer.text());
    wait_for(
        &tern,
        "accepting connections again",
        Duration::from_secs(10),
    );
    let r = raw_exchange(
        addr,
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        Duration::from_secs(10),
    );
    assert_eq!(r.status(), Some(200));

    // One line for the run of failures (a summary every 10 s at most), not one per retry.
    let log = tern.proc.stderr_text();
    let lines = log.lines().filter(|l| l.contains("accept")).count();
    assert!(lines <= 6, "the failed accepts flooded the log:\n{log}");
    let c = tern.stop_clean();
    // Every connection was accepted in the end, those closed while in the backlog included.
    assert_eq!(c.get("frontend web", "sessions"), opened + 2);
}
