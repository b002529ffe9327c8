//! Request heads: parse in place, judge, and keep what the proxy needs as spans and facts.
//!
//! [`parse_request`] runs httparse over at most `max_head_size` bytes of the buffer, records
//! the start line and fields as spans, then applies the rules that decide what may reach a
//! server (each with its RFC section at the check). The verdict on framing:
//!
//! | fields | framing | note |
//! |---|---|---|
//! | none | [`Framing::None`] | |
//! | `Content-Length: n` (identical repeats allowed) | [`Framing::Length`] | |
//! | `Transfer-Encoding: chunked` | [`Framing::Chunked`] | |
//! | both | [`Framing::Chunked`] | Content-Length dropped, connection closed after the response |
//! | any coding but one final `chunked` | refused, 501 | `gzip, chunked` would be lost in transit |
//! | `chunked` twice, empty, or in HTTP/1.0 | refused, 400 | |
//!
//! On both Transfer-Encoding and Content-Length, RFC 9112 §6.1 lets a server reject the request
//! or process it by Transfer-Encoding alone, and in either case close the connection after
//! responding. tern processes it, as HAProxy and hyper do: the Content-Length never reaches the
//! server (the rewrite emits only `Transfer-Encoding: chunked`), so the server cannot read the
//! body another way, and the client connection closes after the response so that nothing the
//! client meant as a second request is read from a stream the two sides disagreed about.
//!
//! **Upgrade requests** (RFC 9110 §7.8, [`RequestHead::is_upgrade`]): an HTTP/1.1 request with an
//! `Upgrade` field, `upgrade` among its `Connection` options and no content keeps its `Upgrade`
//! field and `Connection: upgrade` on the way to the server, and a `101` answer to it starts a
//! tunnel. One with content is forwarded as an ordinary request, without `Upgrade`: the switch
//! would take effect only after the content, and clients such as curl offer `Upgrade: h2c` on
//! POSTs expecting a server to ignore it. Refusing those with a 400 would break them; stripping
//! the offer leaves the server nothing to switch to, so the exchange stays plain HTTP.

use httparse::Header;

use crate::body::BodyReader;
use crate::error::H1Error;
use crate::fields::{self, Facts, Field};
use crate::limits::Limits;
use crate::span::{Method, Span, Status, Version};
use crate::target::{self, TargetForm as Form};

pub use crate::target::TargetForm;

/// How a request body is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// No body.
    #[default]
    None,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked coding, up to the last chunk and trailer section.
    Chunked,
}

impl Framing {
    /// A reader that finds the end of a body framed this way.
    pub fn reader(self, limits: &Limits) -> BodyReader {
        match self {
            Framing::None => BodyReader::none(),
            Framing::Length(n) => BodyReader::length(n),
            Framing::Chunked => BodyReader::chunked(limits),
        }
    }
}

/// What a response needs to know of its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestInfo {
    /// The method (HEAD and CONNECT change the response's framing).
    pub method: Method,
    /// The client's HTTP version.
    pub version: Version,
    /// Whether the client connection may carry another request after this one.
    pub keep_alive: bool,
    /// The request asks to switch protocols ([`RequestHead::is_upgrade`]): a `101` answer is
    /// the start of a tunnel.
    pub upgrade: bool,
}

/// A parsed request head: spans into the buffer it was parsed from, and derived facts.
/// Reuse one per connection: after the first request, parsing allocates nothing.
#[derive(Debug, Default)]
pub struct RequestHead {
    pub(crate) len: usize,
    pub(crate) method: Method,
    pub(crate) method_span: Span,
    pub(crate) target: Span,
    pub(crate) form: Form,
    pub(crate) version: Version,
    pub(crate) fields: Vec<Field>,
    pub(crate) facts: Facts,
    pub(crate) framing: Framing,
    pub(crate) keep_alive: bool,
    options: Vec<Span>,
    storage: Vec<Header<'static>>,
}

/// Parses the request head at the start of `buf` into `head`.
///
/// `Ok(Status::Partial)` asks for more bytes; the head is then not valid. Leading empty lines
/// are skipped (RFC 9112 §2.2); bare LF line endings are accepted as httparse does.
pub fn parse_request(
    buf: &[u8],
    limits: &Limits,
    head: &mut RequestHead,
) -> Result<Status, H1Error> {
    let window = &buf[..buf.len().min(limits.head_window())];
    let mut storage = fields::lend(&mut head.storage, limits.header_slots());
    let parsed = {
        let mut req = httparse::Request::new(&mut []);
        let slots = &mut storage.spare_capacity_mut()[..limits.header_slots()];
        match req.parse_with_uninit_headers(window, slots) {
            Ok(httparse::Status::Complete(len)) => {
                let read = head.record(window, &req, len);
                Ok(Some((len, read)))
            }
            Ok(httparse::Status::Partial) => Ok(None),
            Err(e) => Err(H1Error::from_httparse(e)),
        }
    };
    head.storage = fields::give_back(storage);
    match parsed? {
        None if buf.len() >= limits.head_window() => Err(H1Error::HeadTooLarge),
        None => Ok(Status::Partial),
        Some((len, read)) => {
            head.judge(buf, read)?;
            Ok(Status::Complete(len))
        }
    }
}

impl RequestHead {
    /// An empty head, ready for [`parse_request`].
    pub fn new() -> Self {
        Self::default()
    }

