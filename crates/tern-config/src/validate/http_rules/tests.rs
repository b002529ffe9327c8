//! Header rules and an optional `default_backend`: what parses into what, and located errors.

#![allow(clippy::unwrap_used)]

use crate::model::{Fetch, HttpAction, Piece, ValueFormat};
use crate::test_support::*;

/// `MINIMAL` with a frontend `http_request` (or `http_response`) list of `rules`.
pub(super) fn frontend_rules(key: &str, rules: &[&str]) -> String {
    with_frontend_lines(&format!("{key} = [\n{}\n]", rules.join(",\n")))
}

/// The error text of a config that must fail.
pub(super) fn errors(text: &str) -> String {
    parse_err(text)
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_action_parses_with_its_defaults() {
    let text = frontend_rules(
        "http_request",
        &[
            r#"{ action = "deny", if = "{ path_beg /admin }" }"#,
            r#"{ action = "deny", status = 429 }"#,
            r#"{ action = "return", content_type = "text/plain", body = "ok\n", if = "{ path /ping }" }"#,
            r#"{ action = "return", status = 204 }"#,
            r#"{ action = "set-header", name = "X-Port", value = "%[dst_port]" }"#,
            r#"{ action = "add-header", name = "X-Via", value = "tern 100%%" }"#,
            r#"{ action = "del-header", name = "X-Debug", unless = "LOCALHOST" }"#,
            r#"{ action = "set-header", name = "Host", value = "inside.test" }"#,
        ],
    );
    let fe = &parse_ok(&text).frontends[0];
    let actions: Vec<&HttpAction> = fe.http_request.iter().map(|r| &r.action).collect();
    assert_eq!(actions[0], &HttpAction::Deny { status: 403 });
    assert!(!fe.http_request[0].condition.is_always());
    assert_eq!(actions[1], &HttpAction::Deny { status: 429 });
    assert_eq!(
        actions[2],
        &HttpAction::Return {
            status: 200,
            content_type: Some("text/plain".into()),
            body: "ok\n".into()
        }
    );
    assert_eq!(
        actions[3],
        &HttpAction::Return {
            status: 204,
            content_type: None,
            body: Vec::new()
        }
    );
    assert_eq!(
        actions[4],
        &HttpAction::SetHeader {
            name: "X-Port".into(),
            value: ValueFormat {
                pieces: vec![Piece::Fetch(Fetch::DstPort)]
            }
        }
    );
    assert_eq!(
        actions[5],
        &HttpAction::AddHeader {
            name: "X-Via".into(),
            value: ValueFormat::text("tern 100%")
        }
    );
    assert_eq!(
        actions[6],
        &HttpAction::DelHeader {
            name: "X-Debug".into()
        }
    );
    assert!(fe.http_response.is_empty());
}

#[test]
fn backend_rules_use_the_backend_acls() {
    let text = with_backend_lines(
        "acl = { api = \"path_beg /api/\" }\n\
         http_request = [{ action = \"deny\", if = \"!api\" }]\n\
         http_response = [{ action = \"del-header\", name = \"Server\", if = \"{ hdr(x-internal) -m found }\" }]",
    );
    let be = &parse_ok(&text).backends[0];
    assert_eq!(be.http_request.len(), 1);
    assert_eq!(be.http_response.len(), 1);
    // A frontend's ACLs are not the backend's.
    let text = with_frontend_lines("acl = { api = \"path_beg /api/\" }").replace(
        "name = \"app\"\n",
        "name = \"app\"\nhttp_request = [{ action = \"deny\", if = \"api\" }]\n",
    );
    assert!(errors(&text).contains("backend[0].http_request[0].if: unknown ACL `api`"));
}

#[test]
fn mistakes_are_located() {
    let text = frontend_rules(
        "http_request",
        &[
            r#"{ action = "rejekt" }"#,
            r#"{ action = "deny", status = 418 }"#,
            r#"{ action = "set-header", name = "X-A", value = "1", status = 200 }"#,
            r#"{ action = "set-header", name = "Bad Name", value = "1" }"#,
            r#"{ action = "add-header", name = "Content-Length", value = "0" }"#,
            r#"{ action = "del-header", name = "Host" }"#,
            r#"{ action = "set-header", name = "X-A", value = "%ci" }"#,
            r#"{ action = "return", body = "x" }"#,
            r#"{ action = "return", status = 700 }"#,
            r#"{ action = "add-header", name = "X-A" }"#,
            r#"{ action = "deny", if = "nope" }"#,
            r#"{ name = "X-A" }"#,
            r#"{ action = "set-header", name = "Expect", value = "x" }"#,
        ],
    );
    let all = errors(&text);
    for expected in [
        "frontend[0].http_request[0].action: unknown action `rejekt`",
        "frontend[0].http_request[1].status: 418 has no error page",
        "frontend[0].http_request[2].status: `status` does not apply to action `set-header`",
        "frontend[0].http_request[3].name: `Bad Name` is not a header name",
        "frontend[0].http_request[4].name: `Content-Length` is managed by tern",
        "frontend[0].http_request[5].name: `Host` may only be replaced",
        "frontend[0].http_request[6].value: `%ci`: log-format variables",
        "frontend[0].http_request[7].body: a body needs its `content_type`",
        "frontend[0].http_request[8].status: 700 is out of range",
        "frontend[0].http_request[9]: missing key `value`",
        "frontend[0].http_request[10].if: unknown ACL `nope`",
        "frontend[0].http_request[11]: missing key `action`",
        "frontend[0].http_request[12].name: `Expect` is managed by tern",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
    // Lines point at the rule.
    assert_error(&text, 7, "frontend[0].http_request[1].status", "418");
}

#[test]
fn response_rules_only_edit_headers_and_read_what_is_there() {
    let text = frontend_rules(
        "http_response",
        &[
            r#"{ action = "redirect", location = "/" }"#,
            r#"{ action = "set-header", name = "X-Path", value = "%[path]" }"#,
            r#"{ action = "del-header", name = "Server", if = "{ path_beg /a } METH_GET" }"#,
            r#"{ action = "set-header", name = "Connection", value = "close" }"#,
        ],
    );
    let all = errors(&text);
    for expected in [
        "frontend[0].http_response[0].action: `redirect` in http_response is not supported: use it in http_request",
        "frontend[0].http_response[1].value: path cannot be used in http_response",
        "frontend[0].http_response[2].if: path, method cannot be used in http_response",
        "frontend[0].http_response[3].name: `Connection` is managed by tern",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
    let ok = frontend_rules(
        "http_response",
        &[
            r#"{ action = "set-header", name = "X-Src", value = "%[src] %[hdr(server)]", if = "{ ssl_fc } || { hdr(x-a) 1 }" }"#,
            r#"{ action = "add-header", name = "Host", value = "responses may" }"#,
            r#"{ action = "deny", if = "{ hdr(x-secret) -m found }" }"#,
        ],
    );
    let fe = &parse_ok(&ok).frontends[0];
    assert_eq!(fe.http_response.len(), 3);
    // HAProxy's default for a denied response is 502.
    assert_eq!(fe.http_response[2].action, HttpAction::Deny { status: 502 });
}

#[test]
fn default_backend_may_be_left_out_only_with_use_backend_rules() {
    let routed = MINIMAL.replace(
        "default_backend = \"app\"\n",
        "use_backend = [{ backend = \"app\", if = \"{ path_beg /app/ }\" }]\n",
    );
    let fe = &parse_ok(&routed).frontends[0];
    assert_eq!(fe.default_backend, None);
    assert_eq!(fe.use_backend.len(), 1);
    let bare = MINIMAL.replace("default_backend = \"app\"\n", "");
    assert!(errors(&bare).contains("missing key `default_backend`"));
    let empty = MINIMAL.replace("default_backend = \"app\"\n", "use_backend = []\n");
    assert!(errors(&empty).contains("missing key `default_backend`"));
}
