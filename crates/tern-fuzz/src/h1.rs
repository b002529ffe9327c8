//! Request and response heads.
//!
//! The checks hold for any input: what is accepted is consistent with itself (spans inside the
//! head, framing that follows from the fields, limits honoured), a head cut anywhere before its
//! end asks for more bytes, a head reused from an earlier message gives the same answer as a
//! fresh one, and what passes small limits passes the defaults unchanged.

use tern_h1::{
    parse_request, parse_response, Field, FieldKind, Framing, Limits, Method, RequestHead,
    ResponseBody, ResponseHead, Status, TargetForm, Version,
};

use crate::rfc::{is_token, trim_ows};

/// A request parsed before the fuzzed one, to check that a reused head forgets it.
const WARM_REQUEST: &[u8] = b"POST http://u@a.example:81/x?y HTTP/1.1\r\nHost: b\r\n\
    Content-Length: 3\r\nConnection: keep-alive, x-opt\r\nX-Opt: 1\r\nTE: trailers\r\n\
    Expect: 100-continue\r\nUpgrade: h2c\r\nX-Forwarded-For: 10.0.0.1\r\n\r\n";

/// A response parsed before the fuzzed one.
const WARM_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\
    Connection: x-opt\r\nX-Opt: 1\r\nSet-Cookie: a=b\r\n\r\n";

/// Default limits, or small ones that the fuzzer can reach (bit 0 of the selector).
pub(crate) fn limits(sel: u8) -> Limits {
    if sel & 1 == 0 {
        Limits::default()
    } else {
        Limits {
            max_head_size: 128,
            max_headers: 4,
            max_chunk_ext: 8,
            max_trailer_size: 32,
        }
    }
}

/// Room for anything tern writes from a head it accepted under [`limits`].
pub(crate) fn roomy() -> Limits {
    Limits {
        max_head_size: 1 << 20,
        max_headers: 8192,
        ..Limits::default()
    }
}

/// A few cuts before `len`: each prefix of an accepted head must be `Partial`.
fn cuts(len: usize) -> impl Iterator<Item = usize> {
    let mut c = [0, 1, len / 2, len.saturating_sub(1)];
    c.sort_unstable();
    let mut last = None;
    c.into_iter().filter(move |&n| {
        let new = n < len && last != Some(n);
        last = Some(n);
        new
    })
}

/// The method of a response's request, from two selector bits.
pub(crate) fn method(sel: u8) -> Method {
    [Method::Get, Method::Head, Method::Connect, Method::Post][usize::from(sel & 3)]
}

/// Everything a request head exposes, for comparing two parses.
#[derive(Debug, PartialEq)]
struct RequestView<'a> {
    method: &'a [u8],
    target: &'a [u8],
    form: TargetForm,
    version: Version,
    fields: Vec<(&'a [u8], &'a [u8], FieldKind, bool)>,
    framing: Framing,
    keep_alive: bool,
    host: Option<&'a [u8]>,
    authority: Option<&'a [u8]>,
    flags: [bool; 6],
}

fn view_request<'a>(h: &RequestHead, buf: &'a [u8]) -> RequestView<'a> {
    RequestView {
        method: h.method_bytes(buf),
        target: h.target().get(buf),
        form: h.form(),
        version: h.version(),
        fields: fields(h.fields(), buf),
        framing: h.framing(),
        keep_alive: h.keep_alive(),
        host: h.host().map(|s| s.get(buf)),
        authority: h.authority().map(|s| s.get(buf)),
        flags: [
            h.expect_continue(),
            h.te_trailers(),
            h.upgrade(),
            h.connection_upgrade(),
            h.connection_close(),
            h.conflicting_framing(),
        ],
    }
}

/// Everything a response head exposes.
#[derive(Debug, PartialEq)]
struct ResponseView<'a> {
    status: u16,
    reason: &'a [u8],
    version: Version,
    fields: Vec<(&'a [u8], &'a [u8], FieldKind, bool)>,
    body: ResponseBody,
    content_length: Option<u64>,
    chunked: bool,
    keep_alive: bool,
}

fn view_response<'a>(h: &ResponseHead, buf: &'a [u8]) -> ResponseView<'a> {
    ResponseView {
        status: h.status(),
        reason: h.reason().get(buf),
        version: h.version(),
        fields: fields(h.fields(), buf),
        body: h.body(),
        content_length: h.content_length(),
        chunked: h.chunked(),
        keep_alive: h.keep_alive(),
    }
}

fn fields<'a>(fields: &[Field], buf: &'a [u8]) -> Vec<(&'a [u8], &'a [u8], FieldKind, bool)> {
    fields
        .iter()
        .map(|f| (f.name(buf), f.value(buf), f.kind(), f.is_hop_by_hop()))
        .collect()
}

