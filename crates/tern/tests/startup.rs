//! Starting and stopping the real `tern run`: start-up is refused, naming the culprit, when a
//! port is in use (by another program or by a second tern), when a pinned CPU does not exist and
//! when a certificate cannot be read; two pinned workers start and serve; SIGTERM stops with exit
//! status 0 and prints the counters; SIGHUP does not stop tern; a graceful stop lets a request in
//! flight finish (and cuts it once `grace` is over) while new connections are refused.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Bound on each wait of these tests; nothing here is expected to take more than a second.
const WAIT: Duration = Duration::from_secs(5);
/// A refused start-up exits on its own; generous for a loaded CI machine.
const LIMIT: Duration = Duration::from_secs(20);

/// Writes `toml` to a fresh directory and runs `tern run` on it until it exits (bounded).
fn run_refused(toml: &str) -> Finished {
    let dir = temp_dir("startup");
    let path = dir.join("tern.toml");
    std::fs::write(&path, toml).unwrap();
    tern_finish(&["run", "-c", path.to_str().unwrap()], LIMIT)
}

fn assert_refused(out: &Finished, needles: &[&str]) {
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(!out.stdout.contains("ready:"), "{out:?}");
    for n in needles {
        assert!(
            out.stderr.contains(n),
            "expected {n:?} in stderr: {}",
            out.stderr
        );
    }
}

#[test]
fn port_held_by_another_socket_is_refused_naming_the_address() {
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = holder.local_addr().unwrap();
    let cfg = Config::new().binds(&[&format!("\"{taken}\"")]);
    let out = run_refused(&cfg.toml());
    assert_refused(
        &out,
        &[
            &format!("cannot listen on {taken} (frontend web)"),
            "Address already in use",
        ],
    );

    // The same when the busy address is the second bind of the frontend.
    let cfg = Config::new().binds(&[
        "\"127.0.0.1:0\"",
        &format!("{{ address = \"{taken}\", tls = false }}"),
    ]);
    let out = run_refused(&cfg.toml());
    assert_refused(&out, &[&format!("cannot listen on {taken}")]);
    drop(holder);
}

#[test]
fn port_in_use_reason_is_stated_once() {
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = holder.local_addr().unwrap();
    let out = run_refused(&Config::new().binds(&[&format!("\"{taken}\"")]).toml());
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr.matches("Address already in use").count(),
        1,
        "{}",
        out.stderr
    );
}

/// A port that was free a moment ago (the kernel picks it, then it is released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts a tern on an explicit free port. Another program could take the port between
/// [`free_port`] and tern's bind, so a failed start is retried on a new port (bounded).
fn tern_on_explicit_port() -> (Tern, String) {
    for _ in 0..5 {
        let toml = Config::new()
            .binds(&[&format!("\"127.0.0.1:{}\"", free_port())])
            .toml();
        let attempt = std::panic::catch_unwind(|| Tern::run(&toml));
        if let Ok(tern) = attempt {
            return (tern, toml);
        }
    }
    panic!("could not start tern on an explicit port in 5 attempts");
}

#[tokio::test]
async fn second_tern_on_the_same_port_is_refused_and_the_first_keeps_serving() {
    let (first, toml) = tern_on_explicit_port();
    let addr = first.addr();
    // tern itself sets SO_REUSEPORT on its sockets; the second one must still not share them.
    let out = run_refused(&toml);
    assert_refused(
        &out,
        &[
            &format!("cannot listen on {addr}"),
            "Address already in use",
        ],
    );
    // Every connection still reaches the first one.
    for _ in 0..4 {
        let got = tokio::time::timeout(WAIT, get(addr, false, "/test"))
            .await
            .unwrap();
        assert_eq!(got.status, 200);
    }
    let c = first.stop_clean();
    assert_eq!(c.get("frontend web", "monitor"), 4);
}

#[test]
fn cpu_out_of_range_is_refused_naming_the_cpu() {
    let out = run_refused(&Config::new().global("cpus = [9999]").toml());
    assert_refused(&out, &["global.cpus[0]: 9999 is out of range"]);
}

