//! Response heads: parse in place, and decide how the body is delimited given the request.
//!
//! RFC 9112 §6.3 in order: a response to HEAD, a 1xx, 204 or 304 has no body whatever its
//! fields say; a 2xx to CONNECT turns the connection into a tunnel; then Transfer-Encoding
//! (only a single final `chunked` is accepted, anything else is a 502, since tern could not pass
//! another coding on faithfully), then Content-Length (invalid or conflicting: 502), else the
//! body runs until the server closes. Framing fields are checked even when the status says there
//! is no body, because they are still passed to the client (a HEAD response's Content-Length).
//!
//! A response framed by both Transfer-Encoding and Content-Length is read as chunked and the
//! server connection is not reused (RFC 9112 §6.3 item 3), the same choice as for requests.
//!
//! Interim (1xx) responses are parsed like any other ([`ResponseHead::is_informational`]); the
//! final response follows on the same connection. tern answers `Expect` itself, so a `100
//! Continue` from a server is dropped. A `101` ends the connection's HTTP use: to an upgrade
//! request ([`crate::RequestHead::is_upgrade`]) it is the last head before a tunnel
//! ([`crate::ClientBody::Tunnel`]); to any other request it is the server's error.

use httparse::Header;

use crate::body::BodyReader;
use crate::error::H1Error;
use crate::fields::{self, Facts, Field};
use crate::limits::Limits;
use crate::span::{Method, Span, Status, Version};

/// How a response body is delimited on the server's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseBody {
    /// No body (HEAD, 1xx, 204, 304).
    #[default]
    None,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked coding.
    Chunked,
    /// Everything until the server closes the connection.
    UntilClose,
    /// A 2xx to CONNECT: from here on the connection carries opaque bytes both ways.
    Tunnel,
}

/// A parsed response head: spans into the buffer it was parsed from, and derived facts.
/// Reuse one per server connection.
#[derive(Debug, Default)]
pub struct ResponseHead {
    pub(crate) len: usize,
    pub(crate) status: u16,
    pub(crate) reason: Span,
    pub(crate) version: Version,
    pub(crate) fields: Vec<Field>,
    pub(crate) facts: Facts,
    pub(crate) body: ResponseBody,
    pub(crate) keep_alive: bool,
    options: Vec<Span>,
    storage: Vec<Header<'static>>,
}

/// Parses the response head at the start of `buf` into `head`; `method` is the method of the
/// request it answers. Errors all mean 502 to the client ([`H1Error::RESPONSE_STATUS`]).
pub fn parse_response(
    buf: &[u8],
    limits: &Limits,
    head: &mut ResponseHead,
    method: Method,
) -> Result<Status, H1Error> {
    let window = &buf[..buf.len().min(limits.head_window())];
    let mut storage = fields::lend(&mut head.storage, limits.header_slots());
    let parsed = {
        let mut resp = httparse::Response::new(&mut []);
        let slots = &mut storage.spare_capacity_mut()[..limits.header_slots()];
        match httparse::ParserConfig::default()
            .parse_response_with_uninit_headers(&mut resp, window, slots)
        {
            Ok(httparse::Status::Complete(len)) => {
                let read = head.record(window, &resp, len);
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
            head.judge(read, method)?;
            Ok(Status::Complete(len))
        }
    }
}

impl ResponseHead {
    /// An empty head, ready for [`parse_response`].
    pub fn new() -> Self {
        Self::default()
    }

    fn record(
        &mut self,
        base: &[u8],
        resp: &httparse::Response<'_, '_>,
        len: usize,
    ) -> Result<Facts, H1Error> {
        self.len = len;
        self.status = resp.code.unwrap_or_default();
        self.reason = Span::of(base, resp.reason.unwrap_or_default().as_bytes());
        self.version = Version::from_minor(resp.version.unwrap_or(1));
        fields::read(base, resp.headers, &mut self.fields, &mut self.options)
    }

    fn judge(&mut self, read: Result<Facts, H1Error>, method: Method) -> Result<(), H1Error> {
        if !(100..=599).contains(&self.status) {
            return Err(H1Error::InvalidStatus);
        }
        let f = read?;
        self.facts = f;
        f.check_framing()?;
        // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
        if f.te_present && self.version == Version::Http10 {
            return Err(H1Error::InvalidTransferEncoding);
        }
        let s = self.status;
        self.body = if method == Method::Head || s < 200 || s == 204 || s == 304 {
            ResponseBody::None
        } else if method == Method::Connect && (200..300).contains(&s) {
            ResponseBody::Tunnel
        } else if f.te_present {
            ResponseBody::Chunked
        } else if let Some(n) = f.content_length {
            ResponseBody::Length(n)
        } else {
            ResponseBody::UntilClose
        };
        let both = f.te_present && f.content_length.is_some();
        // RFC 9112 §9.3 for the version rules; a body delimited by close, a tunnel, a switch
        // of protocol or an ambiguous framing all end the connection's use for HTTP.
        self.keep_alive = !f.close
            && !both
            && (self.version == Version::Http11 || f.keep_alive)
            && s != 101
            && !matches!(self.body, ResponseBody::UntilClose | ResponseBody::Tunnel);
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

    /// The status code (100..=599).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether this is an interim (1xx) response: the final one follows on the connection.
    pub fn is_informational(&self) -> bool {
        self.status < 200
    }

    /// The reason phrase (empty when the server sent none, or one with non-ASCII bytes).
    pub fn reason(&self) -> Span {
        self.reason
    }

    /// The server's HTTP version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// How the body is delimited on the server's side.
    pub fn body(&self) -> ResponseBody {
        self.body
    }

    /// The Content-Length the server declared (also for HEAD and 304, where it describes the
    /// representation rather than this message).
    pub fn content_length(&self) -> Option<u64> {
        self.facts.content_length
    }

    /// Whether the response has an `Upgrade` field (a `101` must name the protocol it switches
    /// to, RFC 9110 §15.2.2).
    pub fn upgrade(&self) -> bool {
        self.facts.upgrade
    }

    /// Whether the server declared `Transfer-Encoding: chunked`.
    pub fn chunked(&self) -> bool {
        self.facts.te_present
    }

    /// Whether the server connection can carry another request once this body is read.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// A reader for the body as the server sends it.
    pub fn body_reader(&self, limits: &Limits) -> BodyReader {
        match self.body {
            ResponseBody::None => BodyReader::none(),
            ResponseBody::Length(n) => BodyReader::length(n),
            ResponseBody::Chunked => BodyReader::chunked(limits),
            ResponseBody::UntilClose | ResponseBody::Tunnel => BodyReader::until_close(),
        }
    }
}

#[cfg(test)]
mod tests;
