//! Request and response heads, and their rewrite.
//!
//! The head checks hold for any input: what is accepted is consistent with itself (spans inside
//! the head, framing that follows from the fields, limits honoured), a head cut anywhere
//! before its end asks for more bytes, a head reused from an earlier message gives the same
//! answer as a fresh one, and what passes small limits passes the defaults unchanged. The rewrite check parses what tern would send on and requires the
//! same message back, and a fixed point: the rewrite of the rewrite is the rewrite.

use tern_h1::{
    parse_request, parse_response, write_request_edited, write_response_edited, ClientBody, Edits,
    Field, FieldKind, Forwarding, Framing, HeaderEdits, Limits, Method, RequestHead, RequestInfo,
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
fn roomy() -> Limits {
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
fn method(sel: u8) -> Method {
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

/// The forwarding a rewrite adds, from two selector bits.
fn forwarding(sel: u8) -> (Forwarding, bool) {
    let client = std::net::IpAddr::from([192, 0, 2, 7]);
    match sel & 3 {
        0 => (Forwarding::none(), false),
        1 => (Forwarding::none().with_for(client).with_proto(true), false),
        2 => {
            let cert = Some(("CN=client\r\nX: y", "ab:cd"));
            let fwd = Forwarding::none().with_for(client).with_proto(false);
            (fwd.with_client_cert(cert), true)
        }
        _ => (Forwarding::none().with_client_cert(None), true),
    }
}

/// Header rule edits on three names the comparisons then leave aside.
fn header_edits() -> HeaderEdits {
    let mut e = HeaderEdits::new();
    e.delete(b"x-drop");
    e.set(b"X-Set").push(b"v\r\nInjected: 1");
    e.add(b"X-Add").push(b"w");
    e
}

const EDITED: [&[u8]; 3] = [b"x-drop", b"x-set", b"x-add"];

fn is_edited(name: &[u8]) -> bool {
    EDITED.iter().any(|n| n.eq_ignore_ascii_case(name))
}

fn is_client_cert(name: &[u8]) -> bool {
    name.len() >= 13 && name[..13].eq_ignore_ascii_case(b"x-ssl-client-")
}

/// The end-to-end fields a rewrite copies as they are.
fn copied<'a>(
    fields: &[Field],
    buf: &'a [u8],
    cert: bool,
    edits: bool,
) -> Vec<(&'a [u8], &'a [u8])> {
    fields
        .iter()
        .filter(|f| f.kind() == FieldKind::Other && !f.is_hop_by_hop())
        .map(|f| (f.name(buf), f.value(buf)))
        .filter(|(n, _)| !(cert && is_client_cert(n) || edits && is_edited(n)))
        .collect()
}

fn values_of<'a>(fields: &[Field], buf: &'a [u8], kind: FieldKind) -> Vec<&'a [u8]> {
    fields
        .iter()
        .filter(|f| f.kind() == kind)
        .map(|f| f.value(buf))
        .collect()
}

/// `head_rewrite`: see the module docs. Bit 0 of the selector picks a request or a response.
pub fn head_rewrite(data: &[u8]) {
    let Some((&sel, buf)) = data.split_first() else {
        return;
    };
    if sel & 1 == 0 {
        rewrite_request(sel >> 1, buf);
    } else {
        rewrite_response(sel >> 1, buf);
    }
}

fn rewrite_request(sel: u8, buf: &[u8]) {
    let mut head = RequestHead::new();
    let Ok(Status::Complete(_)) = parse_request(buf, &limits(sel), &mut head) else {
        return;
    };
    let (fwd, cert) = forwarding(sel >> 1);
    let edits_on = sel & 8 != 0;
    let he = header_edits();
    let edits = Edits {
        headers: edits_on.then_some(&he),
        ..Edits::default()
    };
    let mut out = Vec::new();
    write_request_edited(&head, buf, &fwd, &edits, &mut out);
    let mut re = RequestHead::new();
    let got = parse_request(&out, &roomy(), &mut re);
    let shown = String::from_utf8_lossy(&out);
    assert_eq!(got, Ok(Status::Complete(out.len())), "rewrite {shown:?}");

    assert_eq!(re.method_bytes(&out), head.method_bytes(buf), "{shown:?}");
    let target = match head.form() {
        TargetForm::Absolute { path, .. } if path.get(buf).first() != Some(&b'/') => {
            [&b"/"[..], path.get(buf)].concat()
        }
        TargetForm::Absolute { path, .. } => path.get(buf).to_vec(),
        _ => head.target().get(buf).to_vec(),
    };
    assert_eq!(re.target().get(&out), target, "{shown:?}");
    assert_eq!(re.version(), Version::Http11);
    assert_eq!(re.framing(), head.framing(), "{shown:?}");
    let authority = head.authority().map_or(&b""[..], |a| a.get(buf));
    assert_eq!(re.host().map(|h| h.get(&out)), Some(authority), "{shown:?}");
    assert_eq!(re.te_trailers(), head.te_trailers(), "{shown:?}");
    let flags = [re.expect_continue(), re.upgrade(), re.connection_close()];
    assert_eq!(flags, [false; 3], "hop-by-hop fields crossed: {shown:?}");
    assert!(re.keep_alive() && !re.conflicting_framing(), "{shown:?}");
    assert_eq!(
        copied(re.fields(), &out, cert, edits_on),
        copied(head.fields(), buf, cert, edits_on),
        "end-to-end fields changed: {shown:?}"
    );
    let xff = values_of(re.fields(), &out, FieldKind::XForwardedFor);
    let xfp = values_of(re.fields(), &out, FieldKind::XForwardedProto);
    let (xff0, xfp0) = (
        values_of(head.fields(), buf, FieldKind::XForwardedFor),
        values_of(head.fields(), buf, FieldKind::XForwardedProto),
    );
    match sel >> 1 & 3 {
        1 | 2 => {
            let mut chain: Vec<u8> = Vec::new();
            for v in xff0.iter().filter(|v| !v.is_empty()) {
                chain.extend_from_slice(v);
                chain.extend_from_slice(b", ");
            }
            chain.extend_from_slice(b"192.0.2.7");
            assert_eq!(xff, [&chain[..]], "{shown:?}");
            assert_eq!(xfp.len(), 1, "{shown:?}");
        }
        _ => assert_eq!((xff, xfp), (xff0, xfp0), "{shown:?}"),
    }
    if edits_on {
        check_edited(re.fields(), &out);
    }
    // A fixed point: what tern sends is what it would send again.
    let mut twice = Vec::new();
    let none = Forwarding::none();
    write_request_edited(&re, &out, &none, &Edits::default(), &mut twice);
    assert_eq!(
        String::from_utf8_lossy(&twice),
        shown,
        "the rewrite is not a fixed point"
    );
}

