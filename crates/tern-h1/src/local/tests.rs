#![allow(clippy::unwrap_used)]

use super::*;
use crate::{parse_response, Limits, Method, ResponseBody, ResponseHead, Status};

#[test]
fn pages_are_complete_responses_that_parse_back() {
    for status in [200, 400, 408, 431, 501, 502, 503, 504] {
        let page = Page::for_status(status);
        assert_eq!(page.status(), status);
        for close in [false, true] {
            let mut out = Vec::new();
            write_page(page, close, false, &mut out);
            let mut head = ResponseHead::new();
            let Ok(Status::Complete(len)) =
                parse_response(&out, &Limits::default(), &mut head, Method::Get)
            else {
                panic!("{}", String::from_utf8_lossy(&out))
            };
            assert_eq!(head.status(), status);
            assert_eq!(head.body(), ResponseBody::Length((out.len() - len) as u64));
            assert_eq!(head.keep_alive(), !close);
        }
    }
    assert_eq!(Page::for_status(599), Page::Unavailable);
}

#[test]
fn pages_use_haproxy_wording() {
    let mut out = Vec::new();
    write_page(Page::Monitor, false, false, &mut out);
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.ends_with("<html><body><h1>200 OK</h1>\nService ready.\n</body></html>\n"));
    let mut out = Vec::new();
    write_page(Page::GatewayTimeout, true, true, &mut out);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("connection: close\r\n"), "{text}");
    assert!(
        text.ends_with("\r\n\r\n"),
        "HEAD answer without body: {text}"
    );
    assert!(text.contains("content-length: 92\r\n"), "{text}");
}

#[test]
fn continue_is_an_interim_response() {
    let mut head = ResponseHead::new();
    let got = parse_response(CONTINUE, &Limits::default(), &mut head, Method::Post);
    assert_eq!(got, Ok(Status::Complete(CONTINUE.len())));
    assert!(head.is_informational());
}

/// Parses a complete response written by tern; (status, head length).
fn parse_back(out: &[u8]) -> (ResponseHead, usize) {
    let mut head = ResponseHead::new();
    let Ok(Status::Complete(len)) = parse_response(out, &Limits::default(), &mut head, Method::Get)
    else {
        panic!("{}", String::from_utf8_lossy(out))
    };
    (head, len)
}

#[test]
fn deny_pages_exist_for_every_deny_status() {
    for &status in DENY_STATUSES {
        let mut out = Vec::new();
        write_page(Page::Denied(status), true, false, &mut out);
        let (head, len) = parse_back(&out);
        assert_eq!(head.status(), status);
        assert_eq!(Page::Denied(status).status(), status);
        let body = String::from_utf8_lossy(&out[len..]).into_owned();
        assert!(body.contains(&format!("<h1>{status} ")), "{body}");
    }
    assert_eq!(Page::Denied(418).status(), 403);
}

#[test]
fn replies_carry_status_type_and_body() {
    let mut out = Vec::new();
    write_reply(200, Some(b"text/plain"), b"ok\n", false, false, &mut out);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-type: text/plain\r\n\r\nok\n"
    );
    let mut out = Vec::new();
    write_reply(299, None, b"", true, false, &mut out);
    let (head, _) = parse_back(&out);
    assert_eq!((head.status(), head.keep_alive()), (299, false));
    assert_eq!(head.body(), ResponseBody::Length(0));
    let mut out = Vec::new();
    write_reply(204, None, b"", false, false, &mut out);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "HTTP/1.1 204 No Content\r\n\r\n"
    );
    let mut out = Vec::new();
    write_reply(
        404,
        Some(b"text/html"),
        b"<p>gone</p>",
        false,
        true,
        &mut out,
    );
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.ends_with("content-length: 11\r\ncontent-type: text/html\r\n\r\n"),
        "{text}"
    );
}