/// `request_head`: see the module docs.
pub fn request_head(data: &[u8]) {
    let Some((&sel, buf)) = data.split_first() else {
        return;
    };
    let limits = limits(sel);
    let mut head = RequestHead::new();
    let got = parse_request(buf, &limits, &mut head);
    let mut reused = RequestHead::new();
    let warm = parse_request(WARM_REQUEST, &Limits::default(), &mut reused);
    assert_eq!(warm, Ok(Status::Complete(WARM_REQUEST.len())));
    let again = parse_request(buf, &limits, &mut reused);
    assert_eq!(got, again, "a reused head answers differently");
    let len = match got {
        Ok(Status::Complete(len)) => len,
        Ok(Status::Partial) => {
            assert!(buf.len() < limits.max_head_size, "Partial past the limit");
            return;
        }
        Err(_) => return,
    };
    assert_eq!(view_request(&head, buf), view_request(&reused, buf));
    check_request(&head, buf, len, &limits);
    if limits != Limits::default() {
        // Limits only refuse: what passes small ones passes the defaults, read the same way.
        let got = parse_request(buf, &Limits::default(), &mut reused);
        assert_eq!(got, Ok(Status::Complete(len)), "refused with larger limits");
        assert_eq!(view_request(&head, buf), view_request(&reused, buf));
    }
    for cut in cuts(len) {
        let prefix = parse_request(&buf[..cut], &limits, &mut reused);
        assert_eq!(prefix, Ok(Status::Partial), "prefix of {cut} bytes");
    }
}

/// What any accepted request head must satisfy.
fn check_request(h: &RequestHead, buf: &[u8], len: usize, limits: &Limits) {
    assert!(len <= buf.len() && len <= limits.max_head_size);
    assert!(h.fields().len() <= limits.max_headers);
    let spans = h
        .fields()
        .iter()
        .flat_map(|f| [f.name_span(), f.value_span()]);
    let more = [h.target(), h.path()].into_iter().chain(h.host());
    for s in spans.chain(more).chain(h.authority()) {
        assert!(s.end() <= len, "span {s:?} outside a head of {len} bytes");
    }
    assert!(is_token(h.method_bytes(buf)), "method is not a token");
    let target = h.target().get(buf);
    assert!(
        !target.is_empty()
            && target
                .iter()
                .all(|b| (0x21..=0x7e).contains(b) && *b != b'#'),
        "target {target:?}"
    );
    check_fields(h.fields(), buf);
    let hosts = h.fields().iter().filter(|f| f.kind() == FieldKind::Host);
    assert!(hosts.count() <= 1, "two Host fields");
    if h.version() == Version::Http11 {
        assert!(h.host().is_some(), "HTTP/1.1 without Host");
    }
    check_framing(h.fields(), buf, h.framing());
    if h.framing() == Framing::Chunked {
        assert_eq!(h.version(), Version::Http11, "chunked in HTTP/1.0");
    }
    if h.conflicting_framing() || h.connection_close() {
        assert!(
            !h.keep_alive(),
            "keep-alive after close or conflicting framing"
        );
    }
}

/// Names are tokens, values hold no line break or NUL and no surrounding whitespace, and no
/// name is a framing field spelt with `_`.
fn check_fields(fields: &[Field], buf: &[u8]) {
    for f in fields {
        let (name, value) = (f.name(buf), f.value(buf));
        assert!(is_token(name), "field name {name:?}");
        assert!(!value.iter().any(|b| matches!(b, b'\r' | b'\n' | 0)));
        assert_eq!(trim_ows(value), value, "value not trimmed");
        let dashed: Vec<u8> = name
            .iter()
            .map(|b| {
                if *b == b'_' {
                    b'-'
                } else {
                    b.to_ascii_lowercase()
                }
            })
            .collect();
        if f.kind() == FieldKind::Other {
            assert!(
                dashed != b"content-length" && dashed != b"transfer-encoding",
                "framing field spelt {name:?}"
            );
        }
    }
}

