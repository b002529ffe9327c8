//! tern-h1 against independent readers of the same bytes: `httparse` as any other Rust server
//! would use it, and the RFC 9112 scanner of [`crate::rfc`].
//!
//! Only one direction is asserted: whenever tern accepts a head, both must accept it at the
//! same length and agree on the start line, the fields (count, names, values) and the framing
//! (Content-Length, chunked, or none; for a response, the body rule of RFC 9112 §6.3 for the
//! request's method). tern refusing what they accept is allowed and intended: bare CR, NUL,
//! obs-fold, non-ASCII targets, duplicate Host, `Content_Length`, codings other than a single
//! `chunked`, and so on.
//!
//! tern-h1 runs httparse itself (in place, with recycled storage), so the httparse half checks
//! what tern builds on top of it (spans, trimming, the framing verdict) more than httparse's
//! grammar; the RFC scanner shares no code with either and checks the grammar.

use tern_h1::{
    parse_request, parse_response, Framing, Limits, Method, RequestHead, ResponseBody,
    ResponseHead, Status, Version,
};

use crate::rfc::{self, StartLine};

/// `differential`: bit 0 of the selector picks a request or a response, bits 1-2 the method of
/// the response's request.
pub fn differential(data: &[u8]) {
    let Some((&sel, buf)) = data.split_first() else {
        return;
    };
    if sel & 1 == 0 {
        request(buf);
    } else {
        let method = [Method::Get, Method::Head, Method::Connect, Method::Post];
        response(buf, method[usize::from((sel >> 1) & 3)]);
    }
}

fn minor(v: Version) -> u8 {
    match v {
        Version::Http10 => 0,
        Version::Http11 => 1,
    }
}

fn request(buf: &[u8]) {
    let mut head = RequestHead::new();
    let Ok(Status::Complete(len)) = parse_request(buf, &Limits::default(), &mut head) else {
        return;
    };
    let shown = String::from_utf8_lossy(&buf[..len]);
    let tern_fields: Vec<(&[u8], &[u8])> = head
        .fields()
        .iter()
        .map(|f| (f.name(buf), f.value(buf)))
        .collect();

    let mut slots = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut slots);
    let got = req.parse(buf);
    assert_eq!(
        got,
        Ok(httparse::Status::Complete(len)),
        "httparse: {shown:?}"
    );
    assert_eq!(req.method.map(str::as_bytes), Some(head.method_bytes(buf)));
    assert_eq!(req.path.map(str::as_bytes), Some(head.target().get(buf)));
    assert_eq!(req.version, Some(minor(head.version())));
    assert_eq!(
        httparse_fields(req.headers),
        tern_fields,
        "httparse: {shown:?}"
    );
    let framing = framing_of(&tern_fields).unwrap_or_else(|| panic!("framing: {shown:?}"));
    assert_eq!(head.framing(), framing, "httparse: {shown:?}");

    let scanned = match rfc::head(buf, true) {
        Ok(Some(h)) => h,
        other => panic!("tern accepts a request the grammar does not ({other:?}): {shown:?}"),
    };
    assert_eq!(scanned.len, len, "RFC scanner: {shown:?}");
    let start = StartLine::Request {
        method: head.method_bytes(buf),
        target: head.target().get(buf),
        minor: minor(head.version()),
    };
    assert_eq!(scanned.start, start, "RFC scanner: {shown:?}");
    assert_eq!(scanned.fields, tern_fields, "RFC scanner: {shown:?}");
    assert_eq!(framing_of(&scanned.fields), Some(framing));
}

