#![allow(clippy::unwrap_used)]

use super::*;
use crate::fields::FieldKind;

/// Parses a complete head (no body bytes after it) with the default limits.
fn req(raw: &str) -> Result<RequestHead, H1Error> {
    let mut head = RequestHead::new();
    match parse_request(raw.as_bytes(), &Limits::default(), &mut head)? {
        Status::Complete(len) => {
            assert_eq!(len, raw.len(), "head length");
            Ok(head)
        }
        Status::Partial => panic!("partial: {raw:?}"),
    }
}

fn err(raw: &str) -> H1Error {
    req(raw)
        .err()
        .unwrap_or_else(|| panic!("accepted: {raw:?}"))
}

fn text(span: Span, raw: &str) -> &str {
    std::str::from_utf8(span.get(raw.as_bytes())).unwrap()
}

#[test]
fn a_simple_get_is_parsed_into_spans_and_facts() {
    let raw = "GET /a?b=1 HTTP/1.1\r\nHost: example.test\r\nAccept: */*\r\n\r\n";
    let h = req(raw).unwrap();
    assert_eq!(h.method(), Method::Get);
    assert_eq!(h.method_bytes(raw.as_bytes()), b"GET");
    assert_eq!(text(h.target(), raw), "/a?b=1");
    assert_eq!(h.form(), TargetForm::Origin);
    assert_eq!(h.version(), Version::Http11);
    assert_eq!(text(h.host().unwrap(), raw), "example.test");
    assert_eq!(h.framing(), Framing::None);
    assert!(h.keep_alive());
    assert_eq!(h.fields().len(), 2);
    assert_eq!(h.fields()[1].name(raw.as_bytes()), b"Accept");
    assert_eq!(h.fields()[1].value(raw.as_bytes()), b"*/*");
}

#[test]
fn partial_until_the_empty_line_then_complete_at_its_end() {
    let raw = b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
    let mut head = RequestHead::new();
    let limits = Limits::default();
    for cut in 0..raw.len() - 3 {
        assert_eq!(
            parse_request(&raw[..cut], &limits, &mut head),
            Ok(Status::Partial),
            "cut at {cut}"
        );
    }
    let len = raw.len() - 3;
    assert_eq!(
        parse_request(raw, &limits, &mut head),
        Ok(Status::Complete(len))
    );
    assert_eq!(head.framing(), Framing::Length(3));
}

