//! Rewriting a parsed head into the bytes sent to the other side.
//!
//! The rules are those of tern's hyper path (crates/tern-proxy/src/headers.rs), so both paths
//! give the same answers:
//! - end-to-end fields are copied in order, as received (runs of adjacent lines in one copy,
//!   line endings written as CRLF);
//! - hop-by-hop fields are dropped (RFC 9110 §7.6.1): Connection and the fields it names,
//!   Keep-Alive, Proxy-Connection, TE, Transfer-Encoding, Upgrade; `Expect` too, since tern
//!   answers `100-continue` itself. `TE: trailers` is kept when the client offered it: without
//!   it a server would drop the trailers the client asked for. `Connection` cannot remove Host
//!   or a framing field (the names it can remove are those of [`FieldKind::Other`]);
//! - an upgrade request ([`RequestHead::is_upgrade`]) and the `101` that accepts it keep their
//!   `Upgrade` fields as received and get `Connection: upgrade` (written by tern, in place of
//!   the received `Connection` fields, whose other options are still honoured: the fields they
//!   name are dropped);
//! - the framing field is re-emitted by tern, once, where the first framing field stood:
//!   `Content-Length` as parsed or `Transfer-Encoding: chunked`; a received Content-Length next
//!   to Transfer-Encoding is dropped (RFC 9112 §6.3);
//! - requests: origin-form target (an absolute-form target's authority becomes the Host value,
//!   userinfo excluded, RFC 9112 §3.2.2), HTTP/1.1, `X-Forwarded-For` appended to the existing
//!   chain (all values joined into one field, then `, client`), `X-Forwarded-Proto` set,
//!   `X-SSL-Client-*` replaced by tern's own when the client certificate is passed on;
//! - responses: HTTP/1.1 status line, framing chosen for the client ([`ClientBody`]) and
//!   `Connection: close` when tern will close the client connection after the response.
//!
//! Output is appended to a caller's `Vec<u8>`, reused across messages.

use std::net::IpAddr;

use self::client_addr::ClientAddr;
use crate::cookie::{self, CookieEdit};
use crate::edits::{HeaderEdits, LineEdits};
use crate::fields::{Field, FieldKind};
use crate::request::{Framing, RequestHead, RequestInfo, TargetForm};
use crate::response::{ResponseBody, ResponseHead};
use crate::set_cookie;
use crate::span::Version;

/// What tern adds to forwarded requests, formatted once per client connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forwarding {
    forwarded_for: Option<ClientAddr>,
    forwarded_proto: Option<&'static [u8]>,
    /// `X-SSL-Client-*` field lines, formatted once per connection (see
    /// [`Forwarding::with_client_cert`]).
    client_cert: Option<Box<[u8]>>,
}

impl Forwarding {
    /// Adds nothing.
    pub fn none() -> Self {
        Self::default()
    }

    /// Appends `client` to `X-Forwarded-For`.
    pub fn with_for(mut self, client: IpAddr) -> Self {
        self.forwarded_for = Some(ClientAddr::of(client));
        self
    }

    /// Sets `X-Forwarded-Proto` to `https` (`tls`) or `http`.
    pub fn with_proto(mut self, tls: bool) -> Self {
        self.forwarded_proto = Some(if tls { b"https" } else { b"http" });
        self
    }

    /// Tells the server about the client's certificate, HAProxy-style: `X-SSL-Client-Verify:
    /// SUCCESS` with `X-SSL-Client-DN` (the subject) and `X-SSL-Client-SHA256` (the
    /// fingerprint) for a verified certificate (`Some((subject, sha256))`), `X-SSL-Client-Verify:
    /// NONE` without one. Every `X-SSL-Client-*` field the client sent is removed, so the server
    /// can trust these. Bytes outside printable ASCII in the values are dropped.
    pub fn with_client_cert(mut self, cert: Option<(&str, &str)>) -> Self {
        let mut lines = Vec::new();
        match cert {
            Some((subject, sha256)) => {
                line(&mut lines, b"X-SSL-Client-Verify", b"SUCCESS");
                printable_line(&mut lines, b"X-SSL-Client-DN", subject);
                printable_line(&mut lines, b"X-SSL-Client-SHA256", sha256);
            }
            None => line(&mut lines, b"X-SSL-Client-Verify", b"NONE"),
        }
        self.client_cert = Some(lines.into_boxed_slice());
        self
    }
}

