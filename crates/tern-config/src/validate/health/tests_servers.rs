//! Per-server `check` (true, false, overrides, `address`), `observe`, and the invalid
//! combinations named when these keys were specified.

#![allow(clippy::unwrap_used)]

use super::tests::{addr, default_http, default_tcp};
use crate::model::{CheckKind, HttpCheck, Observe, ObserveOn, OnError};
use crate::test_support::{
    assert_error, backend_error, backend_with_servers, parse_backend, parse_err, parse_ok,
    SERVERS_LINE,
};

#[test]
fn address_is_for_a_single_server_and_replaces_the_port() {
    assert_error(
        &backend_with_servers(
            "check = { address = \"127.0.0.1:9000\" }",
            &["{ name = \"s1\", address = \"127.0.0.1:8080\" }"],
        ),
        8,
        "backend[0].check.address",
        "only accepted in a server's own `check` table",
    );
    let text = backend_with_servers(
        "check = { port = 9000 }",
        &[
            "{ name = \"s1\", address = \"127.0.0.1:8080\", check = { address = \"127.0.0.2:7000\" } }",
            "{ name = \"s2\", address = \"localhost:8081\", check = { address = \"localhost:7001\" } }",
        ],
    );
    let servers = &parse_ok(&text).backends[0].servers;
    assert_eq!(
        servers[0].check.as_ref().unwrap().address,
        addr("127.0.0.2:7000")
    );
    let address = servers[1].check.as_ref().unwrap().address;
    assert!(address.ip().is_loopback() && address.port() == 7001);
    let text = backend_with_servers(
        "",
        &["{ name = \"s1\", address = \"127.0.0.1:8080\", check = { port = 1, address = \"127.0.0.1:2\" } }"],
    );
    assert_error(
        &text,
        9,
        "backend[0].servers[0].check.port",
        "`address` already gives the port",
    );
    let text = backend_with_servers(
        "",
        &["{ name = \"s1\", address = \"127.0.0.1:8080\", check = { address = \"127.0.0.1\" } }"],
    );
    assert_error(
        &text,
        9,
        "backend[0].servers[0].check.address",
        "needs a port",
    );
}

#[test]
fn servers_choose_with_true_false_or_a_table() {
    // No backend check: `true` is a TCP check with defaults, a table overrides the defaults.
    let text = backend_with_servers(
        "",
        &[
            "{ name = \"a\", address = \"127.0.0.1:1\", check = true }",
            "{ name = \"b\", address = \"127.0.0.1:2\", check = { path = \"/up\", fall = 5 } }",
            "{ name = \"c\", address = \"127.0.0.1:3\" }",
            "{ name = \"d\", address = \"127.0.0.1:4\", check = false }",
        ],
    );
    let servers = &parse_ok(&text).backends[0].servers;
    assert_eq!(servers[0].check, Some(default_tcp("127.0.0.1:1")));
    let b = servers[1].check.as_ref().unwrap();
    let up = HttpCheck {
        path: "/up".into(),
        ..default_http()
    };
    assert_eq!(b.kind, CheckKind::Http(up));
    assert_eq!((b.rise, b.fall, b.address), (2, 5, addr("127.0.0.1:2")));
    assert_eq!(servers[2].check, None);
    assert_eq!(servers[3].check, None);
}

#[test]
fn a_server_that_sets_its_own_type_leaves_unused_backend_keys_behind() {
    let text = backend_with_servers(
        "check = { path = \"/health\", expect_body = \"ok\" }",
        &[
            "{ name = \"a\", address = \"127.0.0.1:1\", check = { type = \"tcp\" } }",
            "{ name = \"b\", address = \"127.0.0.1:2\", check = { type = \"https\", sni = \"b.example\" } }",
        ],
    );
    let servers = &parse_ok(&text).backends[0].servers;
    assert_eq!(servers[0].check.as_ref().unwrap().kind, CheckKind::Tcp);
    let health = HttpCheck {
        path: "/health".into(),
        expect_body: Some("ok".into()),
        ..default_http()
    };
    assert_eq!(
        servers[1].check.as_ref().unwrap().kind,
        CheckKind::Tls {
            sni: Some("b.example".into()),
            http: Some(health),
        }
    );
    // Keys the server writes itself must fit the type it inherits.
    let text = backend_with_servers(
        "check = { type = \"tls\" }",
        &["{ name = \"a\", address = \"127.0.0.1:1\", check = { path = \"/x\" } }"],
    );
    assert_error(
        &text,
        10,
        "backend[0].servers[0].check.path",
        "only applies with type = \"http\" or \"https\" (this check is \"tls\")",
    );
}

