#![allow(clippy::unwrap_used)]

use super::*;

fn resp_to(raw: &str, method: Method) -> Result<ResponseHead, H1Error> {
    let mut head = ResponseHead::new();
    match parse_response(raw.as_bytes(), &Limits::default(), &mut head, method)? {
        Status::Complete(len) => {
            assert_eq!(len, raw.len());
            Ok(head)
        }
        Status::Partial => panic!("partial: {raw:?}"),
    }
}

fn resp(raw: &str) -> Result<ResponseHead, H1Error> {
    resp_to(raw, Method::Get)
}

#[test]
fn a_simple_response_is_parsed() {
    let raw = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\n";
    let h = resp(raw).unwrap();
    assert_eq!(h.status(), 200);
    assert_eq!(h.reason().get(raw.as_bytes()), b"OK");
    assert_eq!(h.version(), Version::Http11);
    assert_eq!(h.body(), ResponseBody::Length(5));
    assert!(h.keep_alive());
    assert_eq!(h.fields().len(), 2);
}

#[test]
fn reason_may_be_empty_or_missing() {
    assert_eq!(resp("HTTP/1.1 204\r\n\r\n").unwrap().reason(), Span::EMPTY);
    let h = resp("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n").unwrap();
    assert!(h.reason().is_empty());
    // obs-text in the reason: httparse hands back "", which must not become a bogus span.
    let raw = "HTTP/1.1 200 \u{e9}\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(resp(raw).unwrap().reason(), Span::EMPTY);
}

#[test]
fn framing_follows_rfc_9112_section_6_3() {
    let cl = "Content-Length: 10\r\n";
    let te = "Transfer-Encoding: chunked\r\n";
    let cases = [
        // 1: HEAD, 1xx, 204, 304: no body, whatever the fields say.
        ("200 OK", cl, Method::Head, ResponseBody::None),
        ("100 Continue", "", Method::Get, ResponseBody::None),
        ("103 Early Hints", "", Method::Get, ResponseBody::None),
        ("204 No Content", cl, Method::Get, ResponseBody::None),
        ("304 Not Modified", te, Method::Get, ResponseBody::None),
        // 2: 2xx to CONNECT is a tunnel; a refusal has a body as usual.
        ("200 OK", "", Method::Connect, ResponseBody::Tunnel),
        ("407 Auth", cl, Method::Connect, ResponseBody::Length(10)),
        // 4: chunked; 6: content-length; 8: until close.
        ("200 OK", te, Method::Get, ResponseBody::Chunked),
        ("200 OK", cl, Method::Post, ResponseBody::Length(10)),
        ("200 OK", "", Method::Get, ResponseBody::UntilClose),
        ("404 Not Found", "", Method::Get, ResponseBody::UntilClose),
    ];
    for (status, fields, method, want) in cases {
        let raw = format!("HTTP/1.1 {status}\r\n{fields}\r\n");
        assert_eq!(
            resp_to(&raw, method).unwrap().body(),
            want,
            "{raw:?} to {method:?}"
        );
    }
}

#[test]
fn head_response_keeps_the_declared_length() {
    let h = resp_to(
        "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
        Method::Head,
    )
    .unwrap();
    assert_eq!(
        (h.body(), h.content_length()),
        (ResponseBody::None, Some(1000))
    );
    assert!(h.keep_alive());
}

#[test]
fn bad_framing_is_a_502() {
    for fields in [
        "Transfer-Encoding: gzip\r\n",
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked, chunked\r\n",
        "Content-Length: 1\r\nContent-Length: 2\r\n",
        "Content-Length: -1\r\n",
        "Content-Length: 99999999999999999999\r\n",
    ] {
        let raw = format!("HTTP/1.1 200 OK\r\n{fields}\r\n");
        assert!(resp(&raw).is_err(), "{raw:?}");
    }
    // RFC 9112 §6.1: HTTP/1.0 with Transfer-Encoding has faulty framing.
    assert_eq!(
        resp("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap_err(),
        H1Error::InvalidTransferEncoding
    );
}

#[test]
fn both_framings_mean_chunked_and_no_reuse() {
    // RFC 9112 §6.3 item 3.
    let h = resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
    let h = h.unwrap();
    assert_eq!(h.body(), ResponseBody::Chunked);
    assert!(!h.keep_alive());
}

#[test]
fn status_codes_outside_100_to_599_are_refused() {
    for s in ["000", "099", "600", "999"] {
        let raw = format!("HTTP/1.1 {s} X\r\n\r\n");
        assert_eq!(resp(&raw).unwrap_err(), H1Error::InvalidStatus, "{s}");
    }
    assert!(resp("HTTP/1.1 20 OK\r\n\r\n").is_err());
    assert!(resp("HTTP/1.1 2000 OK\r\n\r\n").is_err());
    assert!(resp("ICY 200 OK\r\n\r\n").is_err());
}

#[test]
fn server_connection_reuse() {
    // RFC 9112 §9.3.
    let ka = |raw: &str| resp(raw).unwrap().keep_alive();
    assert!(ka("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
    assert!(!ka(
        "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    ));
    assert!(!ka("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
    assert!(ka(
        "HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n"
    ));
    assert!(!ka("HTTP/1.1 200 OK\r\n\r\n"), "body until close");
    assert!(!ka(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"
    ));
}

#[test]
fn obs_fold_and_limits_in_responses() {
    assert!(resp("HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n").is_err());
    let limits = Limits {
        max_headers: 2,
        ..Limits::default()
    };
    let mut head = ResponseHead::new();
    let raw = b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    let got = parse_response(raw, &limits, &mut head, Method::Get);
    assert_eq!(got, Err(H1Error::TooManyHeaders));
    let limits = Limits {
        max_head_size: 20,
        ..Limits::default()
    };
    let got = parse_response(raw, &limits, &mut head, Method::Get);
    assert_eq!(got, Err(H1Error::HeadTooLarge));
    assert_eq!(
        parse_response(&raw[..19], &limits, &mut head, Method::Get),
        Ok(Status::Partial)
    );
}
