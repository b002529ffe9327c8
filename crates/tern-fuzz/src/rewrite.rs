//! The head rewrite: parse, write what tern would send on, parse that again.
//!
//! The second parse must accept the whole rewrite and read the same message: method, target in
//! origin-form, the authority as Host, framing, `TE: trailers`, status and reason, and every
//! end-to-end field unchanged and in order. What tern adds or removes is checked against the
//! options of the rewrite (forwarding fields, client certificate fields, header rule edits,
//! cookie persistence edits), which the selector byte picks. And the rewrite is a fixed point:
//! rewriting the rewrite without options gives the same bytes (up to whitespace before a line
//! end, which tern may leave after a cookie edit).

use tern_h1::{
    find_cookie, parse_request, parse_response, write_request_edited, write_response_edited,
    ClientBody, CookieEdit, Edits, Field, FieldKind, Forwarding, HeaderEdits, RequestHead,
    RequestInfo, ResponseBody, ResponseHead, Status, TargetForm, Version,
};

use crate::h1::{limits, method, roomy};

/// The cookie the persistence edits act on, and the server value they set.
const COOKIE: &[u8] = b"SRV";
const SERVER: &[u8] = b"s1";

/// The forwarding a rewrite adds, from two selector bits; and whether it owns the
/// `X-SSL-Client-*` fields.
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

fn is_edited(name: &[u8]) -> bool {
    [&b"x-drop"[..], b"x-set", b"x-add"]
        .iter()
        .any(|n| n.eq_ignore_ascii_case(name))
}

fn is_client_cert(name: &[u8]) -> bool {
    name.len() >= 13 && name[..13].eq_ignore_ascii_case(b"x-ssl-client-")
}

/// The end-to-end fields a rewrite copies as they are, but those named `skip`.
fn copied<'a>(
    fields: &[Field],
    buf: &'a [u8],
    skip: impl Fn(&[u8]) -> bool,
) -> Vec<(&'a [u8], &'a [u8])> {
    fields
        .iter()
        .filter(|f| f.kind() == FieldKind::Other && !f.is_hop_by_hop())
        .map(|f| (f.name(buf), f.value(buf)))
        .filter(|(n, _)| !skip(n))
        .collect()
}

fn values_of<'a>(fields: &[Field], buf: &'a [u8], kind: FieldKind) -> Vec<&'a [u8]> {
    fields
        .iter()
        .filter(|f| f.kind() == kind)
        .map(|f| f.value(buf))
        .collect()
}

/// The values of the fields called `name` that cross (`Connection` may name any field).
fn named<'a>(fields: &[Field], buf: &'a [u8], name: &[u8]) -> Vec<&'a [u8]> {
    fields
        .iter()
        .filter(|f| f.name(buf).eq_ignore_ascii_case(name) && !f.is_hop_by_hop())
        .map(|f| f.value(buf))
        .collect()
}

/// `head_rewrite`: bit 0 of the selector picks a request or a response, the other bits the
/// rewrite's options.
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

