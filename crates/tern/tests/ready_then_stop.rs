//! The readiness contract of `tern run` and `tern term`: once `ready:` is printed, scripts and
//! tests may rely on the process, including stopping it, so a SIGTERM sent right after `ready:`
//! must be a graceful stop (exit status 0, `stats:` lines), never the default kill.

// Only the process helpers are used here.
#[allow(unused_imports)]
mod support;
use support::*;

/// How many start/stop rounds: the window between `ready:` and the SIGTERM handler is short.
const ROUNDS: usize = 20;

#[test]
fn sigterm_right_after_ready_stops_tern_run_gracefully() {
    let toml = Config::new().toml();
    for round in 0..ROUNDS {
        let tern = Tern::run(&toml);
        let (status, lines) = tern.proc.stop();
        assert!(status.success(), "round {round}: tern exited with {status}");
        assert!(
            lines.iter().any(|l| l.starts_with("stats: frontend web ")),
            "round {round}: {lines:?}"
        );
    }
}

#[test]
fn sigterm_right_after_ready_stops_tern_term_gracefully() {
    for round in 0..ROUNDS {
        let term = Term::start("s1");
        let (status, lines) = term.proc.stop();
        assert!(
            status.success(),
            "round {round}: tern term exited with {status}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("stats: term ")),
            "round {round}: {lines:?}"
        );
    }
}

/// A stopping tern closes its listening sockets at once: a new client is refused (and can go
/// to another instance) instead of being accepted by the kernel and never served, while the
/// request already in flight still gets its answer.
#[test]
fn a_stopping_tern_refuses_new_connections_and_finishes_requests_in_flight() {
    use std::net::TcpStream;
    use std::time::Duration;

    let term = Term::start("stop-refuse");
    let mut tern = Tern::run(&Config::new().terms(&[&term]).toml());
    let addr = tern.addr();
    let slow = std::thread::spawn(move || {
        raw_exchange(
            addr,
            b"GET /?t=1500 HTTP/1.1\r\nHost: x\r\n\r\n",
            Duration::from_secs(10),
        )
    });
    // The request reaches the server (which holds it 1.5 s), then tern is told to stop.
    std::thread::sleep(Duration::from_millis(400));
    tern.proc.signal("TERM");
    std::thread::sleep(Duration::from_millis(300));
    match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}"),
        Ok(_) => panic!("a stopping tern accepted a new connection on {addr}"),
    }
    let answer = slow.join().expect("the slow request thread");
    assert_eq!(answer.status(), Some(200), "{}", answer.text());
    let status = tern.proc.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "tern exited with {status}");
}
