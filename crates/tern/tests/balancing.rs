//! Load balancing through the real `tern` binary: round-robin over three servers, weights
//! (including weight 0, drained), leastconn, URI and header hashing, backup servers, the monitor
//! URI answered without any backend, and redispatch to a live server when another one refuses
//! connections.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::collections::HashMap;

use hyper::client::conn::http1::SendRequest;
use hyper::Request;

/// A server address that refuses connections (nothing listens on port 1 of loopback).
const CLOSED: &str = "127.0.0.1:1";

/// Sends `n` GETs of `/` on one keep-alive connection and counts them by `x-term-server`.
async fn spread(tern: &Tern, n: usize) -> HashMap<String, usize> {
    let mut conn = connect(tern.addr(), false).await;
    let mut by_server = HashMap::new();
    for _ in 0..n {
        let name = server_of(&mut conn, get_req("/")).await;
        *by_server.entry(name).or_default() += 1;
    }
    by_server
}

/// Sends one request and returns the name of the server that answered it.
async fn server_of(conn: &mut SendRequest<Body>, req: Request<Body>) -> String {
    let got = send(conn, req).await;
    assert_eq!(got.status, 200, "{}", got.text());
    got.header("x-term-server")
        .expect("x-term-server")
        .to_owned()
}

#[tokio::test]
async fn leastconn_sends_new_requests_past_a_busy_server() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let tern = Tern::run(
        &Config::new()
            .terms(&[&a, &b])
            .backend("balance = \"leastconn\"")
            .toml(),
    );
    // One slow request holds a server; while it is in flight every quick one goes to the other.
    let mut slow_conn = connect(tern.addr(), false).await;
    let slow = tokio::spawn(async move { server_of(&mut slow_conn, get_req("/?t=1500")).await });
    let mut conn = connect(tern.addr(), false).await;
    // Wait until the slow request is in flight: the quick ones then all avoid its server.
    let mut quick = Vec::new();
    for _ in 0..40 {
        quick.push(server_of(&mut conn, get_req("/")).await);
        if quick.len() >= 2 && quick[quick.len() - 1] == quick[quick.len() - 2] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let busy = slow.await.unwrap();
    let tail = &quick[quick.len() - 2..];
    assert!(
        tail.iter().all(|s| *s != busy),
        "slow on {busy}, quick ones on {quick:?}"
    );
}

#[tokio::test]
async fn uri_hashing_keeps_each_path_on_one_server() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let tern = Tern::run(
        &Config::new()
            .terms(&[&a, &b, &c])
            .backend("balance = \"uri\"")
            .toml(),
    );
    let mut conn = connect(tern.addr(), false).await;
    let mut used = HashMap::new();
    for i in 0..24 {
        let path = format!("/item/{i}");
        let first = server_of(&mut conn, get_req(&path)).await;
        for q in 0..3 {
            // The query string is not part of the key unless `uri whole`.
            let again = server_of(&mut conn, get_req(&format!("{path}?v={q}"))).await;
            assert_eq!(again, first, "{path}");
        }
        *used.entry(first).or_insert(0) += 1;
    }
    assert!(
        used.len() >= 2,
        "24 paths all hashed to one server: {used:?}"
    );
}

#[tokio::test]
async fn header_hashing_follows_the_named_header() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let cfg = Config::new().terms(&[&a, &b, &c]).with_lines(
        &[],
        &["balance = \"hdr(X-Tenant)\"", "hash_type = \"consistent\""],
    );
    let tern = Tern::run(&cfg.toml());
    let mut conn = connect(tern.addr(), false).await;
    let tenant = |t: &str, path: &str| {
        let mut req = get_req(path);
        req.headers_mut().insert("x-tenant", t.parse().unwrap());
        req
    };
    let mut used = HashMap::new();
    for t in 0..16 {
        let name = format!("tenant-{t}");
        let first = server_of(&mut conn, tenant(&name, "/a")).await;
        let again = server_of(&mut conn, tenant(&name, "/b")).await;
        assert_eq!(again, first, "{name}");
        *used.entry(first).or_insert(0) += 1;
    }
    assert!(
        used.len() >= 2,
        "16 tenants all hashed to one server: {used:?}"
    );
}

#[tokio::test]
async fn backup_servers_get_nothing_while_an_active_one_serves() {
    let (a, spare) = (Term::start("a"), Term::start("spare"));
    let cfg = Config::new()
        .server("a", &a.addr.to_string(), 1)
        .raw_server(&format!(
            "{{ name = \"spare\", address = \"{}\", backup = true }}",
            spare.addr
        ));
    let tern = Tern::run(&cfg.toml());
    let by_server = spread(&tern, 10).await;
    assert_eq!(by_server.get("a"), Some(&10), "{by_server:?}");
    let counters = tern.stop_clean();
    assert_eq!(counters.get("server app/spare", "requests"), 0);
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