/// Selector bits: 0 small limits, 1-2 forwarding, 3 header edits, 4-5 cookie edit.
fn rewrite_request(sel: u8, buf: &[u8]) {
    let mut head = RequestHead::new();
    let Ok(Status::Complete(_)) = parse_request(buf, &limits(sel), &mut head) else {
        return;
    };
    let (fwd, cert) = forwarding(sel >> 1);
    let edits_on = sel & 8 != 0;
    let cookie = match (sel >> 4) & 3 {
        1 => Some(CookieEdit::Strip(COOKIE)),
        2 => Some(CookieEdit::Unprefix(COOKIE)),
        _ => None,
    };
    let he = header_edits();
    let edits = Edits {
        headers: edits_on.then_some(&he),
        cookie,
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
    let flags = [re.expect_continue(), re.connection_close()];
    assert_eq!(flags, [false; 2], "hop-by-hop fields crossed: {shown:?}");
    // An upgrade request keeps its offer (`Upgrade`, `Connection: upgrade`); no other does.
    assert_eq!(re.upgrade(), head.is_upgrade(), "upgrade offer: {shown:?}");
    assert!(re.keep_alive() && !re.conflicting_framing(), "{shown:?}");
    let skip = |n: &[u8]| {
        cert && is_client_cert(n)
            || edits_on && is_edited(n)
            || cookie.is_some() && n.eq_ignore_ascii_case(b"cookie")
    };
    assert_eq!(
        copied(re.fields(), &out, skip),
        copied(head.fields(), buf, skip),
        "end-to-end fields changed: {shown:?}"
    );
    let xff = values_of(re.fields(), &out, FieldKind::XForwardedFor);
    let xfp = values_of(re.fields(), &out, FieldKind::XForwardedProto);
    let xff0 = values_of(head.fields(), buf, FieldKind::XForwardedFor);
    let xfp0 = values_of(head.fields(), buf, FieldKind::XForwardedProto);
    match (sel >> 1) & 3 {
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
    if let Some(edit) = cookie {
        check_cookies(&head, buf, &re, &out, edit);
    }
    // A fixed point: what tern sends is what it would send again.
    let mut twice = Vec::new();
    let none = Forwarding::none();
    write_request_edited(&re, &out, &none, &Edits::default(), &mut twice);
    let (again, once) = (without_trailing_ows(&twice), without_trailing_ows(&out));
    // tern writes the `connection: upgrade` of an upgrade request after the fields it copies
    // and adds: its place may move, never its presence.
    let offer = "connection: upgrade\r\n";
    let count = |s: &str| s.matches(offer).count();
    assert_eq!(
        count(&again),
        count(&once),
        "the rewrite is not a fixed point"
    );
    assert_eq!(
        again.replace(offer, ""),
        once.replace(offer, ""),
        "the rewrite is not a fixed point"
    );
}

/// `head` with the spaces and tabs before each line end removed. tern writes `name: ` for an
/// empty value, and may end a value it edits with whitespace (unprefixing `SRV=s1~<TAB>` leaves
/// `SRV=<TAB>`): valid OWS, which a parse drops, so the fixed point holds up to it.
fn without_trailing_ows(head: &[u8]) -> String {
    let mut lines: Vec<&[u8]> = Vec::new();
    for line in head.split_inclusive(|b| *b == b'\n') {
        let body = line.strip_suffix(b"\r\n").unwrap_or(line);
        let end = body
            .iter()
            .rposition(|b| !matches!(b, b' ' | b'\t'))
            .map_or(0, |i| i + 1);
        lines.push(&body[..end]);
    }
    let mut out = lines.join(&b"\r\n"[..]);
    out.extend_from_slice(b"\r\n");
    String::from_utf8_lossy(&out).into_owned()
}

/// The header rules' edits arrived: no `X-Drop`, one `X-Set: vInjected: 1` (the CR LF of the
/// value removed), an `X-Add: w` last of its name.
fn check_edited(fields: &[Field], buf: &[u8]) {
    assert!(named(fields, buf, b"x-drop").is_empty());
    assert_eq!(named(fields, buf, b"x-set"), [&b"vInjected: 1"[..]]);
    assert_eq!(named(fields, buf, b"x-add").last(), Some(&&b"w"[..]));
}

/// The cookies of every `Cookie` field, as (name, value) with the value's quotes kept; pairs
/// without `=` as (pair, None). Written here from RFC 6265 §4.2.1, not taken from tern.
fn cookies<'a>(fields: &[Field], buf: &'a [u8]) -> Vec<(&'a [u8], Option<&'a [u8]>)> {
    named(fields, buf, b"cookie")
        .into_iter()
        .flat_map(|v| v.split(|b| *b == b';'))
        .map(<[u8]>::trim_ascii)
        .filter(|p| !p.is_empty())
        .map(|p| match p.iter().position(|b| *b == b'=') {
            Some(at) => (p[..at].trim_ascii(), Some(p[at + 1..].trim_ascii())),
            None => (p, None),
        })
        .collect()
}

/// Cookie persistence on a request: `Strip` removes every `SRV=...` and nothing else;
/// `Unprefix` cuts `server~` from the front of every `SRV` value and changes nothing else.
fn check_cookies(head: &RequestHead, buf: &[u8], re: &RequestHead, out: &[u8], edit: CookieEdit) {
    let before = cookies(head.fields(), buf);
    let after = cookies(re.fields(), out);
    let expected: Vec<(&[u8], Option<Vec<u8>>)> = before
        .iter()
        .filter(|(n, v)| !(matches!(edit, CookieEdit::Strip(_)) && *n == COOKIE && v.is_some()))
        .map(|&(n, v)| {
            let v = v.map(|v| match edit {
                CookieEdit::Unprefix(_) if n == COOKIE => unprefix(v),
                _ => v.to_vec(),
            });
            (n, v)
        })
        .collect();
    let after: Vec<(&[u8], Option<Vec<u8>>)> = after
        .iter()
        .map(|&(n, v)| (n, v.map(<[u8]>::to_vec)))
        .collect();
    assert_eq!(after, expected, "cookies after {edit:?}");
    if matches!(edit, CookieEdit::Strip(_)) {
        assert_eq!(find_cookie(re, out, COOKIE), None);
    }
}

/// `server~value` → `value`, quotes kept (`"s~v"` → `"v"`). Whitespace after an unquoted `~`
/// is not a cookie's (RFC 6265 cookie-octets have none): the server reads the value without it.
fn unprefix(v: &[u8]) -> Vec<u8> {
    let quoted = v.len() >= 2 && v[0] == b'"' && v[v.len() - 1] == b'"';
    let inner = if quoted { &v[1..v.len() - 1] } else { v };
    match inner.iter().position(|b| *b == b'~') {
        Some(at) if quoted => [&b"\""[..], &inner[at + 1..], b"\""].concat(),
        Some(at) => inner[at + 1..].trim_ascii().to_vec(),
        None => v.to_vec(),
    }
}

/// Selector bits: 0 small limits, 1-2 the request's method, 3 HTTP/1.0 client, 4 client
/// keep-alive, 5 header edits, 6 a cookie edit (which one: the status, modulo 3).
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
        upgrade: false,
    };
    let edits_on = sel & 32 != 0;
    let cookie = (sel & 64 != 0).then(|| match head.status() % 3 {
        0 => CookieEdit::Rewrite {
            name: COOKIE,
            value: SERVER,
        },
        1 => CookieEdit::Prefix {
            name: COOKIE,
            value: SERVER,
        },
        _ => CookieEdit::Drop(COOKIE),
    });
    let he = header_edits();
    let edits = Edits {
        headers: edits_on.then_some(&he),
        cookie,
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
        ClientBody::Chunked | ClientBody::Rechunk | ClientBody::Encoded => ResponseBody::Chunked,
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
    let cookie = cookie.filter(|_| final_head);
    let skip = |n: &[u8]| {
        edited && is_edited(n) || cookie.is_some() && n.eq_ignore_ascii_case(b"set-cookie")
    };
    assert_eq!(
        copied(re.fields(), &out, skip),
        copied(head.fields(), buf, skip),
        "end-to-end fields changed: {shown:?}"
    );
    if edited {
        check_edited(re.fields(), &out);
    }
    if let Some(edit) = cookie {
        check_set_cookies(&head, buf, &re, &out, edit);
    }
    let mut twice = Vec::new();
    let plan2 = write_response_edited(&re, &out, &info, &Edits::default(), &mut twice);
    let again = String::from_utf8_lossy(&twice);
    assert_eq!(again, shown, "the rewrite is not a fixed point");
    assert_eq!(plan2.keep_alive, plan.keep_alive);
}

