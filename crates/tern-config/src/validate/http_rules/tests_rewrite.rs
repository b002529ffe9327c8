//! Redirect and rewrite rules in TOML: what they parse into, and located errors.

use super::tests::{errors, frontend_rules};
use crate::model::{HttpAction, LinePart, Redirect, RedirectTo, ValueFormat};
use crate::test_support::*;

#[test]
fn a_redirect_takes_haproxy_defaults_and_options() {
    let text = frontend_rules(
        "http_request",
        &[
            r#"{ action = "redirect", scheme = "https", code = 301, unless = "{ ssl_fc }" }"#,
            r#"{ action = "redirect", location = "/login", set_cookie = "A=1" }"#,
        ],
    );
    let fe = &parse_ok(&text).frontends[0];
    assert_eq!(
        fe.http_request[0].action,
        HttpAction::Redirect(Box::new(Redirect {
            to: RedirectTo::Scheme(ValueFormat::text("https")),
            code: 301,
            drop_query: false,
            append_slash: false,
            cookie: None,
        }))
    );
    match &fe.http_request[1].action {
        HttpAction::Redirect(r) => {
            assert_eq!(r.code, 302);
            assert_eq!(r.cookie.as_deref(), Some("A=1; path=/;"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn set_path_parses_with_samples() {
    let text = frontend_rules(
        "http_request",
        &[r#"{ action = "set-path", value = "/v2%[path]" }"#],
    );
    let fe = &parse_ok(&text).frontends[0];
    assert!(matches!(
        fe.http_request[0].action,
        HttpAction::SetLine {
            part: LinePart::Path,
            ..
        }
    ));
}

#[test]
fn mistakes_are_located() {
    for (rule, key, needle) in [
        (
            r#"{ action = "redirect" }"#,
            "http_request[0]",
            "needs one of",
        ),
        (
            r#"{ action = "redirect", location = "/a", prefix = "/b" }"#,
            "http_request[0].prefix",
            "not several",
        ),
        (
            r#"{ action = "redirect", location = "/a", code = 200 }"#,
            "http_request[0].code",
            "not a redirect code",
        ),
        (
            r#"{ action = "redirect", location = "/a", status = 301 }"#,
            "http_request[0].status",
            "does not apply",
        ),
        (
            r#"{ action = "replace-path", regex = "(", value = "/" }"#,
            "http_request[0].regex",
            "bad regular expression",
        ),
        (
            r#"{ action = "replace-path", value = "/" }"#,
            "http_request[0]",
            "missing key `regex`",
        ),
        (
            r#"{ action = "set-path", value = "/a b" }"#,
            "http_request[0].value",
            "request target",
        ),
        (
            r#"{ action = "set-method", value = "G T" }"#,
            "http_request[0].value",
            "not a method",
        ),
        (
            r#"{ action = "del-header", name = "X-", match = "pre" }"#,
            "http_request[0].match",
            "unknown match",
        ),
        (
            r#"{ action = "set-status", status = 404 }"#,
            "http_request[0].action",
            "use it in http_response",
        ),
    ] {
        let e = errors(&frontend_rules("http_request", &[rule]));
        assert!(
            e.contains(&format!("frontend[0].{key}: ")) && e.contains(needle),
            "{rule}: {e}"
        );
    }
    let e = errors(&frontend_rules(
        "http_response",
        &[r#"{ action = "redirect", location = "/" }"#],
    ));
    assert!(e.contains("use it in http_request"), "{e}");
}