/// A field line whose value keeps only printable ASCII (no CR, LF or other control bytes).
fn printable_line(out: &mut Vec<u8>, name: &[u8], value: &str) {
    let value: Vec<u8> = value.bytes().filter(|b| (0x20..0x7f).contains(b)).collect();
    line(out, name, value.trim_ascii());
}

/// `X-SSL-Client-*`, in any case: the fields [`Forwarding::with_client_cert`] owns.
fn is_client_cert_field(name: &[u8]) -> bool {
    const PREFIX: &[u8] = b"x-ssl-client-";
    name.len() >= PREFIX.len() && name[..PREFIX.len()].eq_ignore_ascii_case(PREFIX)
}

/// How the proxy carries a response body to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientBody {
    /// No body.
    None,
    /// Forward exactly this many bytes.
    Length(u64),
    /// Forward the chunked body re-framed: the data under tern's own size lines, the trailer
    /// fields that may be trailers ([`crate::BodyReader::forward`]).
    Chunked,
    /// Decode the chunked body and forward only its data, then close: an HTTP/1.0 client
    /// cannot take chunked.
    Dechunk,
    /// The server's body runs until it closes; send it to the (HTTP/1.1) client as chunks
    /// ([`crate::ChunkHeader`], [`crate::LAST_CHUNK`] at the end) so the client connection
    /// can stay open.
    Rechunk,
    /// Forward until the server closes, then close (HTTP/1.0 client).
    UntilClose,
    /// The proxy codes the body itself (compression) and sends what it makes as chunks of its
    /// own, ended by the reader's last chunk: the server's framing (length, chunks or the
    /// close) only says where its body ends ([`write_response_encoded`]).
    Encoded,
    /// CONNECT succeeded, or a `101` answered an upgrade request: the head is the last HTTP
    /// of the connection, opaque bytes follow both ways until both sides close.
    Tunnel,
}

/// What [`write_response`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponsePlan {
    /// How to carry the body.
    pub body: ClientBody,
    /// Whether the client connection stays open for another request after this response.
    pub keep_alive: bool,
}

/// Changes to one message on top of the standard rewrite, for features that act per request
/// (cookie persistence, header rules).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Edits<'a> {
    /// Cookie persistence's change to the `Cookie` fields of a request or the `Set-Cookie`
    /// fields of a final response (an edit of the other side does nothing).
    pub cookie: Option<CookieEdit<'a>>,
    /// Field lines (`name: value\r\n` each) appended to the head. Responses: only to a final
    /// (non-1xx) head.
    pub extra: &'a [u8],
    /// Header rules' edits: the fields they delete are not copied, the lines they add follow
    /// `extra`. Requests: a deleted `Host` also drops the Host tern would write (the rules
    /// add their own). Responses: only on a final head.
    pub headers: Option<&'a HeaderEdits>,
}

/// Appends the head to send to the server for `head` (parsed from `buf`).
pub fn write_request(head: &RequestHead, buf: &[u8], fwd: &Forwarding, out: &mut Vec<u8>) {
    write_request_edited(head, buf, fwd, &Edits::default(), out);
}

