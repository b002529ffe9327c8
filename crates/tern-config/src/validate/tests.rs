//! Validation rules of `[global]` and `[[backend]]`, names, and reporting many errors at once.
//! Frontend rules are in `tests_frontend.rs`.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::backend::resolve_server_address;
use crate::test_support::*;
use crate::Balance;

#[test]
fn global_values_are_read() {
    let config = parse_ok(&with_global(
        "workers = 3\nmaxconn = 5\ngrace = \"1m30s\"\nbacklog = 65535",
    ));
    let global = config.global;
    assert_eq!(global.workers, Some(3));
    assert_eq!(global.maxconn, 5);
    assert_eq!(global.grace, Duration::from_secs(90));
    assert_eq!(global.backlog, 65_535);
}

#[test]
fn global_ranges() {
    assert_error(
        &with_global("workers = 0"),
        11,
        "global.workers",
        "between 1 and 256",
    );
    assert_error(
        &with_global("workers = 257"),
        11,
        "global.workers",
        "between 1 and 256",
    );
    assert_error(
        &with_global("maxconn = 0"),
        11,
        "global.maxconn",
        "out of range",
    );
    assert_error(
        &with_global("backlog = 0"),
        11,
        "global.backlog",
        "between 1 and 65535",
    );
    assert_error(
        &with_global("backlog = 65536"),
        11,
        "global.backlog",
        "between 1 and 65535",
    );
    assert_error(&with_global("grace = \"0s\""), 11, "global.grace", "zero");
    assert_error(
        &with_global("grace = 5"),
        11,
        "global.grace",
        "write \"5s\"",
    );
}

#[test]
fn profiling_is_off_unless_asked() {
    assert!(!parse_ok(&with_global("workers = 1")).global.profiling);
    assert!(parse_ok(&with_global("profiling = true")).global.profiling);
    let errors = parse_err(&with_global("profiling = \"on\""));
    assert!(
        errors
            .iter()
            .any(|e| e.line == Some(11) && e.message.contains("bool")),
        "{errors:?}"
    );
}

#[test]
fn cpus_set_workers_when_workers_is_absent() {
    let config = parse_ok(&with_global("cpus = [1, 0, 3]"));
    assert_eq!(config.global.workers, Some(3));
    assert_eq!(config.global.cpus, Some(vec![1, 0, 3]));
    let config = parse_ok(&with_global("workers = 2\ncpus = [0, 1]"));
    assert_eq!(config.global.workers, Some(2));
}

#[test]
fn cpus_rules() {
    assert_error(
        &with_global("workers = 3\ncpus = [0, 1]"),
        12,
        "global.cpus",
        "one CPU per worker",
    );
    assert_error(
        &with_global("cpus = [0,\n  1,\n  0]"),
        13,
        "global.cpus[2]",
        "CPU 0 is listed twice",
    );
    assert_error(
        &with_global("cpus = []"),
        11,
        "global.cpus",
        "at least one CPU",
    );
    assert_error(
        &with_global("cpus = [-1]"),
        11,
        "global.cpus[0]",
        "out of range",
    );
}

#[test]
fn backend_values_are_read() {
    let text = with_backend_lines(
        "balance = \"roundrobin\"\ntimeouts = { connect = \"250ms\", server = \"1h\" }\n\
         pool = { max_idle_per_server = 0, idle_timeout = \"2m\" }",
    );
    let backend = &parse_ok(&text).backends[0];
    assert_eq!(backend.balance, Balance::RoundRobin);
    assert_eq!(backend.timeouts.connect, Duration::from_millis(250));
    assert_eq!(backend.timeouts.server, Duration::from_secs(3600));
    assert_eq!(backend.pool.max_idle_per_server, 0);
    assert_eq!(backend.pool.idle_timeout, Duration::from_secs(120));
}

#[test]
fn unknown_balance_lists_supported_algorithms() {
    assert_error(
        &with_backend_lines("balance = \"least_conn\""),
        8,
        "backend[0].balance",
        "supported: `roundrobin`, `static-rr`, `leastconn`",
    );
}

#[test]
fn backend_timeouts_and_pool_rules() {
    let text = with_backend_lines("timeouts = { connect = \"0ms\",\n server = \"5\" }");
    assert_error(&text, 8, "backend[0].timeouts.connect", "zero");
    assert_error(&text, 9, "backend[0].timeouts.server", "needs a unit");
    let text = with_backend_lines("pool = { max_idle_per_server = -1, idle_timeout = \"soon\" }");
    assert_error(
        &text,
        8,
        "backend[0].pool.max_idle_per_server",
        "out of range",
    );
    assert_error(&text, 8, "backend[0].pool.idle_timeout", "invalid duration");
}

const SERVERS: &str = r#"[[frontend]]
name = "web"
bind = ["127.0.0.1:0"]
default_backend = "app"

[[backend]]
name = "app"
servers = [
  { name = "s1", address = "127.0.0.1:8080", weight = 0 },
  { name = "s2", address = "[::1]:8080", weight = 256 },
  { name = "s3", address = "localhost:8081" },
]
"#;

#[test]
fn servers_are_read_and_resolved() {
    let servers = &parse_ok(SERVERS).backends[0].servers;
    assert_eq!(servers.len(), 3);
    assert_eq!(servers[0].weight, 0);
    assert_eq!(servers[1].address, "[::1]:8080".parse().unwrap());
    assert_eq!(servers[1].weight, 256);
    assert_eq!(servers[2].weight, 1);
    assert!(servers[2].address.ip().is_loopback());
    assert_eq!(servers[2].address.port(), 8081);
}

