#![allow(clippy::unwrap_used)]

use super::*;
use crate::{parse_request, Limits, Status};

fn parsed(raw: &str) -> RequestHead {
    let mut head = RequestHead::new();
    let got = parse_request(raw.as_bytes(), &Limits::default(), &mut head).unwrap();
    assert!(matches!(got, Status::Complete(_)));
    head
}

#[test]
fn finds_a_cookie_among_others_and_in_a_second_field() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: a=1; SRV=web2 ;b=2\r\ncookie: c=3\r\n\r\n";
    let head = parsed(raw);
    assert_eq!(
        find_cookie(&head, raw.as_bytes(), b"SRV"),
        Some(&b"web2"[..])
    );
    assert_eq!(find_cookie(&head, raw.as_bytes(), b"c"), Some(&b"3"[..]));
    assert_eq!(
        find_cookie(&head, raw.as_bytes(), b"srv"),
        None,
        "names are case-sensitive"
    );
    assert_eq!(find_cookie(&head, raw.as_bytes(), b"x"), None);
}

#[test]
fn quoted_values_lose_their_quotes_and_bare_words_are_skipped() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: flag; SRV=\"w1\"\r\n\r\n";
    let head = parsed(raw);
    assert_eq!(find_cookie(&head, raw.as_bytes(), b"SRV"), Some(&b"w1"[..]));
    assert_eq!(find_cookie(&head, raw.as_bytes(), b"flag"), None);
}

fn without(raw: &str, name: &[u8]) -> (String, bool) {
    let head = parsed(raw);
    let f = head
        .fields()
        .iter()
        .find(|f| is_cookie(f, raw.as_bytes()))
        .copied()
        .unwrap();
    let mut out = Vec::new();
    let removed = write_without(&mut out, raw.as_bytes(), &f, name);
    (String::from_utf8(out).unwrap(), removed)
}

#[test]
fn removing_keeps_the_other_cookies_in_order() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: a=1; SRV=w1; b=2; flag\r\n\r\n";
    assert_eq!(
        without(raw, b"SRV"),
        ("cookie: a=1; b=2; flag\r\n".to_owned(), true)
    );
    assert_eq!(
        without(raw, b"zzz"),
        ("cookie: a=1; SRV=w1; b=2; flag\r\n".to_owned(), false)
    );
}

#[test]
fn a_field_left_empty_is_dropped() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: SRV=w1; SRV=w2\r\n\r\n";
    assert_eq!(without(raw, b"SRV"), (String::new(), true));
}

fn unprefixed(raw: &str, name: &[u8]) -> (String, bool) {
    let head = parsed(raw);
    let f = head
        .fields()
        .iter()
        .find(|f| is_cookie(f, raw.as_bytes()))
        .copied()
        .unwrap();
    let mut out = Vec::new();
    let changed = write_unprefixed(&mut out, raw.as_bytes(), &f, name);
    (String::from_utf8(out).unwrap(), changed)
}

#[test]
fn unprefix_removes_the_server_part_of_the_named_cookie_only() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: a=x~1; JSID=s1~abc;b=2; JSID=s2~d~e\r\n\r\n";
    assert_eq!(
        unprefixed(raw, b"JSID"),
        (
            "cookie: a=x~1; JSID=abc; b=2; JSID=d~e\r\n".to_owned(),
            true
        ),
        "every occurrence, up to the first `~` only"
    );
}

#[test]
fn unprefix_keeps_quotes_and_values_without_a_prefix() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: JSID=\"s1~abc\"; flag\r\n\r\n";
    assert_eq!(
        unprefixed(raw, b"JSID"),
        ("cookie: JSID=\"abc\"; flag\r\n".to_owned(), true)
    );
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: JSID=abc; x=~1\r\n\r\n";
    assert_eq!(
        unprefixed(raw, b"JSID"),
        ("cookie: JSID=abc; x=~1\r\n".to_owned(), false)
    );
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nCookie: JSID=~abc\r\n\r\n";
    assert_eq!(
        unprefixed(raw, b"JSID"),
        ("cookie: JSID=abc\r\n".to_owned(), true),
        "an empty server part is removed too"
    );
}

#[test]
fn prefix_server_is_what_comes_before_the_first_delimiter() {
    assert_eq!(prefix_server(b"s1~abc~d"), b"s1");
    assert_eq!(prefix_server(b"~abc"), b"");
    assert_eq!(prefix_server(b"s1"), b"s1", "no delimiter: the whole value");
}