/// [`write_request`] with per-request [`Edits`].
pub fn write_request_edited(
    head: &RequestHead,
    buf: &[u8],
    fwd: &Forwarding,
    edits: &Edits<'_>,
    out: &mut Vec<u8>,
) {
    out.reserve(head.len() + 96);
    let upgrade = head.is_upgrade();
    let rules = edits.headers.filter(|h| !h.is_empty());
    let authority = request_line(head, buf, rules.map(HeaderEdits::line), out);
    let host_replaced = rules.is_some_and(|h| h.deletes(b"host"));
    if head.host().is_none() && !host_replaced {
        // Only HTTP/1.0 requests come without Host. An HTTP/1.1 request must have one: the
        // target's authority, or else an empty value (RFC 9112 §3.2).
        line(out, b"host", authority.unwrap_or_default());
    }
    let (mut framing_done, mut te_done, mut xff_done) = (false, false, false);
    let mut run = Run::default();
    for f in head.fields() {
        if rules.is_some_and(|h| h.drops(*f, buf)) {
            run.flush(out, buf);
            continue;
        }
        match f.kind {
            FieldKind::Host if authority.is_none() => run.add(out, buf, *f),
            FieldKind::Host => {
                run.flush(out, buf);
                line(out, f.name(buf), authority.unwrap_or_default());
            }
            FieldKind::ContentLength | FieldKind::TransferEncoding if !framing_done => {
                run.flush(out, buf);
                request_framing(out, head.framing());
                framing_done = true;
            }
            FieldKind::Te if head.te_trailers() && !te_done => {
                run.flush(out, buf);
                line(out, b"te", b"trailers");
                te_done = true;
            }
            FieldKind::XForwardedFor => match &fwd.forwarded_for {
                Some(client) if !xff_done => {
                    run.flush(out, buf);
                    forwarded_for(out, head.fields(), buf, *f, client.as_bytes());
                    xff_done = true;
                }
                Some(_) => {}
                None => run.add(out, buf, *f),
            },
            FieldKind::XForwardedProto if fwd.forwarded_proto.is_some() => {}
            FieldKind::Upgrade if upgrade => run.add(out, buf, *f),
            _ if f.is_hop_by_hop() || is_request_only(f.kind) => {}
            FieldKind::Other if request_cookie(edits).is_some() && cookie::is_cookie(f, buf) => {
                run.flush(out, buf);
                match request_cookie(edits) {
                    Some(CookieEdit::Unprefix(name)) => {
                        cookie::write_unprefixed(out, buf, f, name);
                    }
                    Some(CookieEdit::Strip(name)) => {
                        cookie::write_without(out, buf, f, name);
                    }
                    _ => run.add(out, buf, *f),
                }
            }
            FieldKind::Other if fwd.client_cert.is_some() && is_client_cert_field(f.name(buf)) => {}
            _ => run.add(out, buf, *f),
        }
    }
    run.flush(out, buf);
    if !framing_done {
        request_framing(out, head.framing());
    }
    if upgrade {
        line(out, b"connection", b"upgrade");
    }
    out.extend_from_slice(edits.extra);
    if let Some(h) = rules {
        out.extend_from_slice(h.added());
    }
    if let (Some(client), false) = (&fwd.forwarded_for, xff_done) {
        line(out, b"x-forwarded-for", client.as_bytes());
    }
    if let Some(proto) = fwd.forwarded_proto {
        line(out, b"x-forwarded-proto", proto);
    }
    if let Some(lines) = &fwd.client_cert {
        out.extend_from_slice(lines);
    }
    out.extend_from_slice(b"\r\n");
}

/// The edit of a request's `Cookie` fields, if any.
fn request_cookie<'a>(edits: &Edits<'a>) -> Option<CookieEdit<'a>> {
    edits
        .cookie
        .filter(|e| matches!(e, CookieEdit::Strip(_) | CookieEdit::Unprefix(_)))
}

/// The request line in origin-form and HTTP/1.1; returns an absolute-form target's authority.
fn request_line<'a>(
    head: &RequestHead,
    buf: &'a [u8],
    line: Option<&LineEdits>,
    out: &mut Vec<u8>,
) -> Option<&'a [u8]> {
    let method = line.and_then(LineEdits::method);
    out.extend_from_slice(method.unwrap_or_else(|| head.method_bytes(buf)));
    out.push(b' ');
    let target = line.and_then(LineEdits::target);
    let authority = match head.form() {
        TargetForm::Absolute { authority, .. } if target.is_some() => {
            out.extend_from_slice(target.unwrap_or_default());
            Some(authority.get(buf))
        }
        _ if target.is_some() => {
            out.extend_from_slice(target.unwrap_or_default());
            None
        }
        TargetForm::Absolute { authority, path } => {
            let path = path.get(buf);
            if path.first() != Some(&b'/') {
                out.push(b'/');
            }
            out.extend_from_slice(path);
            Some(authority.get(buf))
        }
        _ => {
            out.extend_from_slice(head.target().get(buf));
            None
        }
    };
    out.extend_from_slice(b" HTTP/1.1\r\n");
    authority
}

/// Fields that never leave tern whatever else holds: `Expect` (tern answers it) and framing
/// fields after the first (tern wrote the one framing field).
fn is_request_only(kind: FieldKind) -> bool {
    matches!(
        kind,
        FieldKind::Expect | FieldKind::ContentLength | FieldKind::TransferEncoding
    )
}

