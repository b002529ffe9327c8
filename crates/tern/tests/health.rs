//! Health checks through the real `tern` binary: a killed backend is marked down within
//! `fall × interval` while clients see no failure (retries and redispatch), comes back after
//! `rise` passed checks once restarted, HTTP checks judge the status, and passive checks take a
//! server failing live traffic out until active checks bring it back.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Polls tern's log (stderr) until a line contains every one of `needles`; returns how long
/// that took, or `None` after `limit`.
fn wait_log(tern: &Tern, needles: &[&str], limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        let text = tern.proc.stderr_text();
        if text.lines().any(|l| needles.iter().all(|n| l.contains(n))) {
            return Some(start.elapsed());
        }
        // Bounded poll of a log file: nothing else shows the checker's progress.
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Restarts a term on the address it had.
fn restart(name: &str, addr: std::net::SocketAddr) -> Term {
    let dir = temp_dir(&format!("term-{name}-again"));
    let listen = addr.to_string();
    let mut proc = Proc::spawn(&["term", "--listen", &listen, "--name", name], &dir);
    proc.wait_line("ready:");
    Term {
        proc,
        addr,
        name: name.to_owned(),
    }
}

/// Sends `n` GETs, each on a new connection, and counts the answers by server (or status).
async fn spread(tern: &Tern, n: usize) -> HashMap<String, usize> {
    let mut by = HashMap::new();
    for _ in 0..n {
        let got = get(tern.addr(), false, "/").await;
        let key = if got.status == 200 {
            got.header("x-term-server").unwrap_or("?").to_owned()
        } else {
            format!("status {}", got.status)
        };
        *by.entry(key).or_default() += 1;
    }
    by
}

const CHECK: &str = "check = { interval = \"200ms\", rise = 2, fall = 3 }";

#[tokio::test]
async fn a_killed_server_goes_down_in_time_and_clients_see_no_failure() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let tern = Tern::run(
        &Config::new()
            .terms(&[&a, &b])
            .backend(CHECK)
            .backend("retries = 3")
            .backend("redispatch = true")
            .toml(),
    );
    assert_eq!(spread(&tern, 10).await.len(), 2, "both serve at first");
    let killed = Instant::now();
    drop(a);
    // Traffic during the detection window: pooled connections to `a` die and new ones are
    // refused; every request must still succeed on `b`.
    let mut conn = connect(tern.addr(), false).await;
    let mut down_after = None;
    for _ in 0..400 {
        let got = send(&mut conn, get_req("/")).await;
        assert_eq!(got.status, 200, "{}", got.text());
        let fresh = get(tern.addr(), false, "/").await;
        assert_eq!(fresh.status, 200, "{}", fresh.text());
        if tern.proc.stderr_text().contains("server is DOWN") {
            down_after = Some(killed.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let down_after = down_after.expect("server a never marked down");
    // fall × interval = 600 ms, plus up to one interval of phase; generous for a shared host.
    assert!(
        down_after < Duration::from_millis(600 + 200 + 1500),
        "marked down after {down_after:?}"
    );
    assert!(wait_log(
        &tern,
        &["server is DOWN", "server=a"],
        Duration::from_secs(1)
    )
    .is_some());
    let after = spread(&tern, 10).await;
    assert_eq!(after.get("b"), Some(&10), "{after:?}");
    let counters = tern.stop_clean();
    assert_eq!(counters.get("server app/a", "went_down"), 1);
    assert_eq!(counters.get("server app/a", "up"), 0);
    assert_eq!(counters.get("backend app", "no_server"), 0);
}

#[tokio::test]
async fn a_restarted_server_comes_back_after_rise_checks() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let addr = a.addr;
    let tern = Tern::run(&Config::new().terms(&[&a, &b]).backend(CHECK).toml());
    drop(a);
    assert!(
        wait_log(&tern, &["server is DOWN"], Duration::from_secs(5)).is_some(),
        "not marked down: {}",
        tern.proc.stderr_text()
    );
    assert_eq!(spread(&tern, 6).await.get("b"), Some(&6));
    let _a = restart("a", addr);
    let up_after = wait_log(&tern, &["server is UP"], Duration::from_secs(5))
        .unwrap_or_else(|| panic!("not back up: {}", tern.proc.stderr_text()));
    // rise × interval = 400 ms, plus one interval of phase.
    assert!(
        up_after < Duration::from_millis(400 + 200 + 1500),
        "{up_after:?}"
    );
    let back = spread(&tern, 10).await;
    assert_eq!(back.get("a"), Some(&5), "{back:?}");
    let counters = tern.stop_clean();
    assert_eq!(counters.get("server app/a", "went_up"), 1);
    assert_eq!(counters.get("server app/a", "up"), 1);
}

#[tokio::test]
async fn an_http_check_judges_the_status() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    // `a` is checked with a path its server answers 503 for; `b` with one it answers 200.
    let tern = Tern::run(
        &Config::new()
            .raw_server(&format!(
                "{{ name = \"a\", address = \"{}\", check = {{ path = \"/?r=503\" }} }}",
                a.addr
            ))
            .raw_server(&format!(
                "{{ name = \"b\", address = \"{}\", check = {{ path = \"/health\" }} }}",
                b.addr
            ))
            .backend(
                "check = { type = \"http\", interval = \"100ms\", fall = 2, expect_status = 200 }",
            )
            .toml(),
    );
    assert!(
        wait_log(&tern, &["server is DOWN", "L7STS"], Duration::from_secs(5)).is_some(),
        "{}",
        tern.proc.stderr_text()
    );
    assert_eq!(spread(&tern, 6).await.get("b"), Some(&6));
    let counters = tern.stop_clean();
    assert_eq!(counters.get("server app/a", "up"), 0);
    assert_eq!(counters.get("server app/b", "up"), 1);
    assert!(counters.get("server app/b", "checks_passed") >= 1);
    assert_eq!(counters.get("server app/b", "checks_failed"), 0);
}

#[tokio::test]
async fn passive_checks_take_out_a_failing_server_and_active_checks_bring_it_back() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let tern = Tern::run(
        &Config::new()
            .terms(&[&a, &b])
            .backend("check = { type = \"http\", interval = \"300ms\", rise = 1 }")
            .backend("observe = { on = \"layer7\", error_limit = 2, on_error = \"mark-down\" }")
            .toml(),
    );
    // Live traffic answered 500 by both servers: each reaches the error limit and goes down.
    let mut conn = connect(tern.addr(), false).await;
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(send(&mut conn, get_req("/?r=500")).await.status);
    }
    assert!(statuses.iter().all(|&s| s == 500), "{statuses:?}");
    assert!(
        wait_log(
            &tern,
            &["server is DOWN", "passive"],
            Duration::from_secs(5)
        )
        .is_some(),
        "{}",
        tern.proc.stderr_text()
    );
    // The active check (GET / answers 200) brings them back.
    assert!(wait_log(&tern, &["server is UP"], Duration::from_secs(5)).is_some());
    let counters = tern.stop_clean();
    let trips = counters.get("server app/a", "passive_trips")
        + counters.get("server app/b", "passive_trips");
    assert!(trips >= 1, "{:?}", counters.0);
}