#[test]
fn cpu_not_available_to_the_process_is_refused_naming_the_cpu() {
    // Valid in the configuration (0 to 1023) but not a CPU of this machine.
    let out = run_refused(&Config::new().global("cpus = [1000]").toml());
    assert_refused(
        &out,
        &[
            "start-up refused",
            "CPU 1000 is not available to this process",
        ],
    );
}

#[test]
fn unreadable_certificate_is_refused_naming_the_file() {
    let dir = temp_dir("startup-cert");
    let cert = write_cert(&dir, "site", tern_tls::KeyKind::EcdsaP256);
    let path = std::path::PathBuf::from(&cert);
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    if std::fs::read(&path).is_ok() {
        // Running as root: permissions do not stop reads, but a directory cannot be read either.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
    }
    let out = run_refused(&Config::new().tls(&[&format!("{cert:?}")]).toml());
    assert_refused(&out, &[&format!("cannot read {cert}")]);
    assert!(
        out.stderr.contains("frontend web bind 127.0.0.1:0"),
        "{}",
        out.stderr
    );
}

/// The CPUs this process may run on (`Cpus_allowed_list` of `/proc/self/status`).
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let Some(list) = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
    else {
        return Vec::new();
    };
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// The `Cpus_allowed_list` of the thread of process `pid` named `name`.
fn thread_cpus(pid: u32, name: &str) -> Option<String> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let status = std::fs::read_to_string(task.path().join("status")).ok()?;
            return status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_owned());
        }
    }
    None
}

#[tokio::test]
async fn two_pinned_workers_serve_and_sigterm_stops_with_status_zero_and_stats() {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        println!("skipped: fewer than 2 CPUs available ({cpus:?})");
        return;
    }
    let term = Term::start("s1");
    let mut cfg = Config::new().terms(&[&term]);
    cfg.global = vec![
        "workers = 2".into(),
        format!("cpus = [{}, {}]", cpus[0], cpus[1]),
    ];
    let tern = Tern::run(&cfg.toml());
    assert!(
        tern.proc.seen.iter().any(|l| l == "ready: 2 workers"),
        "{:?}",
        tern.proc.seen
    );
    let pid = tern.proc.pid();
    assert_eq!(thread_cpus(pid, "tern-worker-0"), Some(cpus[0].to_string()));
    assert_eq!(thread_cpus(pid, "tern-worker-1"), Some(cpus[1].to_string()));

    for i in 0..10 {
        let got = tokio::time::timeout(WAIT, get(tern.addr(), false, "/"))
            .await
            .unwrap();
        assert_eq!(got.status, 200, "request {i}");
        assert_eq!(got.header("x-term-server"), Some("s1"));
    }
    tern.proc.signal("TERM");
    let (c, log) = exit_status_and_counters(tern);
    for section in ["frontend web", "backend app", "server app/s1"] {
        assert!(
            c.0.contains_key(section),
            "no `stats: {section}` line: {c:?}"
        );
    }
    assert_eq!(c.get("frontend web", "requests"), 10);
    assert_eq!(c.get("frontend web", "sessions"), 10);
    assert_eq!(c.get("backend app", "requests"), 10);
    assert_eq!(c.get("server app/s1", "requests"), 10);
    assert!(log.contains("stopping") && log.contains("SIGTERM"), "{log}");
}

#[tokio::test]
async fn sighup_does_not_stop_tern() {
    let term = Term::start("s1");
    let tern = Tern::run(&Config::new().terms(&[&term]).toml());
    for round in 1..=2 {
        tern.proc.signal("HUP");
        // Wait until tern has handled this hang-up before checking that it still serves.
        let deadline = Instant::now() + WAIT;
        while tern.proc.stderr_text().matches("SIGHUP received").count() < round {
            assert!(
                Instant::now() < deadline,
                "SIGHUP never logged: {}",
                tern.proc.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let got = tokio::time::timeout(WAIT, get(tern.addr(), false, "/"))
            .await
            .unwrap();
        assert_eq!(got.status, 200, "after SIGHUP {round}");
        assert_eq!(got.header("x-term-server"), Some("s1"));
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "requests"), 2);
}

/// A TCP relay in front of a backend that reports when the first request bytes have been passed
/// on: proof that tern has a stream in flight to the backend.
struct Tap {
    addr: SocketAddr,
    forwarded: mpsc::Receiver<()>,
}

fn tap(backend: SocketAddr) -> Tap {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, forwarded) = mpsc::channel();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { break };
            let Ok(mut server) = TcpStream::connect(backend) else {
                break;
            };
            let (mut client_w, mut server_r) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut server_r, &mut client_w);
                let _ = client_w.shutdown(std::net::Shutdown::Write);
            });
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 16384];
                let mut first = true;
                loop {
                    match client.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if server.write_all(&buf[..n]).is_err() {
                                break;
                            }
                            if std::mem::take(&mut first) {
                                let _ = tx.send(());
                            }
                        }
                    }
                }
                let _ = server.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    Tap { addr, forwarded }
}