#[test]
fn observe_reads_its_keys_and_defaults() {
    let observe = |lines: &str| parse_backend(&format!("check = {{}}\n{lines}")).observe;
    assert_eq!(observe(""), None);
    assert_eq!(
        observe("observe = { on = \"layer4\" }"),
        Some(Observe {
            on: ObserveOn::Layer4,
            error_limit: 10,
            on_error: OnError::FailCheck,
        })
    );
    for (text, on_error) in [
        ("fastinter", OnError::FastInterval),
        ("fail-check", OnError::FailCheck),
        ("sudden-death", OnError::SuddenDeath),
        ("mark-down", OnError::MarkDown),
    ] {
        let got = observe(&format!(
            "observe = {{ on = \"layer7\", error_limit = 1000, on_error = \"{text}\" }}"
        ));
        assert_eq!(
            got,
            Some(Observe {
                on: ObserveOn::Layer7,
                error_limit: 1000,
                on_error,
            })
        );
    }
}

#[test]
fn observe_rules() {
    for (observe, key, needle) in [
        ("error_limit = 3", "observe.on", "missing key `on`"),
        (
            "on = \"layer3\"",
            "observe.on",
            "supported: `layer4`, `layer7`",
        ),
        (
            "on = \"layer4\", error_limit = 0",
            "observe.error_limit",
            "between 1 and 1000",
        ),
        (
            "on = \"layer4\", on_error = \"down\"",
            "observe.on_error",
            "`mark-down`",
        ),
    ] {
        let err = backend_error(&format!("check = {{}}\nobserve = {{ {observe} }}"));
        assert!(
            err.contains(&format!(":9: backend[0].{key}: ")),
            "{observe}: {err}"
        );
        assert!(err.contains(needle), "{observe}: {err}");
    }
    assert_error(
        &backend_with_servers("observe = { on = \"layer4\" }", &[SERVERS_ITEM]),
        8,
        "backend[0].observe",
        "observe needs active checks (`check`) to bring servers back up",
    );
    // One checked server is enough.
    let text = backend_with_servers(
        "observe = { on = \"layer4\" }",
        &[
            SERVERS_ITEM,
            "{ name = \"s2\", address = \"127.0.0.1:2\", check = true }",
        ],
    );
    assert!(parse_ok(&text).backends[0].observe.is_some());
    // Every server opting out of the backend's check leaves nothing to bring them back.
    let text = backend_with_servers(
        "check = {}\nobserve = { on = \"layer4\" }",
        &["{ name = \"s1\", address = \"127.0.0.1:1\", check = false }"],
    );
    assert_error(&text, 9, "backend[0].observe", "needs active checks");
}

const SERVERS_ITEM: &str = "{ name = \"s1\", address = \"127.0.0.1:8080\" }";

#[test]
fn the_invalid_combinations_of_the_issue_are_all_reported_with_lines() {
    let text = crate::test_support::MINIMAL.replace(
        SERVERS_LINE,
        "balance = \"hdr()\"\n\
         check = { rise = 0 }\n\
         cookie = { name = \"SRV\", values = { s9 = \"x\" } }\n\
         servers = [ { name = \"s1\", address = \"127.0.0.1:8080\" } ]",
    );
    let errors = parse_err(&text);
    let got: Vec<(Option<usize>, &str)> = errors
        .iter()
        .map(|e| (e.line, e.key_path.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(8), "backend[0].balance"),
            (Some(9), "backend[0].check.rise"),
            (Some(10), "backend[0].cookie.values.s9"),
        ]
    );
    assert!(errors[0].message.contains("hdr() needs a header name"));
    assert!(errors[2].message.contains("no server named `s9`"));
}
