//! The `check` table: defaults, each key and its rules, the type and the HTTP keys.
//! Per-server checks and `observe` are in `tests_servers.rs`.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::time::Duration;

use super::fields::parse_status;
use crate::model::{Check, CheckKind, HttpCheck, StatusRange};
use crate::raw::TextOrInt;
use crate::test_support::{
    assert_error, backend_error, backend_with_servers, parse_backend, parse_err, parse_ok,
};

pub(super) fn addr(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

fn secs(secs: u64) -> Duration {
    Duration::from_secs(secs)
}

fn range(low: u16, high: u16) -> StatusRange {
    StatusRange { low, high }
}

pub(super) fn default_http() -> HttpCheck {
    HttpCheck {
        method: "GET".into(),
        path: "/".into(),
        host: None,
        expect_status: vec![range(200, 399)],
        expect_body: None,
        h2: false,
    }
}

/// The check every server gets from `check = {}`: TCP with HAProxy's timings.
pub(super) fn default_tcp(address: &str) -> Check {
    Check {
        kind: CheckKind::Tcp,
        interval: secs(2),
        fast_interval: secs(2),
        down_interval: secs(2),
        timeout: secs(2),
        rise: 2,
        fall: 3,
        address: addr(address),
    }
}

/// The kind of the first server's check with the backend `check = { lines }`.
fn kind_of(check: &str) -> CheckKind {
    let backend = parse_backend(&format!("check = {{ {check} }}"));
    backend.servers[0].check.clone().unwrap().kind
}

#[test]
fn no_check_by_default_and_an_empty_table_is_a_tcp_check() {
    assert_eq!(parse_backend("").servers[0].check, None);
    let backend = parse_backend("check = {}");
    assert_eq!(
        backend.servers[0].check,
        Some(default_tcp("127.0.0.1:8080"))
    );
}

#[test]
fn the_documented_example_resolves_per_server() {
    let text = backend_with_servers(
        "check = { type = \"http\", interval = \"2s\", fast_interval = \"500ms\", \
         down_interval = \"5s\",\n  timeout = \"1s\", rise = 2, fall = 3, port = 9000, \
         method = \"GET\", path = \"/health\",\n  host = \"app.example\", \
         expect_status = \"2xx\", expect_body = \"ok\" }",
        &[
            "{ name = \"web1\", address = \"127.0.0.1:8080\", weight = 10, maxconn = 100 }",
            "{ name = \"web2\", address = \"127.0.0.1:8081\", check = { port = 9001 } }",
            "{ name = \"web3\", address = \"127.0.0.1:8082\", check = false }",
            "{ name = \"old\",  address = \"127.0.0.1:8083\", backup = true, check = true }",
        ],
    );
    let servers = &parse_ok(&text).backends[0].servers;
    let expected = Check {
        kind: CheckKind::Http(HttpCheck {
            method: "GET".into(),
            path: "/health".into(),
            host: Some("app.example".into()),
            expect_status: vec![range(200, 299)],
            expect_body: Some("ok".into()),
            h2: false,
        }),
        interval: secs(2),
        fast_interval: ms(500),
        down_interval: secs(5),
        timeout: secs(1),
        rise: 2,
        fall: 3,
        address: addr("127.0.0.1:9000"),
    };
    assert_eq!(servers[0].check.as_ref(), Some(&expected));
    let web2 = Check {
        address: addr("127.0.0.1:9001"),
        ..expected.clone()
    };
    assert_eq!(servers[1].check.as_ref(), Some(&web2));
    assert_eq!(servers[2].check, None);
    let old = Check {
        address: addr("127.0.0.1:9000"),
        ..expected
    };
    assert_eq!(servers[3].check.as_ref(), Some(&old));
}

#[test]
fn intervals_and_timeout_default_to_the_interval() {
    let check = parse_backend("check = { interval = \"10s\", rise = 1, fall = 1000 }").servers[0]
        .check
        .clone()
        .unwrap();
    assert_eq!(
        (check.fast_interval, check.down_interval, check.timeout),
        (secs(10), secs(10), secs(10))
    );
    assert_eq!((check.rise, check.fall), (1, 1000));
}

#[test]
fn the_type_follows_the_keys_when_not_written() {
    assert_eq!(kind_of(""), CheckKind::Tcp);
    assert_eq!(kind_of("type = \"tcp\""), CheckKind::Tcp);
    assert_eq!(kind_of("type = \"http\""), CheckKind::Http(default_http()));
    let head = HttpCheck {
        method: "HEAD".into(),
        ..default_http()
    };
    assert_eq!(kind_of("method = \"HEAD\""), CheckKind::Http(head));
    assert_eq!(
        kind_of("type = \"tls\""),
        CheckKind::Tls {
            sni: None,
            http: None
        }
    );
    assert_eq!(
        kind_of("type = \"https\", sni = \"app.example\""),
        CheckKind::Tls {
            sni: Some("app.example".into()),
            http: Some(default_http()),
        }
    );
}

#[test]
fn expect_status_forms() {
    let statuses = |value: &str| match kind_of(&format!("expect_status = {value}")) {
        CheckKind::Http(http) => http.expect_status,
        other => panic!("{other:?}"),
    };
    assert_eq!(statuses("204"), [range(204, 204)]);
    assert_eq!(statuses("\"3xx\""), [range(300, 399)]);
    assert_eq!(statuses("\"5XX\""), [range(500, 599)]);
    assert_eq!(
        statuses("[200, \"3xx\", 404]"),
        [range(200, 200), range(300, 399), range(404, 404)]
    );
    let parse = |item: TextOrInt| parse_status(&item);
    assert_eq!(parse(TextOrInt::Int(100)).unwrap(), range(100, 100));
    assert_eq!(parse(TextOrInt::Int(599)).unwrap(), range(599, 599));
    for bad in [99, 600, -1] {
        assert!(parse(TextOrInt::Int(bad)).is_err(), "{bad}");
    }
    for bad in ["1xx", "6xx", "200", "2x", "xx", ""] {
        assert!(parse(TextOrInt::Text(bad.into())).is_err(), "{bad}");
    }
}

#[test]
fn rise_zero_is_an_error_at_its_key() {
    let text = backend_with_servers(
        "check = {\n  rise = 0 }",
        &["{ name = \"s1\", address = \"127.0.0.1:8080\" }"],
    );
    assert_error(&text, 9, "backend[0].check.rise", "between 1 and 1000");
    let text = backend_with_servers(
        "",
        &["{ name = \"s1\", address = \"127.0.0.1:8080\", check = { rise = 0 } }"],
    );
    assert_error(
        &text,
        9,
        "backend[0].servers[0].check.rise",
        "between 1 and 1000",
    );
}

#[test]
fn each_key_is_checked_where_it_is_written() {
    for (check, key, needle) in [
        ("fall = 1001", "fall", "between 1 and 1000"),
        ("port = 0", "port", "between 1 and 65535"),
        ("port = 65536", "port", "between 1 and 65535"),
        ("interval = \"0s\"", "interval", "zero"),
        ("fast_interval = 5", "fast_interval", "needs a unit"),
        (
            "down_interval = \"soon\"",
            "down_interval",
            "invalid duration",
        ),
        (
            "type = \"udp\"",
            "type",
            "supported: `tcp`, `http`, `tls`, `https`",
        ),
        ("method = \"GE T\"", "method", "not an HTTP method"),
        ("method = \"\"", "method", "not an HTTP method"),
        ("path = \"health\"", "path", "must start with `/`"),
        ("path = \"/a b\"", "path", "space or control character"),
        (
            "host = \"a\\r\\nX: y\"",
            "host",
            "space or control character",
        ),
        ("host = \"\"", "host", "must not be empty"),
        ("expect_status = 600", "expect_status", "not an HTTP status"),
        (
            "expect_status = \"6xx\"",
            "expect_status",
            "not a status class",
        ),
        (
            "expect_status = \"200\"",
            "expect_status",
            "a number, not a string",
        ),
        ("expect_status = []", "expect_status", "at least one status"),
        (
            "expect_status = [200, 0]",
            "expect_status[1]",
            "not an HTTP status",
        ),
        ("expect_body = \"\"", "expect_body", "must not be empty"),
        ("type = \"tls\", sni = \"a b\"", "sni", "not a DNS name"),
        ("type = \"tls\", sni = \"a..b\"", "sni", "not a DNS name"),
    ] {
        let err = backend_error(&format!("check = {{ {check} }}"));
        assert!(
            err.contains(&format!(":8: backend[0].check.{key}: ")),
            "{check}: {err}"
        );
        assert!(err.contains(needle), "{check}: {err}");
    }
}

#[test]
fn http_keys_and_sni_need_a_type_that_uses_them() {
    for key in [
        "method = \"GET\"",
        "path = \"/\"",
        "host = \"a\"",
        "expect_status = 200",
    ] {
        for kind in ["tcp", "tls"] {
            let err = backend_error(&format!("check = {{ type = \"{kind}\", {key} }}"));
            assert!(
                err.contains("only applies with type = \"http\" or \"https\""),
                "{kind} {key}: {err}"
            );
        }
    }
    let err = backend_error("check = { type = \"tcp\",\n  expect_body = \"ok\" }");
    assert!(
        err.contains(":9: backend[0].check.expect_body: only applies with type = \"http\""),
        "{err}"
    );
    for check in ["sni = \"a.example\"", "path = \"/\", sni = \"a.example\""] {
        let err = backend_error(&format!("check = {{ {check} }}"));
        assert!(
            err.contains("backend[0].check.sni: only applies with type = \"tls\" or \"https\""),
            "{check}: {err}"
        );
    }
}

#[test]
fn timeout_must_fit_in_the_interval() {
    let err = backend_error("check = { interval = \"1s\", timeout = \"2s\" }");
    assert!(
        err.contains(
            "backend[0].check.timeout: the check timeout (2s) is longer than the interval (1s)"
        ),
        "{err}"
    );
    // The backend's timeout with a server's shorter interval: reported at the server's key.
    let text = backend_with_servers(
        "check = { timeout = \"1s\" }",
        &["{ name = \"s1\", address = \"127.0.0.1:8080\", check = { interval = \"500ms\" } }"],
    );
    assert_error(
        &text,
        10,
        "backend[0].servers[0].check.interval",
        "longer than the interval (500ms)",
    );
}

#[test]
fn a_backend_mistake_is_reported_once_however_many_servers_follow_it() {
    let servers: Vec<String> = (0..4)
        .map(|i| {
            format!(
                "{{ name = \"s{i}\", address = \"127.0.0.1:{}\" }}",
                8000 + i
            )
        })
        .collect();
    let servers: Vec<&str> = servers.iter().map(String::as_str).collect();
    let text = backend_with_servers(
        "check = { type = \"tcp\", path = \"/\", rise = 0, interval = \"1s\", timeout = \"3s\" }",
        &servers,
    );
    let errors = parse_err(&text);
    let paths: Vec<&str> = errors.iter().map(|e| e.key_path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "backend[0].check.rise",
            "backend[0].check.timeout",
            "backend[0].check.path"
        ]
    );
}

#[test]
fn check_tables_refuse_unknown_keys_and_wrong_shapes() {
    assert_error(
        &backend_with_servers("check = { intreval = \"1s\" }", &[]),
        8,
        "backend[0].check.intreval",
        "`interval`",
    );
    let text = backend_with_servers(
        "",
        &["{ name = \"s1\", address = \"127.0.0.1:8080\", check = 1 }"],
    );
    assert_error(
        &text,
        9,
        "backend[0].servers[0].check",
        "`true`, `false` or a table",
    );
    let text = backend_with_servers(
        "",
        &["{ name = \"s1\", address = \"127.0.0.1:8080\", check = { prot = 1 } }"],
    );
    assert_error(&text, 9, "backend[0].servers[0].check.prot", "`port`");
    assert_error(
        &backend_with_servers("check = { expect_status = 2.5 }", &[]),
        8,
        "backend[0].check.expect_status",
        "a status code (200)",
    );
    assert_error(
        &backend_with_servers("check = { expect_status = [200, true] }", &[]),
        8,
        "backend[0].check.expect_status[1]",
        "a status code (200)",
    );
}
