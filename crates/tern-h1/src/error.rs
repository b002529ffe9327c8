//! Why a message was refused, the status the proxy answers, and a stable name to count it by.
//!
//! One error type serves both directions because most rules are the same (a field is malformed
//! whoever sent it); what differs is the answer: a refused request gets the status of
//! [`H1Error::request_status`], and any error on the server's side gets
//! [`H1Error::RESPONSE_STATUS`] (502), as RFC 9112 §6.3 asks of a proxy. The type is `Copy` and
//! carries only static text, so refusing costs no allocation either.

/// A message the codec refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum H1Error {
    /// The start line or a field line does not parse (httparse's reason, or ours).
    #[error("malformed message head: {0}")]
    Malformed(&'static str),
    /// No complete head within `max_head_size` bytes.
    #[error("message head larger than the limit")]
    HeadTooLarge,
    /// More than `max_headers` fields.
    #[error("more header fields than the limit")]
    TooManyHeaders,
    /// A request-target that is not one of the four forms, or not the one the method needs.
    #[error("invalid request target")]
    InvalidTarget,
    /// An HTTP/1.1 request without Host (RFC 9112 §3.2).
    #[error("HTTP/1.1 request without a Host header")]
    MissingHost,
    /// More than one Host field line (RFC 9112 §3.2).
    #[error("more than one Host header")]
    DuplicateHost,
    /// A Host value that is not `host[:port]` (RFC 9110 §7.2).
    #[error("invalid Host header")]
    InvalidHost,
    /// A Content-Length that is not one decimal number, or several that differ (RFC 9110
    /// §8.6, RFC 9112 §6.3).
    #[error("invalid or conflicting Content-Length")]
    InvalidContentLength,
    /// A transfer coding other than `chunked`: tern could not pass it on faithfully.
    #[error("transfer coding other than chunked")]
    UnsupportedTransferCoding,
    /// A Transfer-Encoding that cannot frame the message: empty, `chunked` twice, or in an
    /// HTTP/1.0 message (RFC 9112 §6.1).
    #[error("invalid Transfer-Encoding")]
    InvalidTransferEncoding,
    /// A Connection header naming more options than tern will look for.
    #[error("too many Connection options")]
    TooManyConnectionOptions,
    /// A status code outside 100..=599.
    #[error("invalid response status code")]
    InvalidStatus,
    /// A chunked body that breaks the grammar of RFC 9112 §7.1.
    #[error("invalid chunked body: {0}")]
    InvalidChunk(&'static str),
    /// More chunk-extension bytes than `max_chunk_ext`.
    #[error("chunk extensions longer than the limit")]
    ChunkExtTooLong,
    /// A trailer section over `max_trailer_size`.
    #[error("trailer section larger than the limit")]
    TrailersTooLarge,
    /// The connection ended before the body did.
    #[error("message body ended early")]
    Truncated,
}

impl H1Error {
    /// The status tern answers when a server's response is refused (RFC 9112 §6.3).
    pub const RESPONSE_STATUS: u16 = 502;

    /// The status tern answers when a client's request is refused.
    pub fn request_status(&self) -> u16 {
        match self {
            H1Error::HeadTooLarge | H1Error::TooManyHeaders => 431,
            // RFC 9112 §6.1: a coding the server does not understand.
            H1Error::UnsupportedTransferCoding => 501,
            _ => 400,
        }
    }

    /// A stable snake_case name, for counters and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            H1Error::Malformed(_) => "malformed",
            H1Error::HeadTooLarge => "head_too_large",
            H1Error::TooManyHeaders => "too_many_headers",
            H1Error::InvalidTarget => "invalid_target",
            H1Error::MissingHost => "missing_host",
            H1Error::DuplicateHost => "duplicate_host",
            H1Error::InvalidHost => "invalid_host",
            H1Error::InvalidContentLength => "invalid_content_length",
            H1Error::UnsupportedTransferCoding => "unsupported_transfer_coding",
            H1Error::InvalidTransferEncoding => "invalid_transfer_encoding",
            H1Error::TooManyConnectionOptions => "too_many_connection_options",
            H1Error::InvalidStatus => "invalid_status",
            H1Error::InvalidChunk(_) => "invalid_chunk",
            H1Error::ChunkExtTooLong => "chunk_ext_too_long",
            H1Error::TrailersTooLarge => "trailers_too_large",
            H1Error::Truncated => "truncated",
        }
    }

    /// Whether a limit was hit (the head was not necessarily malformed): 431 for requests.
    pub fn is_too_large(&self) -> bool {
        matches!(self, H1Error::HeadTooLarge | H1Error::TooManyHeaders)
    }

    pub(crate) fn from_httparse(e: httparse::Error) -> H1Error {
        match e {
            httparse::Error::TooManyHeaders => H1Error::TooManyHeaders,
            httparse::Error::HeaderName => H1Error::Malformed("invalid header name"),
            httparse::Error::HeaderValue => H1Error::Malformed("invalid header value"),
            httparse::Error::NewLine => H1Error::Malformed("invalid line ending"),
            httparse::Error::Status => H1Error::Malformed("invalid status line"),
            httparse::Error::Token => H1Error::Malformed("invalid method or token"),
            httparse::Error::Version => H1Error::Malformed("invalid request line or version"),
        }
    }
}