/// Polls (bounded) until a new connection to `addr` is refused. (A connection made just before
/// the listeners closed is dropped, and the next attempt tells; one caught in the listener's
/// queue as it closed is reset, even before `connect` returns.)
fn wait_refused(addr: SocketAddr) {
    let deadline = Instant::now() + WAIT;
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => return,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("connect to {addr}: {e}"),
            Ok(late) => drop(late),
        }
        assert!(
            Instant::now() < deadline,
            "{addr} still accepts connections after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts tern with `grace` in front of a tapped term, sends `path` on a raw connection and
/// returns once the request has reached the backend.
fn request_in_flight(grace: &str, path: &str) -> (Tern, Term, Tap, TcpStream) {
    let term = Term::start("s1");
    let tap = tap(term.addr);
    let cfg = Config::new()
        .server("s1", &tap.addr.to_string(), 1)
        .global(&format!("grace = \"{grace}\""));
    let tern = Tern::run(&cfg.toml());
    let mut client = TcpStream::connect(tern.addr()).unwrap();
    client
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
        .unwrap();
    tap.forwarded
        .recv_timeout(WAIT)
        .expect("the request never reached the backend");
    (tern, term, tap, client)
}

/// Waits for tern to exit by itself after a stop signal, asserts exit status 0, and returns its
/// counters and its log.
fn exit_status_and_counters(mut tern: Tern) -> (Counters, String) {
    let status = tern.proc.wait_exit(WAIT + WAIT);
    assert_eq!(
        status.code(),
        Some(0),
        "stderr: {}",
        tern.proc.stderr_text()
    );
    // The server line is the last of the `stats:` lines.
    tern.proc.wait_line("stats: server app/s1 ");
    (Counters::parse(&tern.proc.seen), tern.proc.stderr_text())
}

#[test]
fn graceful_stop_lets_a_request_in_flight_finish_and_refuses_new_connections() {
    let (tern, _term, _tap, mut client) = request_in_flight("5s", "/?t=1500");
    let addr = tern.addr();
    tern.proc.signal("TERM");

    // New connections are refused while the stream in flight is still running.
    wait_refused(addr);

    let resp = read_response(&mut client, WAIT);
    assert_eq!(resp.status(), Some(200), "{resp:?}");
    assert_eq!(
        resp.head_value("x-term-server").as_deref(),
        Some("s1"),
        "{resp:?}"
    );
    assert!(!resp.closed, "response cut short: {resp:?}");
    // Then tern closes the connection instead of keeping it alive.
    let rest = read_until_closed(&mut client, WAIT);
    assert!(rest.closed && rest.bytes.is_empty(), "{rest:?}");

    let (c, _) = exit_status_and_counters(tern);
    assert_eq!(c.get("frontend web", "resp_2xx"), 1);
    assert_eq!(c.get("server app/s1", "requests"), 1);
    assert!(
        TcpStream::connect(addr).is_err(),
        "{addr} accepts connections after exit"
    );
}

#[test]
fn grace_period_over_closes_the_request_still_in_flight() {
    // The backend would answer after 4 s; grace is 1 s.
    let (tern, _term, _tap, mut client) = request_in_flight("1s", "/?t=4000");
    tern.proc.signal("TERM");
    let raw = read_until_closed(&mut client, WAIT);
    assert!(
        raw.closed,
        "connection still open after the grace period: {raw:?}"
    );
    assert_ne!(
        raw.status(),
        Some(200),
        "tern waited for the slow backend: {raw:?}"
    );
    let (_, log) = exit_status_and_counters(tern);
    assert!(log.contains("grace period over"), "{log}");
}
