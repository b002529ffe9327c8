#![allow(clippy::unwrap_used)]

use super::*;

fn parts(method: &str, uri: &str, fields: &[(&str, &str)]) -> Parts {
    let mut b = http::Request::builder().method(method).uri(uri);
    for (n, v) in fields {
        b = b.header(*n, *v);
    }
    b.body(()).unwrap().into_parts().0
}

fn head(p: &Parts, ends_stream: bool) -> (String, BodyFraming) {
    let mut out = Vec::new();
    let framing = write_head(p, ends_stream, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), framing)
}

#[test]
fn authority_becomes_host_first_and_the_target_is_origin_form() {
    let p = parts("GET", "https://example.com/a/b?x=1", &[("accept", "*/*")]);
    let (h, f) = head(&p, true);
    assert_eq!(
        h,
        "GET /a/b?x=1 HTTP/1.1\r\nhost: example.com\r\naccept: */*\r\n\r\n"
    );
    assert_eq!(f, BodyFraming::Empty);
}

#[test]
fn cookie_crumbs_are_joined_and_te_trailers_kept() {
    let p = parts(
        "GET",
        "https://a/",
        &[("cookie", "a=1"), ("te", "trailers"), ("cookie", "b=2")],
    );
    let (h, _) = head(&p, true);
    assert_eq!(
        h,
        "GET / HTTP/1.1\r\nhost: a\r\nte: trailers\r\ncookie: a=1; b=2\r\n\r\n"
    );
}

#[test]
fn a_body_without_length_is_chunked_one_with_length_passed() {
    let p = parts("POST", "https://a/up", &[]);
    let (h, f) = head(&p, false);
    assert!(h.ends_with("transfer-encoding: chunked\r\n\r\n"), "{h}");
    assert_eq!(f, BodyFraming::Chunked);

    let p = parts("POST", "https://a/up", &[("content-length", "5")]);
    let (h, f) = head(&p, false);
    assert!(h.contains("content-length: 5\r\n"), "{h}");
    assert!(!h.contains("transfer-encoding"), "{h}");
    assert_eq!(f, BodyFraming::Length);
}

#[test]
fn host_must_match_authority() {
    let p = parts("GET", "https://a.example/", &[("host", "A.example")]);
    let (h, _) = head(&p, true);
    assert_eq!(h.matches("host:").count(), 1, "{h}");

    let p = parts("GET", "https://a.example/", &[("host", "b.example")]);
    let mut out = Vec::new();
    let e = write_head(&p, true, &mut out).unwrap_err();
    assert_eq!(e, Refused::HostMismatch);
    assert_eq!(e.status(), 400);
}

#[test]
fn without_authority_the_host_field_is_kept() {
    let p = parts("GET", "/x", &[("host", "h.example")]);
    let (h, _) = head(&p, true);
    assert_eq!(h, "GET /x HTTP/1.1\r\nhost: h.example\r\n\r\n");
}

#[test]
fn connect_is_refused() {
    let p = parts("CONNECT", "a.example:443", &[]);
    let mut out = Vec::new();
    assert_eq!(write_head(&p, true, &mut out).unwrap_err().status(), 501);
}

#[test]
fn the_head_parses_as_http1() {
    let p = parts(
        "PUT",
        "https://a/k?v=1",
        &[("cookie", "a=1"), ("cookie", "b=2"), ("x-y", "z")],
    );
    let mut out = Vec::new();
    write_head(&p, false, &mut out).unwrap();
    let mut parsed = tern_h1::RequestHead::new();
    let status = tern_h1::parse_request(&out, &tern_h1::Limits::default(), &mut parsed).unwrap();
    assert_eq!(status, tern_h1::Status::Complete(out.len()));
    assert_eq!(parsed.framing(), tern_h1::Framing::Chunked);
    assert_eq!(parsed.method(), tern_h1::Method::Put);
}