#[tokio::test]
async fn a_backend_with_every_server_down_answers_503_at_once() {
    let a = Term::start("a");
    let tern = Tern::run(&Config::new().terms(&[&a]).backend(CHECK).toml());
    drop(a);
    assert!(wait_log(&tern, &["server is DOWN"], Duration::from_secs(5)).is_some());
    let start = Instant::now();
    let got = get(tern.addr(), false, "/").await;
    assert_eq!(got.status, 503);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    let counters = tern.stop_clean();
    assert_eq!(counters.get("backend app", "no_server"), 1);
}

#[tokio::test]
async fn tls_checks_pass_on_a_tls_server_and_fail_on_a_plain_one() {
    let dir = temp_dir("tls-check");
    let cert = write_cert(&dir, "site", tern_tls::KeyKind::EcdsaP256);
    let secure = Term::start_with("secure", &["--tls-cert", &cert]);
    let plain = Term::start("plain");
    // The TLS-checked server only carries the checks here: traffic goes to `plain`, whose TLS
    // check must fail (it speaks plain HTTP).
    let tern = Tern::run(
        &Config::new()
            .raw_server(&format!(
                "{{ name = \"secure\", address = \"{}\", weight = 0, check = {{ type = \"https\", path = \"/\" }} }}",
                secure.addr
            ))
            .raw_server(&format!(
                "{{ name = \"plain\", address = \"{}\", check = {{ type = \"tls\" }} }}",
                plain.addr
            ))
            // Not 100 ms: on a loaded host a handshake with the (debug-built) server may outlast
            // it, and a timed-out check is not what this test is about.
            .backend("check = { interval = \"500ms\", timeout = \"500ms\", fall = 2 }")
            .toml(),
    );
    assert!(
        wait_log(
            &tern,
            &["server is DOWN", "server=plain", "L6"],
            Duration::from_secs(10)
        )
        .is_some(),
        "{}",
        tern.proc.stderr_text()
    );
    let counters = tern.stop_clean();
    assert_eq!(counters.get("server app/secure", "up"), 1);
    assert!(counters.get("server app/secure", "checks_passed") >= 1);
    assert_eq!(counters.get("server app/secure", "checks_failed"), 0);
    assert_eq!(counters.get("server app/plain", "up"), 0);
}

#[tokio::test]
async fn slow_start_ramps_a_returning_server_back_in() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let addr = a.addr;
    let tern = Tern::run(
        &Config::new()
            .server("a", &a.addr.to_string(), 10)
            .server("b", &b.addr.to_string(), 10)
            .backend("check = { interval = \"100ms\", rise = 1, fall = 1 }")
            .backend("slowstart = \"4s\"")
            .toml(),
    );
    drop(a);
    assert!(wait_log(&tern, &["server is DOWN"], Duration::from_secs(5)).is_some());
    let _a = restart("a", addr);
    assert!(wait_log(&tern, &["server is UP"], Duration::from_secs(5)).is_some());
    // Just back: weight 1 or 2 of 10 against b's 10, so a small share.
    let early = spread(&tern, 22).await;
    let early_a = early.get("a").copied().unwrap_or(0);
    assert!(
        early_a <= 6,
        "a got {early_a} of 22 at the start of its ramp: {early:?}"
    );
    // The ramp ends after 4 s: then back to an equal share at full weight.
    let up = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let late = spread(&tern, 20).await;
        // Shares alone cannot tell 9 from 10 in 20 picks: the ramp must also be over.
        if late.get("a") == Some(&10) && up.elapsed() > Duration::from_millis(4200) {
            break;
        }
        assert!(
            up.elapsed() < Duration::from_secs(10),
            "still ramping: {late:?}"
        );
    }
    let counters = tern.stop_clean();
    assert_eq!(counters.get("server app/a", "weight"), 10);
}