/// The request's framing field, if it has a body.
fn request_framing(out: &mut Vec<u8>, framing: Framing) {
    match framing {
        Framing::None => {}
        Framing::Length(n) => content_length(out, n),
        Framing::Chunked => line(out, b"transfer-encoding", b"chunked"),
    }
}

/// One `X-Forwarded-For` with every received value in order, then the client.
fn forwarded_for(out: &mut Vec<u8>, fields: &[Field], buf: &[u8], first: Field, client: &[u8]) {
    out.extend_from_slice(first.name(buf));
    out.extend_from_slice(b": ");
    for f in fields.iter().filter(|f| f.kind == FieldKind::XForwardedFor) {
        let v = f.value(buf);
        if !v.is_empty() {
            out.extend_from_slice(v);
            out.extend_from_slice(b", ");
        }
    }
    out.extend_from_slice(client);
    out.extend_from_slice(b"\r\n");
}

/// Decides how the response reaches the client.
fn plan(head: &ResponseHead, req: &RequestInfo) -> ResponsePlan {
    let http11 = req.version == Version::Http11;
    let body = match head.body() {
        // RFC 9110 §15.2.2: the connection switches right after the 101's head.
        _ if head.status() == 101 && req.upgrade => ClientBody::Tunnel,
        ResponseBody::None => ClientBody::None,
        ResponseBody::Length(n) => ClientBody::Length(n),
        ResponseBody::Chunked if http11 => ClientBody::Chunked,
        ResponseBody::Chunked => ClientBody::Dechunk,
        ResponseBody::UntilClose if http11 => ClientBody::Rechunk,
        ResponseBody::UntilClose => ClientBody::UntilClose,
        ResponseBody::Tunnel => ClientBody::Tunnel,
    };
    let keep_alive = req.keep_alive
        && head.status() != 101
        && !matches!(
            body,
            ClientBody::Dechunk | ClientBody::UntilClose | ClientBody::Tunnel
        );
    ResponsePlan { body, keep_alive }
}

/// Appends the head to send to the client for the server's `head` (parsed from `buf`), given
/// the request it answers, and returns how to carry the body.
pub fn write_response(
    head: &ResponseHead,
    buf: &[u8],
    req: &RequestInfo,
    out: &mut Vec<u8>,
) -> ResponsePlan {
    write_response_edited(head, buf, req, &Edits::default(), out)
}

/// [`write_response`] with per-response [`Edits`] (the cookie edit applies to a final head).
pub fn write_response_edited(
    head: &ResponseHead,
    buf: &[u8],
    req: &RequestInfo,
    edits: &Edits<'_>,
    out: &mut Vec<u8>,
) -> ResponsePlan {
    write_response_with(head, buf, req, edits, false, out)
}

/// [`write_response_edited`] for a body the proxy codes itself (compression, whose
/// `Content-Encoding` the caller adds in `edits`): the server's `Content-Length` is dropped and
/// the body goes to the client chunked ([`ClientBody::Encoded`]). Only an HTTP/1.1 client's
/// final response with a body is re-framed so; any other gets the plain plan.
pub fn write_response_encoded(
    head: &ResponseHead,
    buf: &[u8],
    req: &RequestInfo,
    edits: &Edits<'_>,
    out: &mut Vec<u8>,
) -> ResponsePlan {
    write_response_with(head, buf, req, edits, true, out)
}

