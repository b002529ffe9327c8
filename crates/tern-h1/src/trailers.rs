//! The trailer section of a chunked body as tern passes it on: field by field, in canonical
//! form, without the fields that must not be trailers.
//!
//! A trailer field arrives after the content, when the head has long been acted on. RFC 9110
//! §6.5.1 says which fields that rules out: "those that describe message framing, routing,
//! authentication, request modifiers, response controls, or content format". A recipient may
//! still merge trailers into the header section (many servers and client libraries do), so a
//! `Host` or `Content-Length` smuggled into trailers could reach code that trusts the head. tern
//! drops these fields (the message still goes through, as it would without them):
//!
//! | RFC 9110 §6.5.1 category | fields dropped |
//! |---|---|
//! | framing (§6.6.2; RFC 9112 §6) | Content-Length, Transfer-Encoding, Trailer |
//! | connection management, hop by hop (§7.6.1, §7.8, §10.1.4) | Connection, Keep-Alive, Proxy-Connection, TE, Upgrade |
//! | routing (§7.2, §7.6.2) | Host, Max-Forwards; Forwarded (RFC 7239), `X-Forwarded-*` and `X-SSL-Client-*`, which tern writes in the head for servers to trust |
//! | authentication (§11; RFC 6265) | Authorization, Proxy-Authorization, WWW-Authenticate, Proxy-Authenticate, Cookie, Set-Cookie |
//! | request modifiers (§10.1.1, §12.5, §13.1, §14.2) | Expect, Accept, Accept-Charset, Accept-Encoding, Accept-Language, Range, If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range |
//! | response controls (§6.6.1, §10.2, §12.5.5; RFC 9111 §5) | Date, Location, Retry-After, Vary, Age, Cache-Control, Expires, Pragma |
//! | content format (§8.3–§8.7, §14.4) | Content-Type, Content-Encoding, Content-Language, Content-Location, Content-Range |
//!
//! Content-Encoding is dropped: the recipient must know the coding before it can decode the
//! content (§8.4), so a late one either is ignored or changes how content already read is
//! understood. Fields made to be trailers (checksums, `Server-Timing`, gRPC's status) and
//! unknown fields pass. Fields the head's `Connection` names are not looked up: they are
//! hop-by-hop in the head, and a trailer field of that name is rare enough to pass as any other.
//!
//! Each kept line is written as `name: value` + CRLF: the name as received, the value without
//! the whitespace around it (RFC 9112 §7.1.2 gives trailer lines the grammar of header lines).
//! The decoder has already checked the bytes (a token name, no control bytes in the value, no
//! obs-fold) and bounds the section (`max_trailer_size`), which bounds this buffer too.

use crate::body::LAST_CHUNK;
use crate::span::is_ows;

/// Trailer fields never passed on (lowercase), by the categories of the module docs.
const DROPPED: &[&[u8]] = &[
    // Framing.
    b"content-length",
    b"transfer-encoding",
    b"trailer",
    // Connection management.
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"te",
    b"upgrade",
    // Routing.
    b"host",
    b"max-forwards",
    b"forwarded",
    // Authentication.
    b"authorization",
    b"proxy-authorization",
    b"www-authenticate",
    b"proxy-authenticate",
    b"cookie",
    b"set-cookie",
    // Request modifiers.
    b"expect",
    b"accept",
    b"accept-charset",
    b"accept-encoding",
    b"accept-language",
    b"range",
    b"if-match",
    b"if-none-match",
    b"if-modified-since",
    b"if-unmodified-since",
    b"if-range",
    // Response controls.
    b"date",
    b"location",
    b"retry-after",
    b"vary",
    b"age",
    b"cache-control",
    b"expires",
    b"pragma",
    // Content format.
    b"content-type",
    b"content-encoding",
    b"content-language",
    b"content-location",
    b"content-range",
];

/// Name prefixes of fields tern writes in the head itself (routing facts a server trusts).
const DROPPED_PREFIXES: &[&[u8]] = &[b"x-forwarded-", b"x-ssl-client-"];

/// Whether a field of this name is dropped from a trailer section (case-insensitive).
pub(crate) fn is_dropped(name: &[u8]) -> bool {
    DROPPED.iter().any(|d| name.eq_ignore_ascii_case(d))
        || DROPPED_PREFIXES
            .iter()
            .any(|p| name.len() >= p.len() && name[..p.len()].eq_ignore_ascii_case(p))
}

/// The end of a chunked body being rewritten: the last chunk, the kept trailer fields, the
/// final CRLF. Fed one checked byte at a time by the decoder.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trailers {
    /// `0\r\n` and the kept lines, then the line being read; empty until a trailer line starts.
    section: Vec<u8>,
    /// Where the line being read starts.
    line: usize,
    /// Where its name ends (its colon).
    name_end: usize,
    /// Fields dropped so far.
    dropped: usize,
    /// The final CRLF is in.
    finished: bool,
}

impl Trailers {
    /// The first byte of a field name.
    pub(crate) fn start_line(&mut self, b: u8) {
        if self.section.is_empty() {
            self.section.extend_from_slice(b"0\r\n");
        }
        self.line = self.section.len();
        self.section.push(b);
    }

    /// A further byte of the name.
    pub(crate) fn name_byte(&mut self, b: u8) {
        self.section.push(b);
    }

    /// The colon after the name.
    pub(crate) fn colon(&mut self) {
        self.name_end = self.section.len();
        self.section.push(b':');
    }

    /// A byte of the value (whitespace before it is left out).
    pub(crate) fn value_byte(&mut self, b: u8) {
        let empty = self.section.len() == self.name_end + 1;
        if empty && is_ows(b) {
            return;
        }
        if empty {
            self.section.push(b' ');
        }
        self.section.push(b);
    }

    /// The CR that ends the line: keeps it (trimmed) or drops it.
    pub(crate) fn end_line(&mut self) {
        if is_dropped(&self.section[self.line..self.name_end]) {
            self.section.truncate(self.line);
            self.dropped += 1;
            return;
        }
        while self.section.last().is_some_and(|&b| is_ows(b)) {
            self.section.pop();
        }
        self.section.extend_from_slice(b"\r\n");
    }

    /// The final CRLF of the body.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
        if self.section.len() > b"0\r\n".len() {
            self.section.extend_from_slice(b"\r\n");
        } else {
            // Every field was dropped: the plain last chunk says the same.
            self.section.clear();
        }
    }

    /// The end of the body to write (once [`Trailers::finish`] was called).
    pub(crate) fn last_chunk(&self) -> &[u8] {
        if self.finished && !self.section.is_empty() {
            &self.section
        } else {
            LAST_CHUNK
        }
    }

    /// How many fields were dropped.
    pub(crate) fn dropped(&self) -> usize {
        self.dropped
    }
}

#[cfg(test)]
mod tests;