#[test]
fn leading_empty_lines_and_bare_lf_are_tolerated() {
    // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line,
    // and MAY accept a bare LF as a line terminator (httparse does).
    let h = req("\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    assert_eq!(h.method(), Method::Get);
    let h = req("GET / HTTP/1.1\nHost: h\n\n").unwrap();
    assert_eq!(text(h.host().unwrap(), "GET / HTTP/1.1\nHost: h\n\n"), "h");
}

#[test]
fn methods_are_case_sensitive_tokens() {
    // RFC 9110 §9.1: the method token is case-sensitive.
    for (m, want) in [
        ("GET", Method::Get),
        ("HEAD", Method::Head),
        ("POST", Method::Post),
        ("PUT", Method::Put),
        ("DELETE", Method::Delete),
        ("OPTIONS", Method::Options),
        ("TRACE", Method::Trace),
        ("PATCH", Method::Patch),
    ] {
        assert_eq!(
            req(&format!("{m} / HTTP/1.1\r\nHost: h\r\n\r\n"))
                .unwrap()
                .method(),
            want
        );
    }
    let raw = "get / HTTP/1.1\r\nHost: h\r\n\r\n";
    assert_eq!(req(raw).unwrap().method(), Method::Other(Span::new(0, 3)));
    assert!(matches!(
        err("G(T / HTTP/1.1\r\nHost: h\r\n\r\n"),
        H1Error::Malformed(_)
    ));
}

#[test]
fn only_http_1_0_and_1_1_are_accepted() {
    assert_eq!(
        req("GET / HTTP/1.0\r\n\r\n").unwrap().version(),
        Version::Http10
    );
    for bad in ["HTTP/1.2", "HTTP/2.0", "HTTP/0.9", "http/1.1", "HTTP/1.1 "] {
        let e = err(&format!("GET / {bad}\r\nHost: h\r\n\r\n"));
        assert_eq!(e.request_status(), 400, "{bad}: {e}");
    }
    // The HTTP/2 connection preface is not an HTTP/1 request.
    assert_eq!(
        err("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").request_status(),
        400
    );
}

#[test]
fn a_head_over_max_head_size_is_431() {
    let limits = Limits {
        max_head_size: 64,
        ..Limits::default()
    };
    let mut head = RequestHead::new();
    let big = format!("GET / HTTP/1.1\r\nHost: h\r\nX: {}\r\n\r\n", "a".repeat(60));
    let e = parse_request(big.as_bytes(), &limits, &mut head).unwrap_err();
    assert_eq!((e, e.request_status()), (H1Error::HeadTooLarge, 431));
    // Still incomplete and already at the limit: too large, without waiting for more.
    assert_eq!(
        parse_request(&big.as_bytes()[..64], &limits, &mut head),
        Err(H1Error::HeadTooLarge)
    );
    assert_eq!(
        parse_request(&big.as_bytes()[..63], &limits, &mut head),
        Ok(Status::Partial)
    );
    // A head of exactly the limit is fine.
    let exact = format!(
        "GET / HTTP/1.1\r\nHost: h\r\nX: {}\r\n\r\n",
        "a".repeat(64 - 32)
    );
    assert_eq!(exact.len(), 64);
    let got = parse_request(exact.as_bytes(), &limits, &mut head);
    assert_eq!(got, Ok(Status::Complete(64)));
}

#[test]
fn more_fields_than_max_headers_is_431() {
    let limits = Limits {
        max_headers: 10,
        ..Limits::default()
    };
    let mut head = RequestHead::new();
    let mut ten = String::from("GET / HTTP/1.1\r\nHost: h\r\n");
    for i in 0..9 {
        ten.push_str(&format!("x-{i}: {i}\r\n"));
    }
    let eleven = format!("{ten}x-last: 1\r\n\r\n");
    ten.push_str("\r\n");
    assert!(parse_request(ten.as_bytes(), &limits, &mut head).is_ok());
    assert_eq!(head.fields().len(), 10);
    let e = parse_request(eleven.as_bytes(), &limits, &mut head).unwrap_err();
    assert_eq!((e, e.request_status()), (H1Error::TooManyHeaders, 431));
}

#[test]
fn host_is_required_once_in_http_1_1_and_must_be_valid() {
    // RFC 9112 §3.2: 400 for an HTTP/1.1 request without Host, with more than one Host field
    // line, or with an invalid Host value.
    assert_eq!(err("GET / HTTP/1.1\r\n\r\n"), H1Error::MissingHost);
    assert!(req("GET / HTTP/1.0\r\n\r\n").is_ok());
    let dup = err("GET / HTTP/1.1\r\nHost: a.example\r\nhost: b.example\r\n\r\n");
    assert_eq!((dup, dup.request_status()), (H1Error::DuplicateHost, 400));
    assert_eq!(
        err("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"),
        H1Error::DuplicateHost
    );
    for bad in ["a b", "a:b:80", "h:99999", "h:", "user@h", "[::1", "h/x"] {
        assert_eq!(
            err(&format!("GET / HTTP/1.1\r\nHost: {bad}\r\n\r\n")),
            H1Error::InvalidHost,
            "{bad}"
        );
    }
    for good in [
        "",
        "WWW.Example.COM:8080",
        "127.0.0.1",
        "[::1]:443",
        "xn--bcher-kva.example",
    ] {
        assert!(
            req(&format!("GET / HTTP/1.1\r\nHost: {good}\r\n\r\n")).is_ok(),
            "{good}"
        );
    }
}

#[test]
fn content_length_must_be_one_decimal_number() {
    // RFC 9110 §8.6: Content-Length = 1*DIGIT; identical repeats may be taken as one.
    let cl = |v: &str| {
        req(&format!(
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: {v}\r\n\r\n"
        ))
    };
    assert_eq!(cl("42").unwrap().framing(), Framing::Length(42));
    assert_eq!(cl("  007 ").unwrap().framing(), Framing::Length(7));
    assert_eq!(cl("42, 42").unwrap().framing(), Framing::Length(42));
    assert_eq!(
        cl("18446744073709551615").unwrap().framing(),
        Framing::Length(u64::MAX)
    );
    for bad in [
        "",
        "-1",
        "+5",
        "5 5",
        "0x10",
        "4a",
        "42, 43",
        "42,",
        "1e3",
        "18446744073709551616",
    ] {
        let e = cl(bad).err().unwrap_or_else(|| panic!("accepted {bad:?}"));
        assert_eq!(
            (e, e.request_status()),
            (H1Error::InvalidContentLength, 400),
            "{bad:?}"
        );
    }
}

#[test]
fn differing_content_length_lines_are_refused() {
    // RFC 9112 §6.3 item 5: differing Content-Length values make the framing invalid (CL.CL).
    let e = err("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n");
    assert_eq!(e, H1Error::InvalidContentLength);
    let same = req("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n");
    assert_eq!(same.unwrap().framing(), Framing::Length(5));
}

#[test]
fn only_a_single_final_chunked_coding_is_accepted() {
    // RFC 9112 §6.1 and tern's rule: a coding other than chunked cannot be passed on (501);
    // chunked twice, or nothing at all, cannot frame the body (400).
    let te = |v: &str| {
        req(&format!(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: {v}\r\n\r\n"
        ))
    };
    assert_eq!(te("chunked").unwrap().framing(), Framing::Chunked);
    assert_eq!(te("Chunked").unwrap().framing(), Framing::Chunked);
    assert_eq!(te(" chunked ,").unwrap().framing(), Framing::Chunked);
    for foreign in [
        "gzip",
        "gzip, chunked",
        "chunked, gzip",
        "identity",
        "xchunked",
        "chunked;a=b",
    ] {
        let e = te(foreign)
            .err()
            .unwrap_or_else(|| panic!("accepted {foreign:?}"));
        assert_eq!(
            (e, e.request_status()),
            (H1Error::UnsupportedTransferCoding, 501),
            "{foreign}"
        );
    }
    for invalid in ["", "chunked, chunked", ","] {
        let e = te(invalid)
            .err()
            .unwrap_or_else(|| panic!("accepted {invalid:?}"));
        assert_eq!(
            (e, e.request_status()),
            (H1Error::InvalidTransferEncoding, 400),
            "{invalid:?}"
        );
    }
    let two_lines = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\
                     Transfer-Encoding: chunked\r\n\r\n";
    assert_eq!(err(two_lines), H1Error::InvalidTransferEncoding);
}

#[test]
fn transfer_encoding_in_http_1_0_is_refused() {
    // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
    let e = err("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n");
    assert_eq!(e, H1Error::InvalidTransferEncoding);
}

#[test]
fn content_length_with_transfer_encoding_is_chunked_and_closes() {
    // RFC 9112 §6.1 / §6.3 item 3 (CL.TE and TE.CL): Transfer-Encoding wins, the
    // Content-Length is dropped, and the connection closes after the response.
    for raw in [
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n",
    ] {
        let h = req(raw).unwrap();
        assert_eq!(h.framing(), Framing::Chunked);
        assert!(h.conflicting_framing());
        assert!(!h.keep_alive(), "keep-alive after CL+TE");
    }
    // An invalid Content-Length is refused even next to Transfer-Encoding.
    let e = err(
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    assert_eq!(e, H1Error::InvalidContentLength);
}

#[test]
fn obs_fold_and_space_before_colon_are_refused() {
    // RFC 9112 §5.2: a server MUST reject obs-fold in a request (outside message/http);
    // §5.1: no whitespace between field name and colon.
    for raw in [
        "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\tchunked\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : h\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding : chunked\r\n\r\n",
        "GET / HTTP/1.1\r\n Host: h\r\n\r\n",
    ] {
        let e = err(raw);
        assert!(matches!(e, H1Error::Malformed(_)), "{raw:?}: {e}");
        assert_eq!(e.request_status(), 400);
    }
}

#[test]
fn framing_field_names_with_underscores_are_refused() {
    // Servers that map `_` to `-` (CGI-style) would frame by a field tern does not read.
    for name in ["Transfer_Encoding", "content_length", "CONTENT_LENGTH"] {
        let e = err(&format!("POST / HTTP/1.1\r\nHost: h\r\n{name}: 5\r\n\r\n"));
        assert_eq!(
            e,
            H1Error::Malformed("field name like a framing field"),
            "{name}"
        );
    }
    assert!(req("GET / HTTP/1.1\r\nHost: h\r\nX_Forwarded_For: 1\r\n\r\n").is_ok());
}

#[test]
fn bad_bytes_in_the_head_are_refused() {
    for raw in [
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX\x01: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\n: empty name\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nno colon\r\n\r\n",
        "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/1.1\rHost: h\r\n\r\n",
    ] {
        assert_eq!(err(raw).request_status(), 400, "{raw:?}");
    }
}

#[test]
fn request_targets_must_be_one_of_the_four_forms() {
    // RFC 9112 §3.2.
    for raw in [
        "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /caf\u{e9} HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /a#frag HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET * HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET example.test:80 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET relative/path HTTP/1.1\r\nHost: h\r\n\r\n",
        "CONNECT / HTTP/1.1\r\nHost: h\r\n\r\n",
        "CONNECT example.test HTTP/1.1\r\nHost: h\r\n\r\n",
        "CONNECT user@example.test:443 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET http:/x HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET http:///p HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET 1http://h/ HTTP/1.1\r\nHost: h\r\n\r\n",
    ] {
        assert_eq!(err(raw).request_status(), 400, "{raw:?}");
    }
    let h = req("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    assert_eq!(h.form(), TargetForm::Asterisk);
    let h = req("CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n").unwrap();
    assert_eq!(
        (h.method(), h.form()),
        (Method::Connect, TargetForm::Authority)
    );
}

#[test]
fn absolute_form_gives_authority_without_userinfo_and_path() {
    let raw = "GET http://user:pw@example.test:8080/p?q=1 HTTP/1.1\r\nHost: other\r\n\r\n";
    let h = req(raw).unwrap();
    let TargetForm::Absolute { authority, path } = h.form() else {
        panic!("{:?}", h.form())
    };
    assert_eq!(text(authority, raw), "example.test:8080");
    assert_eq!(text(path, raw), "/p?q=1");
    assert_eq!(text(h.authority().unwrap(), raw), "example.test:8080");
    let raw = "GET https://[::1]?x HTTP/1.1\r\nHost: h\r\n\r\n";
    let h = req(raw).unwrap();
    assert_eq!(text(h.authority().unwrap(), raw), "[::1]");
    assert_eq!(text(h.path(), raw), "?x");
}

#[test]
fn keep_alive_follows_version_and_connection() {
    // RFC 9112 §9.3.
    let ka = |raw: &str| req(raw).unwrap().keep_alive();
    assert!(ka("GET / HTTP/1.1\r\nHost: h\r\n\r\n"));
    assert!(!ka(
        "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
    ));
    assert!(!ka(
        "GET / HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive, CLOSE\r\n\r\n"
    ));
    assert!(!ka("GET / HTTP/1.0\r\n\r\n"));
    assert!(ka("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
    let h = req("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").unwrap();
    assert!(h.connection_close());
    assert_eq!(
        h.info(),
        RequestInfo {
            method: Method::Get,
            version: Version::Http11,
            keep_alive: false,
            upgrade: false,
        }
    );
}

#[test]
fn expect_te_and_upgrade_are_noticed() {
    let h = req("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n");
    assert!(h.unwrap().expect_continue());
    // RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0 request is ignored.
    let h = req("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n");
    assert!(!h.unwrap().expect_continue());
    let h = req("GET / HTTP/1.1\r\nHost: h\r\nTE: gzip, Trailers;q=1\r\n\r\n").unwrap();
    assert!(h.te_trailers());
    let h = req("GET / HTTP/1.1\r\nHost: h\r\nTE: gzip\r\n\r\n").unwrap();
    assert!(!h.te_trailers());
    let h = req("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n");
    let h = h.unwrap();
    assert!(h.upgrade() && h.connection_upgrade());
}

#[test]
fn upgrade_requests_need_http_1_1_both_fields_and_no_content() {
    // RFC 9110 §7.8.
    let upgrade = |raw: &str| {
        let h = req(raw).unwrap();
        assert_eq!(h.info().upgrade, h.is_upgrade());
        h.is_upgrade()
    };
    assert!(upgrade(
        "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n"
    ));
    assert!(upgrade(
        "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: upgrade\r\nContent-Length: 0\r\n\r\n"
    ));
    assert!(!upgrade(
        "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n"
    ));
    assert!(!upgrade(
        "GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\n\r\n"
    ));
    assert!(!upgrade(
        "GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"
    ));
    assert!(!upgrade(
        "POST / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: upgrade\r\nContent-Length: 1\r\n\r\n"
    ));
    assert!(!upgrade(
        "POST / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: upgrade\r\nTransfer-Encoding: chunked\r\n\r\n"
    ));
    assert!(!upgrade(
        "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"
    ));
}

#[test]
fn fields_named_by_connection_are_hop_by_hop_but_never_host() {
    // RFC 9110 §7.6.1; Host and framing fields cannot be removed this way.
    let raw = "GET / HTTP/1.1\r\nHost: h\r\nConnection: x-foo, Host, content-length\r\n\
               X-Foo: 1\r\nX-Bar: 2\r\n\r\n";
    let h = req(raw).unwrap();
    let hop: Vec<_> = h
        .fields()
        .iter()
        .map(|f| (f.name(raw.as_bytes()), f.is_hop_by_hop()))
        .collect();
    assert_eq!(
        hop,
        [
            (&b"Host"[..], false),
            (b"Connection", true),
            (b"X-Foo", true),
            (b"X-Bar", false)
        ]
    );
    assert_eq!(h.fields()[0].kind(), FieldKind::Host);
}

#[test]
fn connection_options_are_bounded() {
    let many: Vec<String> = (0..=crate::fields::MAX_CONNECTION_OPTIONS)
        .map(|i| format!("x-{i}"))
        .collect();
    let raw = format!(
        "GET / HTTP/1.1\r\nHost: h\r\nConnection: {}\r\n\r\n",
        many.join(", ")
    );
    assert_eq!(err(&raw), H1Error::TooManyConnectionOptions);
    let raw = format!(
        "GET / HTTP/1.1\r\nHost: h\r\nConnection: {}\r\n\r\n",
        many[1..].join(", ")
    );
    assert!(req(&raw).is_ok());
}

#[test]
fn a_reused_head_forgets_the_previous_request() {
    let mut head = RequestHead::new();
    let limits = Limits::default();
    let first = b"POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: close, x\r\nX: 1\r\n\r\n";
    parse_request(first, &limits, &mut head).unwrap();
    assert_eq!(head.framing(), Framing::Chunked);
    let second = b"GET /b HTTP/1.1\r\nHost: h\r\nX: 1\r\n\r\n";
    parse_request(second, &limits, &mut head).unwrap();
    assert_eq!(head.framing(), Framing::None);
    assert!(head.keep_alive());
    assert!(!head.fields()[1].is_hop_by_hop());
    assert_eq!(head.target().get(second), b"/b");
}

#[test]
fn parsing_allocates_nothing_after_the_first_request() {
    let mut head = RequestHead::new();
    let limits = Limits::default();
    let raw = b"GET / HTTP/1.1\r\nHost: h\r\nConnection: x\r\nX: 1\r\n\r\n";
    parse_request(raw, &limits, &mut head).unwrap();
    let before = (
        head.storage.capacity(),
        head.storage.as_ptr(),
        head.fields.as_ptr(),
        head.options.as_ptr(),
    );
    assert!(before.0 >= limits.max_headers);
    for _ in 0..3 {
        parse_request(raw, &limits, &mut head).unwrap();
    }
    let after = (
        head.storage.capacity(),
        head.storage.as_ptr(),
        head.fields.as_ptr(),
        head.options.as_ptr(),
    );
    assert_eq!(before, after, "header storage was reallocated");
}