/// The framing the fields give by RFC 9112 §6.3, as tern narrows it: Transfer-Encoding must be
/// one final `chunked`, and every Content-Length the same number.
fn check_framing(fields: &[Field], buf: &[u8], framing: Framing) {
    let of = |kind| fields.iter().filter(move |f| f.kind() == kind);
    let codings: Vec<&[u8]> = of(FieldKind::TransferEncoding)
        .flat_map(|f| f.value(buf).split(|b| *b == b','))
        .map(trim_ows)
        .filter(|c| !c.is_empty())
        .collect();
    let lengths: Vec<&[u8]> = of(FieldKind::ContentLength)
        .flat_map(|f| f.value(buf).split(|b| *b == b','))
        .map(trim_ows)
        .collect();
    let has_te = of(FieldKind::TransferEncoding).next().is_some();
    match framing {
        Framing::Chunked => {
            assert!(has_te, "chunked without Transfer-Encoding");
            assert!(
                codings.len() == 1 && codings[0].eq_ignore_ascii_case(b"chunked"),
                "codings {codings:?}"
            );
        }
        Framing::Length(n) => {
            assert!(!has_te, "Content-Length framing next to Transfer-Encoding");
            assert!(!lengths.is_empty());
            for l in lengths {
                assert!(l.iter().all(u8::is_ascii_digit) && !l.is_empty(), "{l:?}");
                let parsed = std::str::from_utf8(l).ok().and_then(|s| s.parse().ok());
                assert_eq!(parsed, Some(n), "Content-Length {l:?} framed as {n}");
            }
        }
        Framing::None => assert!(!has_te && lengths.is_empty(), "framing fields ignored"),
    }
}

/// `response_head`: see the module docs.
pub fn response_head(data: &[u8]) {
    let Some((&sel, buf)) = data.split_first() else {
        return;
    };
    let limits = limits(sel);
    let method = method(sel >> 1);
    let mut head = ResponseHead::new();
    let got = parse_response(buf, &limits, &mut head, method);
    let mut reused = ResponseHead::new();
    let warm = parse_response(WARM_RESPONSE, &Limits::default(), &mut reused, Method::Get);
    assert_eq!(warm, Ok(Status::Complete(WARM_RESPONSE.len())));
    let again = parse_response(buf, &limits, &mut reused, method);
    assert_eq!(got, again, "a reused head answers differently");
    let len = match got {
        Ok(Status::Complete(len)) => len,
        Ok(Status::Partial) => {
            assert!(buf.len() < limits.max_head_size, "Partial past the limit");
            return;
        }
        Err(_) => return,
    };
    assert_eq!(view_response(&head, buf), view_response(&reused, buf));
    check_response(&head, buf, len, &limits, method);
    if limits != Limits::default() {
        let got = parse_response(buf, &Limits::default(), &mut reused, method);
        assert_eq!(got, Ok(Status::Complete(len)), "refused with larger limits");
        assert_eq!(view_response(&head, buf), view_response(&reused, buf));
    }
    for cut in cuts(len) {
        let prefix = parse_response(&buf[..cut], &limits, &mut reused, method);
        assert_eq!(prefix, Ok(Status::Partial), "prefix of {cut} bytes");
    }
}

/// What any accepted response head must satisfy, given its request's method.
fn check_response(h: &ResponseHead, buf: &[u8], len: usize, limits: &Limits, method: Method) {
    assert!(len <= buf.len() && len <= limits.max_head_size);
    assert!(h.fields().len() <= limits.max_headers);
    let spans = h
        .fields()
        .iter()
        .flat_map(|f| [f.name_span(), f.value_span()]);
    for s in spans.chain([h.reason()]) {
        assert!(s.end() <= len, "span {s:?} outside a head of {len} bytes");
    }
    assert!((100..=599).contains(&h.status()));
    assert!(!h
        .reason()
        .get(buf)
        .iter()
        .any(|b| matches!(b, b'\r' | b'\n')));
    check_fields(h.fields(), buf);
    assert_eq!(h.body(), expected_body(h, method), "RFC 9112 §6.3");
    let framing = match (h.chunked(), h.content_length()) {
        (true, _) => Framing::Chunked,
        (false, Some(n)) => Framing::Length(n),
        (false, None) => Framing::None,
    };
    check_framing(h.fields(), buf, framing);
    if h.chunked() {
        assert_eq!(h.version(), Version::Http11, "chunked in HTTP/1.0");
    }
    if h.keep_alive() {
        let ends = matches!(h.body(), ResponseBody::UntilClose | ResponseBody::Tunnel);
        assert!(
            !ends && h.status() != 101,
            "keep-alive on a connection that ends"
        );
        assert!(!(h.chunked() && h.content_length().is_some()));
    }
}

/// RFC 9112 §6.3, items 1 to 7, for the response's request method.
fn expected_body(h: &ResponseHead, method: Method) -> ResponseBody {
    let s = h.status();
    if method == Method::Head || s < 200 || s == 204 || s == 304 {
        ResponseBody::None
    } else if method == Method::Connect && (200..300).contains(&s) {
        ResponseBody::Tunnel
    } else if h.chunked() {
        ResponseBody::Chunked
    } else if let Some(n) = h.content_length() {
        ResponseBody::Length(n)
    } else {
        ResponseBody::UntilClose
    }
}