#[test]
fn server_rules() {
    let text = SERVERS.replace("weight = 256", "weight = 257");
    assert_error(
        &text,
        10,
        "backend[0].servers[1].weight",
        "between 0 and 256",
    );
    let text = SERVERS.replace("\"s3\"", "\"s1\"");
    assert_error(
        &text,
        11,
        "backend[0].servers[2].name",
        "duplicate server name `s1` (first used by servers[0])",
    );
    let text = SERVERS
        .replace("weight = 256", "weight = 0")
        .replace("\"localhost:8081\" }", "\"localhost:8081\", weight = 0 }");
    assert_error(
        &text,
        8,
        "backend[0].servers",
        "at least one must have a weight above 0",
    );
    let text = SERVERS.replace("127.0.0.1:8080", "127.0.0.1:0");
    assert_error(&text, 9, "backend[0].servers[0].address", "port 0");
    let text = SERVERS.replace("[::1]:8080", "127.0.0.1");
    assert_error(&text, 10, "backend[0].servers[1].address", "needs a port");
    let text = SERVERS.replace(", address = \"localhost:8081\"", "");
    assert_error(
        &text,
        11,
        "backend[0].servers[2].address",
        "missing key `address`",
    );
    let text = SERVERS.replace("{ name = \"s1\", ", "{ ");
    assert_error(&text, 9, "backend[0].servers[0].name", "missing key `name`");
}

#[test]
fn server_list_must_exist_and_not_be_empty() {
    let text = MINIMAL.replace(
        "servers = [ { name = \"s1\", address = \"127.0.0.1:8080\" } ]",
        "",
    );
    assert_error(&text, 6, "backend[0].servers", "missing key `servers`");
    let text = MINIMAL.replace("[ { name = \"s1\", address = \"127.0.0.1:8080\" } ]", "[]");
    assert_error(&text, 8, "backend[0].servers", "at least one server");
}

#[test]
fn server_address_forms() {
    assert_eq!(
        resolve_server_address("10.0.0.1:80").unwrap(),
        "10.0.0.1:80".parse().unwrap()
    );
    assert_eq!(
        resolve_server_address("[::1]:80").unwrap(),
        "[::1]:80".parse().unwrap()
    );
    assert!(resolve_server_address("localhost:80")
        .unwrap()
        .ip()
        .is_loopback());
    assert!(resolve_server_address(":80")
        .unwrap_err()
        .contains("needs a host"));
    assert!(resolve_server_address("10.0.0.1:http")
        .unwrap_err()
        .contains("invalid port"));
    assert!(resolve_server_address("10.0.0.1:70000")
        .unwrap_err()
        .contains("invalid port"));
}

#[test]
fn names_must_be_present_unique_and_well_formed() {
    assert_error(
        &MINIMAL.replace("name = \"web\"", "name = \"\""),
        2,
        "frontend[0].name",
        "must not be empty",
    );
    assert_error(
        &MINIMAL.replace("name = \"web\"", "name = \"w b\""),
        2,
        "frontend[0].name",
        "invalid character ' '",
    );
    assert_error(
        &MINIMAL.replace("name = \"web\"\n", ""),
        1,
        "frontend[0].name",
        "missing key `name`",
    );
    assert_error(
        &MINIMAL.replace("name = \"app\"", "name = \"app/1\""),
        7,
        "backend[0].name",
        "invalid character '/'",
    );
    let text = format!("{MINIMAL}\n[[backend]]\nname = \"app\"\nservers = [{{ name = \"x\", address = \"127.0.0.1:1\" }}]\n");
    assert_error(
        &text,
        11,
        "backend[1].name",
        "duplicate backend name `app` (first used by backend[0])",
    );
    let text = format!(
        "{MINIMAL}\n[[frontend]]\nname = \"web\"\nbind = [\":0\"]\ndefault_backend = \"app\"\n"
    );
    assert_error(
        &text,
        11,
        "frontend[1].name",
        "duplicate frontend name `web`",
    );
    let config = parse_ok(&MINIMAL.replace("name = \"web\"", "name = \"Web_1.a-b\""));
    assert_eq!(config.frontends[0].name, "Web_1.a-b");
}

#[test]
fn all_validation_errors_are_reported_in_line_order() {
    let text = r#"[global]
workers = 0
grace = "0s"

[[frontend]]
name = "web"
bind = ["nowhere"]
default_backend = "missing"
timeouts = { client = 30, keep_alive = "10s" }

[[backend]]
name = "app"
balance = "random(0)"
servers = [
  { name = "s1", address = "127.0.0.1:8080", weight = 999 },
]
"#;
    let errors = parse_err(text);
    let got: Vec<(Option<usize>, &str)> = errors
        .iter()
        .map(|e| (e.line, e.key_path.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(2), "global.workers"),
            (Some(3), "global.grace"),
            (Some(7), "frontend[0].bind[0]"),
            (Some(8), "frontend[0].default_backend"),
            (Some(9), "frontend[0].timeouts.client"),
            (Some(13), "backend[0].balance"),
            (Some(15), "backend[0].servers[0].weight"),
        ]
    );
    let display = crate::ConfigErrors(errors).to_string();
    assert_eq!(display.lines().count(), 7);
    assert!(
        display.starts_with("/etc/tern/tern.toml:2: global.workers: 0 is out of range"),
        "{display}"
    );
}