fn write_response_with(
    head: &ResponseHead,
    buf: &[u8],
    req: &RequestInfo,
    edits: &Edits<'_>,
    encoded: bool,
    out: &mut Vec<u8>,
) -> ResponsePlan {
    let mut plan = plan(head, req);
    if encoded
        && req.version == Version::Http11
        && matches!(
            plan.body,
            ClientBody::Length(_) | ClientBody::Chunked | ClientBody::Rechunk
        )
    {
        plan.body = ClientBody::Encoded;
    }
    // A 101 that accepts the upgrade is the last head the client gets: edits apply to it as to
    // a final response.
    let switched = plan.body == ClientBody::Tunnel && head.status() == 101;
    let last = !head.is_informational() || switched;
    out.reserve(head.len() + 48);
    let rules = edits.headers.filter(|h| !h.is_empty() && last);
    let status = rules.and_then(|h| h.line().status());
    out.extend_from_slice(b"HTTP/1.1 ");
    push_u64(out, u64::from(status.map_or(head.status(), |(s, _)| s)));
    out.push(b' ');
    out.extend_from_slice(status.map_or_else(|| head.reason().get(buf), |(_, r)| r));
    out.extend_from_slice(b"\r\n");
    let mut framing_done = false;
    let mut run = Run::default();
    let set_cookie = edits.cookie.filter(|_| last);
    for f in head.fields() {
        if rules.is_some_and(|h| h.drops(*f, buf)) {
            run.flush(out, buf);
            continue;
        }
        match f.kind {
            FieldKind::ContentLength | FieldKind::TransferEncoding if !framing_done => {
                run.flush(out, buf);
                response_framing(out, head, req, plan.body);
                framing_done = true;
            }
            FieldKind::ContentLength | FieldKind::TransferEncoding => {}
            FieldKind::Upgrade if switched => run.add(out, buf, *f),
            _ if f.is_hop_by_hop() => {}
            FieldKind::Other if set_cookie.is_some_and(|e| set_cookie::applies(&e, f, buf)) => {
                run.flush(out, buf);
                if let Some(e) = &set_cookie {
                    set_cookie::write_edited(out, buf, f, e);
                }
            }
            _ => run.add(out, buf, *f),
        }
    }
    run.flush(out, buf);
    if !framing_done {
        response_framing(out, head, req, plan.body);
    }
    if last {
        out.extend_from_slice(edits.extra);
    }
    if let Some(h) = rules {
        out.extend_from_slice(h.added());
    }
    if switched {
        line(out, b"connection", b"upgrade");
    }
    // A tunnel's end is the close of either side; `Connection: close` on it would only
    // confuse clients that read it as "do not use this connection".
    if !head.is_informational() && plan.body != ClientBody::Tunnel {
        if !plan.keep_alive {
            line(out, b"connection", b"close");
        } else if req.version == Version::Http10 {
            line(out, b"connection", b"keep-alive");
        }
    }
    out.extend_from_slice(b"\r\n");
    plan
}

/// The response's framing field for the client.
fn response_framing(out: &mut Vec<u8>, head: &ResponseHead, req: &RequestInfo, body: ClientBody) {
    match body {
        ClientBody::Length(n) => content_length(out, n),
        ClientBody::Chunked | ClientBody::Rechunk | ClientBody::Encoded => {
            line(out, b"transfer-encoding", b"chunked")
        }
        ClientBody::Dechunk | ClientBody::UntilClose | ClientBody::Tunnel => {}
        // No body, but a HEAD or 304 response still describes the representation (RFC 9110
        // §8.6, §9.3.2); 1xx and 204 must not carry framing fields.
        ClientBody::None if head.status() < 200 || head.status() == 204 => {}
        ClientBody::None if head.chunked() => {
            if req.version == Version::Http11 {
                line(out, b"transfer-encoding", b"chunked");
            }
        }
        ClientBody::None => {
            if let Some(n) = head.content_length() {
                content_length(out, n);
            }
        }
    }
}

/// Consecutive field lines copied in one piece: a field line is copied as received from its
/// name to the end of its (trimmed) value, and lines that follow each other in the buffer with
/// exactly CRLF between them are copied together. The line ending is always written as CRLF:
/// a bare LF tern accepted is not passed on to a server that may read it differently.
#[derive(Default)]
struct Run {
    start: usize,
    end: usize,
}

impl Run {
    fn add(&mut self, out: &mut Vec<u8>, buf: &[u8], f: Field) {
        let (start, end) = (f.name.start(), f.value.end());
        if f.value.is_empty() || f.value.start() <= f.name.end() {
            // No value to copy up to (httparse gives a detached "" for some empty values).
            self.flush(out, buf);
            line(out, f.name(buf), f.value(buf));
        } else if self.start < self.end && buf.get(self.end..start) == Some(b"\r\n") {
            self.end = end;
        } else {
            self.flush(out, buf);
            (self.start, self.end) = (start, end);
        }
    }

    fn flush(&mut self, out: &mut Vec<u8>, buf: &[u8]) {
        if self.start < self.end {
            out.extend_from_slice(buf.get(self.start..self.end).unwrap_or_default());
            out.extend_from_slice(b"\r\n");
            (self.start, self.end) = (0, 0);
        }
    }
}

fn line(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

fn content_length(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(b"content-length: ");
    push_u64(out, n);
    out.extend_from_slice(b"\r\n");
}

/// Appends `n` in decimal.
pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

mod client_addr;
#[cfg(test)]
mod tests;