/// The cookie a `Set-Cookie` value sets, when it is `SRV`: its value, quotes removed.
fn sets_srv(value: &[u8]) -> Option<&[u8]> {
    let pair = value.split(|b| *b == b';').next().unwrap_or_default();
    let at = pair.iter().position(|b| *b == b'=')?;
    if pair[..at].trim_ascii() != COOKIE {
        return None;
    }
    let v = pair[at + 1..].trim_ascii();
    match v {
        [b'"', inner @ .., b'"'] => Some(inner),
        _ => Some(v),
    }
}

/// Cookie persistence on a response: `Set-Cookie` fields for other cookies are unchanged and
/// in order; those setting `SRV` are rewritten to the server's value, prefixed with it, or
/// dropped.
fn check_set_cookies(
    head: &ResponseHead,
    buf: &[u8],
    re: &ResponseHead,
    out: &[u8],
    edit: CookieEdit,
) {
    let before = named(head.fields(), buf, b"set-cookie");
    let after = named(re.fields(), out, b"set-cookie");
    let others = |v: &Vec<&[u8]>| -> Vec<Vec<u8>> {
        v.iter()
            .filter(|v| sets_srv(v).is_none())
            .map(|v| v.to_vec())
            .collect()
    };
    assert_eq!(
        others(&after),
        others(&before),
        "other Set-Cookie fields changed"
    );
    let srv_before: Vec<&[u8]> = before.iter().filter_map(|v| sets_srv(v)).collect();
    let srv_after: Vec<&[u8]> = after.iter().filter_map(|v| sets_srv(v)).collect();
    match edit {
        CookieEdit::Rewrite { .. } => {
            assert_eq!(srv_after.len(), srv_before.len());
            assert!(srv_after.iter().all(|v| *v == SERVER), "{srv_after:?}");
        }
        CookieEdit::Prefix { .. } => {
            let expected: Vec<Vec<u8>> = srv_before
                .iter()
                .map(|v| [SERVER, b"~", v].concat())
                .collect();
            let got: Vec<Vec<u8>> = srv_after.iter().map(|v| v.to_vec()).collect();
            assert_eq!(got, expected);
        }
        _ => assert!(srv_after.is_empty(), "{srv_after:?}"),
    }
}
