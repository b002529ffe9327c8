//! An HTTP/2 response from a server, as the HTTP/1.1 head the relay parses.
//!
//! The status line is `HTTP/1.1`, the fields are written as received (the `h2` crate refused
//! connection-specific ones), and the framing is chosen for the body that follows:
//! - no body (HEADERS ended the stream, or a response to HEAD, or a 204/304): the fields as
//!   they are, with `content-length: 0` added when a body was possible and none was named, so
//!   the relay does not wait for a close;
//! - `content-length` given: the DATA passed as it comes (the `h2` crate checks the length);
//!   trailers, which HTTP/1.1 cannot carry after a length, are dropped;
//! - otherwise chunked, the DATA frames becoming chunks and the trailers (gRPC's `grpc-status`)
//!   the trailer section.

use http::header::CONTENT_LENGTH;
use http::response::Parts;

use crate::http2::BodyFraming;

/// Writes the HTTP/1.1 head of the response `parts` into `out` and says how its body follows.
/// `ends_stream`: the HEADERS frame carried END_STREAM; `head_only`: the request was HEAD (no
/// body follows whatever the fields say).
pub(super) fn write_head(
    parts: &Parts,
    ends_stream: bool,
    head_only: bool,
    out: &mut Vec<u8>,
) -> BodyFraming {
    let status = parts.status;
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    let mut has_length = false;
    for (name, value) in &parts.headers {
        has_length |= name == CONTENT_LENGTH;
        line(out, name.as_str().as_bytes(), value.as_bytes());
    }
    let bodiless = head_only
        || status.is_informational()
        || status == http::StatusCode::NO_CONTENT
        || status == http::StatusCode::NOT_MODIFIED;
    let framing = if bodiless {
        BodyFraming::Empty
    } else if ends_stream {
        if !has_length {
            line(out, b"content-length", b"0");
        }
        BodyFraming::Empty
    } else if has_length {
        BodyFraming::Length
    } else {
        line(out, b"transfer-encoding", b"chunked");
        BodyFraming::Chunked
    };
    out.extend_from_slice(b"\r\n");
    framing
}

pub(super) fn line(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests;
