//! Redirect and rewrite rules on real parsed heads: the lines a redirect answers with, and the
//! request head a rewrite sends.

#![allow(clippy::unwrap_used)]

use super::tests::{config, requested};
use crate::rules::{on_request, Verdict};
use tern_h1::HeaderEdits;

fn rules(list: &[&str]) -> tern_config::Config {
    config(
        &format!(
            "default_backend = \"web\"\nhttp_request = [\n{}\n]",
            list.join(",\n")
        ),
        "",
    )
}

/// The verdict and redirect lines of `raw` under `list`.
fn redirected(list: &[&str], raw: &str) -> (String, String) {
    let cfg = rules(list);
    let head = super::tests::head(raw);
    let facts = super::facts::RequestFacts {
        head: &head,
        buf: raw.as_bytes(),
        conn: &super::tests::CONN,
        sni: None,
        pp_tlvs: None,
        vars: &std::cell::RefCell::default(),
        auth: Default::default(),
    };
    let mut edits = HeaderEdits::new();
    let verdict = on_request(&cfg.frontends[0].http_request, &facts, &mut edits);
    let lines = String::from_utf8(edits.added().to_vec()).unwrap();
    (format!("{verdict:?}"), lines)
}

#[test]
fn redirects_build_haproxy_locations() {
    let get = "GET /a/b?x=1 HTTP/1.1\r\nHost: ex.test:8080\r\n\r\n";
    let (v, lines) = redirected(
        &[r#"{ action = "redirect", scheme = "https", code = 301 }"#],
        get,
    );
    assert_eq!(v, format!("{:?}", Verdict::Redirect(301)));
    assert_eq!(lines, "location: https://ex.test:8080/a/b?x=1\r\n");
    let (_, lines) = redirected(
        &[
            r#"{ action = "redirect", prefix = "https://new.test", drop_query = true, append_slash = true, set_cookie = "M=1" }"#,
        ],
        get,
    );
    assert_eq!(
        lines,
        "location: https://new.test/a/b/\r\ncache-control: no-cache\r\nset-cookie: M=1; path=/;\r\n"
    );
    // A prefix of `/` redirects to the same URI.
    let (_, lines) = redirected(
        &[r#"{ action = "redirect", prefix = "/", code = 308 }"#],
        get,
    );
    assert_eq!(lines, "location: /a/b?x=1\r\n");
    let (_, lines) = redirected(
        &[
            r#"{ action = "redirect", location = "/login?from=%[path]", code = 303, clear_cookie = "S" }"#,
        ],
        get,
    );
    assert_eq!(
        lines,
        "location: /login?from=/a/b\r\ncache-control: no-cache\r\nset-cookie: S; path=/; Max-Age=0;\r\n"
    );
    // Earlier header edits are dropped: the request is not forwarded.
    let (_, lines) = redirected(
        &[
            r#"{ action = "set-header", name = "X-A", value = "1" }"#,
            r#"{ action = "redirect", location = "/x", code = 301 }"#,
        ],
        get,
    );
    assert_eq!(lines, "location: /x\r\n");
    let (v, _) = redirected(
        &[r#"{ action = "redirect", location = "/x", unless = "{ path_beg /a }" }"#],
        get,
    );
    assert_eq!(v, "Pass");
}

#[test]
fn request_line_rewrites_compose() {
    let cfg = rules(&[
        r#"{ action = "replace-path", regex = "^/api/(.*)", value = "/v2/\\1" }"#,
        r#"{ action = "set-query", value = "q=%[method]" }"#,
        r#"{ action = "set-method", value = "POST", if = "{ path /api/m }" }"#,
    ]);
    let (v, out) = requested(&cfg, "GET /api/x?old=1 HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(v, "Pass");
    assert_eq!(out, "GET /v2/x?q=GET HTTP/1.1\r\nHost: h\r\n\r\n");
    let (_, out) = requested(&cfg, "GET /api/m HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(out, "POST /v2/m?q=GET HTTP/1.1\r\nHost: h\r\n\r\n");
    let (_, out) = requested(&cfg, "GET http://h/web HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(out, "GET /web?q=GET HTTP/1.1\r\nHost: h\r\n\r\n");
    let cfg = rules(&[
        r#"{ action = "set-path", value = "/p%[hdr(x-p)]" }"#,
        r#"{ action = "replace-uri", regex = "^/p/(a)$", value = "/u/\\1?z" }"#,
    ]);
    let (_, out) = requested(&cfg, "GET /old?k HTTP/1.1\r\nHost: h\r\nX-P: /a\r\n\r\n");
    assert_eq!(out, "GET /p/a?k HTTP/1.1\r\nHost: h\r\nX-P: /a\r\n\r\n");
    // A sample that would break the request line: 500.
    let (v, _) = requested(&cfg, "GET /old HTTP/1.1\r\nHost: h\r\nX-P: a b\r\n\r\n");
    assert_eq!(v, "Deny(500)");
    let cfg = rules(&[r#"{ action = "set-uri", value = "/u%[path]" }"#]);
    let (_, out) = requested(&cfg, "GET /a?q HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(out, "GET /u/a HTTP/1.1\r\nHost: h\r\n\r\n");
}

#[test]
fn header_rewrites_replace_only_what_matches() {
    let cfg = rules(&[
        r#"{ action = "replace-header", name = "Host", regex = "^(.*):[0-9]+$", value = "\\1" }"#,
        r#"{ action = "replace-value", name = "X-T", regex = "^b$", value = "B" }"#,
        r#"{ action = "del-header", name = "x-debug-", match = "beg" }"#,
        r#"{ action = "replace-header", name = "X-None", regex = "z", value = "y" }"#,
    ]);
    let (_, out) = requested(
        &cfg,
        "GET / HTTP/1.1\r\nHost: ex.test:8080\r\nX-T: a, b\r\nX-Debug-A: 1\r\nX-None: a\r\nx-debug-b: 2\r\n\r\n",
    );
    assert_eq!(
        out,
        "GET / HTTP/1.1\r\nX-None: a\r\nHost: ex.test\r\nX-T: a, B\r\n\r\n"
    );
}

#[test]
fn variables_set_by_one_rule_are_read_by_the_next() {
    let cfg = rules(&[
        r#"{ action = "set-var", name = "txn.p", value = "%[path]" }"#,
        r#"{ action = "set-var", name = "sess.seen", value = "yes", if = "{ var(txn.p) -m beg /a }" }"#,
        r#"{ action = "set-header", name = "X-P", value = "%[var(txn.p)]-%[var(sess.seen)]" }"#,
        r#"{ action = "deny", status = 429, if = "{ var(txn.none) -m found }" }"#,
    ]);
    let (v, out) = requested(&cfg, "GET /a/b HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(v, "Pass");
    assert_eq!(out, "GET /a/b HTTP/1.1\r\nHost: h\r\nX-P: /a/b-yes\r\n\r\n");
    let (_, out) = requested(&cfg, "GET /z HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(out, "GET /z HTTP/1.1\r\nHost: h\r\nX-P: /z-\r\n\r\n");
}