fn response(buf: &[u8], method: Method) {
    let mut head = ResponseHead::new();
    let Ok(Status::Complete(len)) = parse_response(buf, &Limits::default(), &mut head, method)
    else {
        return;
    };
    let shown = String::from_utf8_lossy(&buf[..len]);
    let tern_fields: Vec<(&[u8], &[u8])> = head
        .fields()
        .iter()
        .map(|f| (f.name(buf), f.value(buf)))
        .collect();
    let reason = head.reason().get(buf);

    let mut slots = [httparse::EMPTY_HEADER; 128];
    let mut resp = httparse::Response::new(&mut slots);
    let got = resp.parse(buf);
    assert_eq!(
        got,
        Ok(httparse::Status::Complete(len)),
        "httparse: {shown:?}"
    );
    assert_eq!(resp.version, Some(minor(head.version())));
    assert_eq!(resp.code, Some(head.status()));
    assert_eq!(
        resp.reason.map(str::as_bytes),
        Some(reason),
        "httparse: {shown:?}"
    );
    assert_eq!(
        httparse_fields(resp.headers),
        tern_fields,
        "httparse: {shown:?}"
    );
    let framing = framing_of(&tern_fields).unwrap_or_else(|| panic!("framing: {shown:?}"));
    let body = response_body(head.status(), method, framing);
    assert_eq!(head.body(), body, "httparse: {shown:?}");

    let scanned = match rfc::head(buf, false) {
        Ok(Some(h)) => h,
        other => panic!("tern accepts a response the grammar does not ({other:?}): {shown:?}"),
    };
    assert_eq!(scanned.len, len, "RFC scanner: {shown:?}");
    let StartLine::Status {
        minor: scanned_minor,
        code,
        reason: scanned_reason,
    } = scanned.start
    else {
        unreachable!("a response scan gives a status line");
    };
    assert_eq!(
        (scanned_minor, code),
        (minor(head.version()), head.status())
    );
    // tern keeps a reason only when it is ASCII (httparse's choice).
    if scanned_reason.is_ascii() {
        assert_eq!(scanned_reason, reason, "RFC scanner: {shown:?}");
    } else {
        assert!(reason.is_empty());
    }
    assert_eq!(scanned.fields, tern_fields, "RFC scanner: {shown:?}");
    assert_eq!(framing_of(&scanned.fields), Some(framing));
}

fn httparse_fields<'a>(headers: &[httparse::Header<'a>]) -> Vec<(&'a [u8], &'a [u8])> {
    headers
        .iter()
        .map(|h| (h.name.as_bytes(), rfc::trim_ows(h.value)))
        .collect()
}

/// The framing fields read by RFC 9112 §6.3 and narrowed as tern documents it: any
/// Transfer-Encoding must be exactly one `chunked` (and wins over Content-Length); every
/// Content-Length element must be the same decimal number. `None`: fields no reader should
/// accept as tern does.
fn framing_of(fields: &[(&[u8], &[u8])]) -> Option<Framing> {
    let values = |name: &[u8]| -> Vec<&[u8]> {
        fields
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.split(|b| *b == b','))
            .map(rfc::trim_ows)
            .collect()
    };
    let has = |name: &[u8]| fields.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if has(b"transfer-encoding") {
        let codings: Vec<&[u8]> = values(b"transfer-encoding")
            .into_iter()
            .filter(|c| !c.is_empty())
            .collect();
        let chunked = codings.len() == 1 && codings[0].eq_ignore_ascii_case(b"chunked");
        return chunked.then_some(Framing::Chunked);
    }
    let mut length = None;
    for l in values(b"content-length") {
        if l.is_empty() || !l.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let n: u64 = std::str::from_utf8(l).ok()?.parse().ok()?;
        if length.is_some_and(|seen| seen != n) {
            return None;
        }
        length = Some(n);
    }
    Some(length.map_or(Framing::None, Framing::Length))
}

/// RFC 9112 §6.3 for a response to `method`.
fn response_body(status: u16, method: Method, framing: Framing) -> ResponseBody {
    if method == Method::Head || status < 200 || status == 204 || status == 304 {
        ResponseBody::None
    } else if method == Method::Connect && (200..300).contains(&status) {
        ResponseBody::Tunnel
    } else {
        match framing {
            Framing::Chunked => ResponseBody::Chunked,
            Framing::Length(n) => ResponseBody::Length(n),
            Framing::None => ResponseBody::UntilClose,
        }
    }
}
