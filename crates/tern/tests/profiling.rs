//! Task profiling (`global.profiling`) through the real binary: with it on, plain and TLS
//! requests are counted under their kinds (accept, TLS handshake, request, connect, response,
//! health check) in the `stats: profile <kind>` exit lines; with it off (the default) nothing
//! is recorded; `tern ctl set profiling on|off` switches it at runtime and `show profiling`
//! shows the table.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::path::Path;

const REQUESTS: u64 = 5;

/// `REQUESTS` keep-alive GETs on one connection; every answer must be a 200.
async fn requests(addr: std::net::SocketAddr, tls: bool) {
    let mut conn = connect(addr, tls).await;
    for _ in 0..REQUESTS {
        let got = send(&mut conn, get_req("/")).await;
        assert_eq!(got.status, 200, "{}", got.text());
    }
}

#[test]
fn requests_are_profiled_by_kind_when_profiling_is_on() {
    let term = Term::start("s1");
    let dir = temp_dir("profiling");
    let cert = write_cert(&dir, "ecdsa", tern_tls::KeyKind::EcdsaP256);
    let server = format!(
        "{{ name = \"s1\", address = \"{}\", check = {{ interval = \"50ms\" }} }}",
        term.addr
    );
    let cfg = Config::new()
        .global("profiling = true")
        .raw_server(&server)
        .binds(&[
            "{ address = \"127.0.0.1:0\", tls = false }",
            "\"127.0.0.1:0\"",
        ])
        .tls(&[&format!("{cert:?}")]);
    let tern = Tern::run_in(dir, &cfg.toml());
    let (plain, tls) = (tern.binds[0].1, tern.binds[1].1);
    block_on(async {
        requests(plain, false).await;
        requests(tls, true).await;
    });
    let c = tern.stop_clean();
    let profile = |kind: &str, key: &str| c.get(&format!("profile {kind}"), key);

    assert_eq!(c.get("frontend web", "requests"), 2 * REQUESTS);
    // Every request is polled at least once as a request and once as a response.
    assert!(profile("request", "calls") >= 2 * REQUESTS);
    assert!(profile("response", "calls") >= 2 * REQUESTS);
    assert!(profile("response", "cpu_ns") > 0);
    // A response waits for the server: its task is woken, and the wait measured.
    assert!(profile("response", "wakes") >= 1);
    assert!(profile("response", "lat_ns") > 0);
    assert!(profile("accept", "calls") >= 2);
    assert!(profile("tls_handshake", "calls") >= 1);
    assert!(profile("tls_handshake", "cpu_ns") > 0);
    assert!(profile("connect", "calls") >= c.get("server app/s1", "connects"));
    // The checks run on their own schedule: when one ran, it was profiled.
    let checks = c.get("server app/s1", "checks_passed") + c.get("server app/s1", "checks_failed");
    if checks > 0 {
        assert!(profile("health_check", "calls") >= checks);
    }
}

#[test]
fn nothing_is_profiled_by_default() {
    let term = Term::start("s1");
    let tern = Tern::run(&Config::new().terms(&[&term]).toml());
    let got = block_on(get(tern.addr(), false, "/"));
    assert_eq!(got.status, 200);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "requests"), 1);
    let lines: Vec<&String> = c.0.keys().filter(|k| k.starts_with("profile ")).collect();
    assert!(
        lines.is_empty(),
        "profile lines with profiling off: {lines:?}"
    );
}

/// Runs `tern ctl -s SOCKET WORDS...`, which must succeed; its output.
fn ctl(socket: &Path, words: &str) -> String {
    let mut args = vec!["ctl", "-s", socket.to_str().unwrap()];
    args.extend(words.split_whitespace());
    let (code, out, err) = tern_output(&args);
    assert_eq!(code, 0, "`{words}` failed: {out}{err}");
    out
}

/// The `calls` column of `kind`'s row in a `show profiling` table (0 when it has no row).
fn calls_in(table: &str, kind: &str) -> u64 {
    table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|words| words.first() == Some(&kind))
        .map_or(0, |words| words[1].parse().unwrap())
}

#[test]
fn the_runtime_api_switches_profiling_and_shows_the_table() {
    let term = Term::start("s1");
    let dir = temp_dir("profiling-ctl");
    let socket = dir.join("tern.sock");
    let cfg = Config::new()
        .global(&format!(
            "\n[control]\nsocket = {:?}",
            socket.to_str().unwrap()
        ))
        .terms(&[&term]);
    let tern = Tern::run_in(dir, &cfg.toml());
    let addr = tern.addr();
    let one = || assert_eq!(block_on(get(addr, false, "/")).status, 200);

    one();
    let table = ctl(&socket, "show profiling");
    assert!(table.contains("profiling off"), "{table}");
    assert!(table.contains("nothing recorded"), "{table}");

    ctl(&socket, "set profiling on");
    for _ in 0..3 {
        one();
    }
    let table = ctl(&socket, "show profiling");
    assert!(table.contains("profiling on"), "{table}");
    assert!(
        table.contains("tot_cpu") && table.contains("avg_lat"),
        "{table}"
    );
    let on = calls_in(&table, "response");
    assert!(on >= 3, "{table}");
    assert!(calls_in(&table, "request") >= 3, "{table}");

    ctl(&socket, "set profiling off");
    one();
    let table = ctl(&socket, "show profiling");
    assert_eq!(calls_in(&table, "response"), on, "{table}");
    let c = tern.stop_clean();
    assert_eq!(c.get("profile response", "calls"), on);
}
