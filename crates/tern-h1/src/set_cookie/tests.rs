#![allow(clippy::unwrap_used)]

use super::*;
use crate::{parse_response, write_response_edited, Edits, Limits, Method, RequestHead};
use crate::{RequestInfo, ResponseHead};

const REWRITE: CookieEdit<'static> = CookieEdit::Rewrite {
    name: b"SRV",
    value: b"s1",
};
const PREFIX: CookieEdit<'static> = CookieEdit::Prefix {
    name: b"JSESSIONID",
    value: b"s1",
};

/// The response head tern writes for `raw` with `edit`.
fn rewritten(raw: &str, edit: CookieEdit<'_>) -> String {
    let mut head = ResponseHead::new();
    parse_response(raw.as_bytes(), &Limits::default(), &mut head, Method::Get).unwrap();
    let mut req = RequestHead::new();
    let get = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    crate::parse_request(get.as_bytes(), &Limits::default(), &mut req).unwrap();
    let info: RequestInfo = req.info();
    let edits = Edits {
        cookie: Some(edit),
        ..Edits::default()
    };
    let mut out = Vec::new();
    write_response_edited(&head, raw.as_bytes(), &info, &edits, &mut out);
    String::from_utf8(out).unwrap()
}

fn head(fields: &str) -> String {
    format!("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n{fields}\r\n")
}

#[test]
fn rewrite_replaces_the_value_and_keeps_the_attributes() {
    let got = rewritten(
        &head("Set-Cookie: SRV=app-chosen; Path=/; HttpOnly\r\n"),
        REWRITE,
    );
    assert_eq!(got, head("Set-Cookie: SRV=s1; Path=/; HttpOnly\r\n"));
}

#[test]
fn prefix_puts_the_server_before_the_value() {
    let got = rewritten(
        &head("x-a: 1\r\nset-cookie: JSESSIONID=abc123; Secure\r\nx-b: 2\r\n"),
        PREFIX,
    );
    assert_eq!(
        got,
        head("x-a: 1\r\nset-cookie: JSESSIONID=s1~abc123; Secure\r\nx-b: 2\r\n")
    );
}

#[test]
fn quoted_values_keep_their_quotes_and_spaces_are_tolerated() {
    let got = rewritten(
        &head("Set-Cookie: JSESSIONID = \"abc\" ; Path=/\r\n"),
        PREFIX,
    );
    assert_eq!(
        got,
        head("Set-Cookie: JSESSIONID = \"s1~abc\" ; Path=/\r\n")
    );
    let got = rewritten(&head("Set-Cookie: SRV=\"x\"\r\n"), REWRITE);
    assert_eq!(got, head("Set-Cookie: SRV=\"s1\"\r\n"));
    let got = rewritten(&head("Set-Cookie: SRV=\r\n"), REWRITE);
    assert_eq!(got, head("Set-Cookie: SRV=s1\r\n"), "an empty value");
}

#[test]
fn only_the_named_cookie_of_each_set_cookie_changes() {
    let raw = head(
        "Set-Cookie: lang=en; Path=/\r\nSet-Cookie: SRV=a\r\nSet-Cookie: srv=lower\r\nSet-Cookie: other=1; SRV=attr\r\n",
    );
    let got = rewritten(&raw, REWRITE);
    assert_eq!(
        got,
        head(
            "Set-Cookie: lang=en; Path=/\r\nSet-Cookie: SRV=s1\r\nSet-Cookie: srv=lower\r\nSet-Cookie: other=1; SRV=attr\r\n"
        ),
        "names are case-sensitive and an attribute is not a cookie"
    );
}

#[test]
fn a_response_without_the_cookie_is_unchanged() {
    for raw in [
        head("Set-Cookie: lang=en\r\nx-a: SRV=1\r\n"),
        head("Set-Cookie: SRV\r\n"),
        head(""),
    ] {
        assert_eq!(rewritten(&raw, REWRITE), raw);
        assert_eq!(rewritten(&raw, CookieEdit::Drop(b"SRV")), raw);
    }
}

#[test]
fn drop_removes_every_set_cookie_of_the_name() {
    let raw = head(
        "Set-Cookie: JSESSIONID=a\r\nSet-Cookie: lang=en\r\nSet-Cookie: JSESSIONID=b; Path=/\r\n",
    );
    assert_eq!(
        rewritten(&raw, CookieEdit::Drop(b"JSESSIONID")),
        head("Set-Cookie: lang=en\r\n")
    );
}

#[test]
fn request_edits_leave_responses_alone() {
    let raw = head("Set-Cookie: SRV=a\r\n");
    assert_eq!(rewritten(&raw, CookieEdit::Strip(b"SRV")), raw);
    assert_eq!(rewritten(&raw, CookieEdit::Unprefix(b"SRV")), raw);
}

#[test]
fn informational_heads_are_not_edited() {
    let raw = "HTTP/1.1 103 Early Hints\r\nSet-Cookie: SRV=a\r\n\r\n";
    assert_eq!(rewritten(raw, REWRITE), raw);
}
