//! `maxconn`, `queue`, `retries`, `redispatch` and `slowstart`.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::model::QueueSettings;
use crate::test_support::{
    assert_error, backend_error, backend_with_servers, parse_backend, parse_ok,
};

const LIMITED: &str = "{ name = \"s1\", address = \"127.0.0.1:8080\", maxconn = 100 }";

fn limited(lines: &str) -> crate::Backend {
    parse_ok(&backend_with_servers(lines, &[LIMITED]))
        .backends
        .remove(0)
}

#[test]
fn defaults() {
    let backend = parse_backend("");
    assert_eq!(backend.retries, 3);
    assert!(backend.redispatch);
    assert_eq!(backend.slowstart, None);
    assert_eq!(backend.servers[0].maxconn, None);
    assert_eq!(
        backend.queue,
        QueueSettings {
            max: None,
            timeout: Duration::from_secs(5),
        }
    );
    // The queue timeout follows the connect timeout, like HAProxy's `timeout queue`.
    let backend = limited("timeouts = { connect = \"2s\" }\nqueue = { max = 10 }");
    assert_eq!(
        backend.queue,
        QueueSettings {
            max: Some(10),
            timeout: Duration::from_secs(2),
        }
    );
}

#[test]
fn values_are_read() {
    let backend = limited(
        "retries = 0\nredispatch = false\nslowstart = \"30s\"\n\
         queue = { max = 0, timeout = \"1s\" }",
    );
    assert_eq!(backend.retries, 0);
    assert!(!backend.redispatch);
    assert_eq!(backend.slowstart, Some(Duration::from_secs(30)));
    assert_eq!(backend.servers[0].maxconn, Some(100));
    assert_eq!(
        backend.queue,
        QueueSettings {
            max: Some(0),
            timeout: Duration::from_secs(1),
        }
    );
    let backend = limited("retries = 100\nqueue = { max = 1000000 }");
    assert_eq!(backend.retries, 100);
    assert_eq!(backend.queue.max, Some(1_000_000));
    // A queue needs one server with maxconn, not all of them.
    let text = backend_with_servers(
        "queue = { timeout = \"3s\" }",
        &[LIMITED, "{ name = \"s2\", address = \"127.0.0.1:8081\" }"],
    );
    assert_eq!(
        parse_ok(&text).backends[0].queue.timeout,
        Duration::from_secs(3)
    );
}

#[test]
fn rules() {
    for (lines, key, needle) in [
        ("retries = -1", "retries", "between 0 and 100"),
        ("retries = 101", "retries", "between 0 and 100"),
        ("slowstart = \"0s\"", "slowstart", "zero"),
        ("slowstart = 30", "slowstart", "needs a unit"),
        ("queue = { max = -1 }", "queue.max", "between 0 and 1000000"),
        (
            "queue = { max = 1000001 }",
            "queue.max",
            "between 0 and 1000000",
        ),
        (
            "queue = { timeout = \"never\" }",
            "queue.timeout",
            "invalid duration",
        ),
    ] {
        let err = backend_error(&format!("{lines}\n"));
        assert!(
            err.contains(&format!(":8: backend[0].{key}: ")),
            "{lines}: {err}"
        );
        assert!(err.contains(needle), "{lines}: {err}");
    }
    for (maxconn, needle) in [
        ("0", "between 1 and 1000000"),
        ("1000001", "between 1 and 1000000"),
    ] {
        let text = backend_with_servers(
            "",
            &[&format!(
                "{{ name = \"s1\", address = \"127.0.0.1:8080\", maxconn = {maxconn} }}"
            )],
        );
        assert_error(&text, 9, "backend[0].servers[0].maxconn", needle);
    }
    assert_error(
        &backend_with_servers("redispatch = \"yes\"", &[]),
        8,
        "backend[0].redispatch",
        "boolean",
    );
    assert_error(
        &backend_with_servers("queue = { size = 1 }", &[]),
        8,
        "backend[0].queue.size",
        "`max`",
    );
}

#[test]
fn a_queue_without_maxconn_is_an_error() {
    let text = backend_with_servers(
        "timeouts = { connect = \"1s\" }\nqueue = { max = 10 }",
        &["{ name = \"s1\", address = \"127.0.0.1:8080\" }"],
    );
    assert_error(
        &text,
        9,
        "backend[0].queue",
        "queue only applies when servers have `maxconn`",
    );
}
