//! Load balancing through the real `tern` binary: round-robin over three servers, weights
//! (including weight 0, drained), the monitor URI answered without any backend, and redispatch
//! to a live server when another one refuses connections.

mod support;
use support::*;

use std::collections::HashMap;

/// A server address that refuses connections (nothing listens on port 1 of loopback).
const CLOSED: &str = "127.0.0.1:1";

/// Sends `n` GETs of `/` on one keep-alive connection and counts them by `x-term-server`.
async fn spread(tern: &Tern, n: usize) -> HashMap<String, usize> {
    let mut conn = connect(tern.addr(), false).await;
    let mut by_server = HashMap::new();
    for _ in 0..n {
        let got = send(&mut conn, get_req("/")).await;
        assert_eq!(got.status, 200, "{}", got.text());
        let name = got
            .header("x-term-server")
            .expect("x-term-server")
            .to_owned();
        *by_server.entry(name).or_default() += 1;
    }
    by_server
}

#[tokio::test]
async fn round_robin_spreads_evenly_over_three_servers() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let tern = Tern::run(&Config::new().terms(&[&a, &b, &c]).toml());
    let by_server = spread(&tern, 30).await;
    for name in ["a", "b", "c"] {
        assert_eq!(by_server.get(name), Some(&10), "{by_server:?}");
    }
    let counters = tern.stop_clean();
    for name in ["a", "b", "c"] {
        assert_eq!(counters.get(&format!("server app/{name}"), "requests"), 10);
    }
    assert_eq!(counters.get("backend app", "requests"), 30);
}

#[tokio::test]
async fn weights_share_requests_and_weight_zero_drains() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let cfg = Config::new()
        .server("a", &a.addr.to_string(), 2)
        .server("b", &b.addr.to_string(), 1)
        .server("c", &c.addr.to_string(), 0);
    let tern = Tern::run(&cfg.toml());
    let by_server = spread(&tern, 30).await;
    assert_eq!(by_server.get("a"), Some(&20), "{by_server:?}");
    assert_eq!(by_server.get("b"), Some(&10), "{by_server:?}");
    assert_eq!(
        by_server.get("c"),
        None,
        "a drained server got requests: {by_server:?}"
    );
    let counters = tern.stop_clean();
    assert_eq!(counters.get("server app/c", "requests"), 0);
    assert_eq!(counters.get("server app/c", "connects"), 0);
    let t = c.stop_counters();
    assert_eq!(
        t["connections"], 0,
        "the drained term was never contacted: {t:?}"
    );
}

#[tokio::test]
async fn monitor_uri_answers_without_touching_the_backend() {
    let tern = Tern::run(&Config::new().server("down", CLOSED, 1).toml());
    let got = get(tern.addr(), false, "/test").await;
    assert_eq!(got.status, 200);
    assert!(got.text().contains("Service ready."), "{}", got.text());
    let counters = tern.stop_clean();
    assert_eq!(counters.get("frontend web", "monitor"), 1);
    assert_eq!(counters.get("backend app", "requests"), 0);
    assert_eq!(counters.get("backend app", "connect_errors"), 0);
    assert_eq!(counters.get("backend app", "no_server"), 0);
    assert_eq!(counters.get("server app/down", "requests"), 0);
    assert_eq!(counters.get("server app/down", "connects"), 0);
    assert_eq!(counters.get("server app/down", "connect_errors"), 0);
}

#[tokio::test]
async fn down_server_is_skipped_by_redispatching() {
    let up = Term::start("up");
    let cfg = Config::new()
        .server("down", CLOSED, 1)
        .server("up", &up.addr.to_string(), 1);
    let tern = Tern::run(&cfg.toml());
    let by_server = spread(&tern, 20).await;
    assert_eq!(by_server.get("up"), Some(&20), "{by_server:?}");
    let counters = tern.stop_clean();
    assert!(
        counters.get("backend app", "connect_errors") > 0,
        "{:?}",
        counters.0
    );
    assert!(
        counters.get("backend app", "redispatches") > 0,
        "{:?}",
        counters.0
    );
    assert!(
        counters.get("server app/down", "connect_errors") > 0,
        "{:?}",
        counters.0
    );
    assert_eq!(counters.get("backend app", "no_server"), 0);
    assert_eq!(counters.get("frontend web", "resp_5xx"), 0);
    assert_eq!(counters.get("server app/up", "requests"), 20);
}