    fn record(
        &mut self,
        base: &[u8],
        req: &httparse::Request<'_, '_>,
        len: usize,
    ) -> Result<Facts, H1Error> {
        self.len = len;
        let method = req.method.unwrap_or_default().as_bytes();
        self.method_span = Span::of(base, method);
        self.method = Method::from_token(method, self.method_span);
        self.target = Span::of(base, req.path.unwrap_or_default().as_bytes());
        self.version = Version::from_minor(req.version.unwrap_or(1));
        fields::read(base, req.headers, &mut self.fields, &mut self.options)
    }

    /// The request rules, after a complete parse.
    fn judge(&mut self, buf: &[u8], read: Result<Facts, H1Error>) -> Result<(), H1Error> {
        self.form = target::parse_target(buf, self.target, self.method)?;
        let f = read?;
        self.facts = f;
        // RFC 9112 §3.2: more than one Host, none in HTTP/1.1, or an invalid one: 400.
        if f.host_count > 1 {
            return Err(H1Error::DuplicateHost);
        }
        match f.host {
            None if self.version == Version::Http11 => return Err(H1Error::MissingHost),
            Some(host) if !target::is_valid_host(host.get(buf)) => {
                return Err(H1Error::InvalidHost)
            }
            _ => {}
        }
        f.check_framing()?;
        // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means the framing is faulty.
        if f.te_present && self.version == Version::Http10 {
            return Err(H1Error::InvalidTransferEncoding);
        }
        let both = f.te_present && f.content_length.is_some();
        self.framing = if f.te_present {
            Framing::Chunked
        } else {
            f.content_length.map_or(Framing::None, Framing::Length)
        };
        // RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only with "keep-alive". §6.1: close
        // after a request framed by both Transfer-Encoding and Content-Length.
        self.keep_alive = !f.close && !both && (self.version == Version::Http11 || f.keep_alive);
        Ok(())
    }

    /// Length of the head in bytes; the body starts there.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no head was parsed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The method's bytes in `buf`.
    pub fn method_bytes<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        self.method_span.get(buf)
    }

    /// The request-target as received.
    pub fn target(&self) -> Span {
        self.target
    }

    /// The target's form.
    pub fn form(&self) -> TargetForm {
        self.form
    }

    /// The path and query in origin-form: the target itself, or for an absolute-form target
    /// what follows its authority (empty means `/`).
    pub fn path(&self) -> Span {
        match self.form {
            Form::Absolute { path, .. } => path,
            _ => self.target,
        }
    }

    /// The HTTP version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The Host value (trimmed), if the request has one.
    pub fn host(&self) -> Option<Span> {
        self.facts.host
    }

    /// The authority the server should see: an absolute-form target's, else Host's.
    pub fn authority(&self) -> Option<Span> {
        match self.form {
            Form::Absolute { authority, .. } => Some(authority),
            _ => self.facts.host,
        }
    }

    /// How the body is delimited.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// A reader for the body.
    pub fn body_reader(&self, limits: &Limits) -> BodyReader {
        self.framing.reader(limits)
    }

    /// Whether the client connection may carry another request after this exchange.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// Whether the client asked for `100 Continue` (RFC 9110 §10.1.1; ignored in HTTP/1.0).
    pub fn expect_continue(&self) -> bool {
        self.facts.expect_continue && self.version == Version::Http11
    }

    /// Whether `TE` lists `trailers`: the client accepts trailer fields.
    pub fn te_trailers(&self) -> bool {
        self.facts.te_trailers
    }

    /// Whether the request has an Upgrade header.
    pub fn upgrade(&self) -> bool {
        self.facts.upgrade
    }

    /// Whether the request is forwarded as an upgrade request (see the module docs): HTTP/1.1
    /// (RFC 9110 §7.8: an HTTP/1.0 request's Upgrade is ignored), an `Upgrade` field,
    /// `upgrade` among the `Connection` options, no content (no framing field, or
    /// `Content-Length: 0`), and not CONNECT. Its `Upgrade` fields and `Connection: upgrade`
    /// then reach the server, and a `101` answer turns the connection into a tunnel.
    pub fn is_upgrade(&self) -> bool {
        self.version == Version::Http11
            && self.facts.upgrade
            && self.facts.upgrade_option
            && self.method != Method::Connect
            && matches!(self.framing, Framing::None | Framing::Length(0))
    }

    /// Whether `Connection` lists `upgrade` (with [`RequestHead::upgrade`]: an upgrade
    /// request, RFC 9110 §7.8).
    pub fn connection_upgrade(&self) -> bool {
        self.facts.upgrade_option
    }

    /// Whether `Connection` lists `close`.
    pub fn connection_close(&self) -> bool {
        self.facts.close
    }

    /// Whether the body was framed by both Transfer-Encoding and Content-Length (processed as
    /// chunked, connection closed after the response).
    pub fn conflicting_framing(&self) -> bool {
        self.facts.te_present && self.facts.content_length.is_some()
    }

    /// What [`crate::parse_response`] and [`crate::write_response`] need of this request.
    pub fn info(&self) -> RequestInfo {
        RequestInfo {
            method: self.method,
            version: self.version,
            keep_alive: self.keep_alive,
            upgrade: self.is_upgrade(),
        }
    }
}

#[cfg(test)]
mod tests;
