//! Connection limits of the real `tern` binary: with `maxconn` reached (globally or on the
//! frontend) a new connection waits in the kernel backlog, unanswered, until a slot frees; and a
//! burst of connections far above `maxconn` is served completely in bounded memory. With
//! several workers, a frontend `maxconn` slot is never held by an idle worker waiting in accept.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(5);

/// Connection A takes the only slot and stays idle (keep-alive); connection B must wait,
/// unanswered, until A closes, then be served.
fn second_connection_waits_for_the_only_slot(cfg: Config) {
    let term = Term::start("s1");
    let tern = Tern::run(&cfg.terms(&[&term]).toml());

    let mut a = TcpStream::connect(tern.addr()).unwrap();
    a.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let first = read_response(&mut a, WAIT);
    assert_eq!(first.status(), Some(200), "{:?}", first.text());
    assert!(
        !first.closed,
        "A must stay open (keep-alive) to hold its slot"
    );

    // The kernel completes B's handshake (backlog), but tern does not accept it.
    let mut b = TcpStream::connect(tern.addr()).unwrap();
    b.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let early = read_until_closed(&mut b, Duration::from_secs(1));
    assert!(
        early.bytes.is_empty() && !early.closed,
        "B answered while A held the only slot: {:?}",
        early.text()
    );

    drop(a);
    let late = read_until_closed(&mut b, WAIT);
    assert_eq!(
        late.status(),
        Some(200),
        "B not served after A closed: {:?}",
        late.text()
    );
    assert!(late.closed);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "sessions"), 2);
    assert_eq!(c.get("frontend web", "resp_2xx"), 2);
}

#[test]
fn global_maxconn_queues_new_connections_in_the_backlog() {
    second_connection_waits_for_the_only_slot(Config::new().global("maxconn = 1"));
}

#[test]
fn frontend_maxconn_queues_new_connections_in_the_backlog() {
    second_connection_waits_for_the_only_slot(Config::new().frontend("maxconn = 1"));
}

#[tokio::test]
async fn burst_far_above_maxconn_is_served_in_bounded_memory() {
    const CLIENTS: usize = 200;
    const MAXCONN: u64 = 50;
    let term = Term::start("s1");
    let tern = Tern::run(
        &Config::new()
            .terms(&[&term])
            .global(&format!("maxconn = {MAXCONN}"))
            .toml(),
    );
    let addr = tern.addr();

    let tasks: Vec<_> = (0..CLIENTS)
        .map(|_| {
            tokio::spawn(async move {
                // A short server delay keeps the connections overlapping.
                tokio::time::timeout(Duration::from_secs(30), get(addr, false, "/?t=50"))
                    .await
                    .map(|got| got.status)
            })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        match task.await {
            Ok(Ok(200)) => ok += 1,
            Ok(Ok(status)) => panic!("a client got {status}"),
            Ok(Err(_)) => panic!("a client was not served within 30 s"),
            Err(e) => panic!("a client failed: {e}"),
        }
    }
    assert_eq!(ok, CLIENTS);

    let peak_kb = tern.proc_status_kb("VmHWM");
    let now_kb = tern.proc_status_kb("VmRSS");
    assert!(peak_kb < 100 * 1024, "tern's peak RSS was {peak_kb} kB");
    assert!(now_kb < 100 * 1024, "tern's RSS is {now_kb} kB");

    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "sessions"), CLIENTS as u64);
    assert_eq!(c.get("frontend web", "resp_2xx"), CLIENTS as u64);
    // At most MAXCONN streams ran at once, so at most that many server connections were needed.
    let connects = c.get("server app/s1", "connects");
    assert!(
        connects <= MAXCONN,
        "{connects} server connections for {MAXCONN} client slots"
    );
}

#[test]
fn frontend_maxconn_with_two_workers_never_strands_a_connection() {
    let term = Term::start("s1");
    let mut cfg = Config::new().terms(&[&term]).frontend("maxconn = 1");
    // Two workers (no cpus) instead of the default one.
    cfg.global = vec!["workers = 2".into()];
    let tern = Tern::run(&cfg.toml());

    // Strictly one after the other: each connection is closed before the next one opens, so
    // the single slot is always free when a client connects.
    for i in 0..12 {
        let r = raw_exchange(
            tern.addr(),
            b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            WAIT,
        );
        assert_eq!(
            r.status(),
            Some(200),
            "request {} of 12 not answered within {WAIT:?}: {:?}",
            i + 1,
            r.text()
        );
        assert!(r.closed, "request {}: connection not closed", i + 1);
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "sessions"), 12);
    assert_eq!(c.get("frontend web", "resp_2xx"), 12);
}