/// The header rules' edits arrived: no `X-Drop`, one `X-Set: vInjected: 1`, an `X-Add: w`.
fn check_edited(fields: &[Field], buf: &[u8]) {
    let named = |n: &[u8]| -> Vec<&[u8]> {
        fields
            .iter()
            .filter(|f| f.name(buf).eq_ignore_ascii_case(n))
            .map(|f| f.value(buf))
            .collect()
    };
    assert!(named(b"x-drop").is_empty());
    assert_eq!(named(b"x-set"), [&b"vInjected: 1"[..]]);
    assert_eq!(named(b"x-add").last(), Some(&&b"w"[..]));
}

fn rewrite_response(sel: u8, buf: &[u8]) {
    let method = method(sel >> 1);
    let mut head = ResponseHead::new();
    let Ok(Status::Complete(_)) = parse_response(buf, &limits(sel), &mut head, method) else {
        return;
    };
    let info = RequestInfo {
        method,
        version: if sel & 8 != 0 {
            Version::Http10
        } else {
            Version::Http11
        },
        keep_alive: sel & 16 != 0,
    };
    let edits_on = sel & 32 != 0;
    let he = header_edits();
    let edits = Edits {
        headers: edits_on.then_some(&he),
        ..Edits::default()
    };
    let mut out = Vec::new();
    let plan = write_response_edited(&head, buf, &info, &edits, &mut out);
    let mut re = ResponseHead::new();
    let got = parse_response(&out, &roomy(), &mut re, method);
    let shown = String::from_utf8_lossy(&out);
    assert_eq!(got, Ok(Status::Complete(out.len())), "rewrite {shown:?}");

    assert_eq!(re.status(), head.status(), "{shown:?}");
    assert_eq!(re.reason().get(&out), head.reason().get(buf), "{shown:?}");
    assert_eq!(re.version(), Version::Http11);
    let body = match plan.body {
        ClientBody::None => ResponseBody::None,
        ClientBody::Length(n) => ResponseBody::Length(n),
        ClientBody::Chunked | ClientBody::Rechunk => ResponseBody::Chunked,
        ClientBody::Dechunk | ClientBody::UntilClose => ResponseBody::UntilClose,
        ClientBody::Tunnel => ResponseBody::Tunnel,
    };
    assert_eq!(re.body(), body, "plan {plan:?}: {shown:?}");
    if plan.body == ClientBody::None && head.status() >= 200 && head.status() != 204 {
        // HEAD and 304 keep describing the representation.
        let http11 = info.version == Version::Http11;
        assert_eq!(re.chunked(), head.chunked() && http11, "{shown:?}");
        if !head.chunked() {
            assert_eq!(re.content_length(), head.content_length(), "{shown:?}");
        }
    }
    let final_head = !head.is_informational();
    if final_head && !plan.keep_alive && plan.body != ClientBody::Tunnel {
        assert!(!re.keep_alive(), "no Connection: close: {shown:?}");
    }
    let edited = edits_on && final_head;
    assert_eq!(
        copied(re.fields(), &out, false, edited),
        copied(head.fields(), buf, false, edited),
        "end-to-end fields changed: {shown:?}"
    );
    if edited {
        check_edited(re.fields(), &out);
    }
    let mut twice = Vec::new();
    let plan2 = write_response_edited(&re, &out, &info, &Edits::default(), &mut twice);
    assert_eq!(
        String::from_utf8_lossy(&twice),
        shown,
        "the rewrite is not a fixed point"
    );
    assert_eq!(plan2.keep_alive, plan.keep_alive);
}
