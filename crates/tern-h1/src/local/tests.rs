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
