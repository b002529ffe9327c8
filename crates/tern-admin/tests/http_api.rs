//! The control API's HTTP listener, against a fake proxy: routes, the token rule, limits.

#![allow(clippy::unwrap_used)]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use support::fake::{http, http_settings, FakeControl, TOKEN};
use tern_admin::api::{self, ApiHandle};
use tern_admin::Control;

fn start(token: bool) -> (Arc<FakeControl>, ApiHandle, SocketAddr) {
    let fake = FakeControl::new();
    let handle = api::spawn(fake.clone() as Arc<dyn Control>, &http_settings(token)).unwrap();
    let addr = handle.http_addr().unwrap();
    (fake, handle, addr)
}

fn post(addr: SocketAddr, line: &str, auth: Option<&str>) -> support::fake::HttpReply {
    let header = auth.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    http(addr, "POST", "/v1/command", &header, line)
}

#[test]
fn read_routes_answer_json() {
    let (fake, _handle, addr) = start(false);
    let info = http(addr, "GET", "/v1/info", "", "");
    assert_eq!(info.status, 200);
    assert_eq!(info.header("content-type"), Some("application/json"));
    assert_eq!(info.json()["version"], "0.1.0-fake");
    assert_eq!(info.json()["connections"], 7);
    let servers = http(addr, "GET", "/v1/servers?backend=other", "", "").json();
    assert_eq!(servers.as_array().unwrap().len(), 1);
    assert_eq!(servers[0]["name"], "o1");
    assert_eq!(
        http(addr, "GET", "/v1/servers?backend=nope", "", "").status,
        404
    );
    let stat = http(addr, "GET", "/v1/stat", "", "").json();
    assert_eq!(stat["frontends"][0]["name"], "web");
    assert_eq!(
        http(addr, "GET", "/v1/tls", "", "").json()[0]["frontend"],
        "web"
    );
    let profiling = http(addr, "GET", "/v1/profiling", "", "").json();
    assert_eq!(profiling["enabled"], false);
    assert!(fake.calls().is_empty());
}

#[test]
fn stats_page_metrics_and_stats_json() {
    let (_fake, _handle, addr) = start(false);
    let page = http(addr, "GET", "/stats", "", "");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(page
        .header("content-security-policy")
        .unwrap()
        .contains("default-src 'none'"));
    assert!(page.body.contains("<html"), "{}", page.body);
    assert!(
        page.body.contains("content=\"10\""),
        "default refresh of 10s"
    );
    let metrics = http(addr, "GET", "/metrics", "", "");
    assert_eq!(metrics.status, 200);
    assert!(metrics
        .header("content-type")
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    assert!(metrics.body.contains("# TYPE "), "{}", metrics.body);
    let json = http(addr, "GET", "/stats.json", "", "");
    assert_eq!(json.json()["backends"][0]["name"], "app");
}

#[test]
fn state_changes_without_a_configured_token_are_403() {
    let (fake, _handle, addr) = start(false);
    for auth in [None, Some("Bearer 0123456789abcdef-token")] {
        let reply = post(addr, "set weight app/s1 0", auth);
        assert_eq!(reply.status, 403, "{}", reply.body);
        let json = reply.json();
        assert_eq!(json["ok"], false);
        assert!(
            json["error"].as_str().unwrap().contains("control.token"),
            "{json}"
        );
    }
    assert!(
        fake.calls().is_empty(),
        "the proxy saw no call: {:?}",
        fake.calls()
    );
    // Reading through the command endpoint needs no token.
    let reply = post(addr, "show info", None);
    assert_eq!(reply.status, 200);
    assert!(reply.json()["output"]
        .as_str()
        .unwrap()
        .starts_with("version: "));
    let reply = post(addr, "json show info", None);
    assert_eq!(reply.json()["output"]["pid"], 4242);
}

#[test]
fn the_token_lets_state_changes_through() {
    let (fake, _handle, addr) = start(true);
    for auth in [None, Some("Bearer wrong-token-0123456789"), Some(TOKEN)] {
        let reply = post(addr, "set weight app/s1 0", auth);
        assert_eq!(reply.status, 403, "{auth:?}: {}", reply.body);
        assert!(reply.json()["error"]
            .as_str()
            .unwrap()
            .contains("wrong token"));
    }
    assert!(fake.calls().is_empty());
    let bearer = format!("Bearer {TOKEN}");
    let reply = post(addr, "set weight app/s1 0\n", Some(&bearer));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let json = reply.json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["output"], "server app/s1 weight set to 0");
    assert_eq!(json["error"], serde_json::Value::Null);
    assert_eq!(fake.calls(), ["set_weight app/s1 0"]);
}

#[test]
fn failures_map_to_statuses_and_change_nothing() {
    let (fake, _handle, addr) = start(true);
    let bearer = format!("Bearer {TOKEN}");
    let cases = [
        ("frobnicate", 400, "unknown command"),
        ("set weight app/s1 1000", 400, "out of range"),
        ("set weight app/nope 1", 404, "no server named 'nope'"),
        ("del server app/s1", 409, "not in maintenance"),
        ("upgrade", 500, "cannot upgrade"),
        ("show info\nreload", 400, "one command per request"),
    ];
    for (line, status, needle) in cases {
        let reply = post(addr, line, Some(&bearer));
        assert_eq!(reply.status, status, "`{line}`: {}", reply.body);
        let error = reply.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(needle), "`{line}`: {error}");
    }
    assert!(fake.calls().is_empty(), "{:?}", fake.calls());
}

#[test]
fn bad_requests() {
    let (fake, _handle, addr) = start(true);
    assert_eq!(http(addr, "GET", "/nope", "", "").status, 404);
    let reply = http(addr, "POST", "/v1/info", "", "");
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("GET, HEAD"));
    assert_eq!(http(addr, "GET", "/v1/command", "", "").status, 405);
    let bearer = format!("Authorization: Bearer {TOKEN}\r\n");
    let big = "x".repeat(64 * 1024);
    let reply = http(addr, "POST", "/v1/command", &bearer, &big);
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert!(fake.calls().is_empty());
    // The listener still serves after all that.
    assert_eq!(http(addr, "GET", "/v1/info", "", "").status, 200);
}
