//! Responses tern writes itself: the monitor page, error pages, the answers of `http_request`
//! rules (`deny`, `return`) and `100 Continue`.
//!
//! The pages use HAProxy's wording so operators and monitoring that parse them see what they
//! expect. Each is a static string: writing one is a few `extend_from_slice` calls into the
//! caller's output buffer.

use crate::rewrite::push_u64;

/// The interim response sent to a client that sent `Expect: 100-continue`, once its body is
/// wanted (RFC 9110 §10.1.1).
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// A page tern answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// 200, the `monitor_uri` answer.
    Monitor,
    /// 400.
    BadRequest,
    /// 408.
    RequestTimeout,
    /// 431.
    HeadTooLarge,
    /// 501.
    NotImplemented,
    /// 502.
    BadGateway,
    /// 503.
    Unavailable,
    /// 504.
    GatewayTimeout,
    /// The answer of a `deny` rule: HAProxy's page for this status, one of [`DENY_STATUSES`]
    /// (any other status gets 403's page).
    Denied(u16),
}

/// The statuses a `deny` rule may answer with: those HAProxy has an error page for.
pub const DENY_STATUSES: &[u16] = &[
    200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504,
];

impl Page {
    /// The page for a status tern answers with; 503's page for any other.
    pub fn for_status(status: u16) -> Page {
        match status {
            200 => Page::Monitor,
            400 => Page::BadRequest,
            408 => Page::RequestTimeout,
            431 => Page::HeadTooLarge,
            501 => Page::NotImplemented,
            502 => Page::BadGateway,
            504 => Page::GatewayTimeout,
            _ => Page::Unavailable,
        }
    }

    /// The status code.
    pub fn status(self) -> u16 {
        self.parts().0
    }

    /// (status, reason phrase, body).
    fn parts(self) -> (u16, &'static str, &'static str) {
        match self {
            Page::Denied(status) => denied(status),
            Page::Monitor => (200, "OK", "<html><body><h1>200 OK</h1>\nService ready.\n</body></html>\n"),
            Page::BadRequest => (400, "Bad Request", "<html><body><h1>400 Bad request</h1>\nYour browser sent an invalid request.\n</body></html>\n"),
            Page::RequestTimeout => (408, "Request Timeout", "<html><body><h1>408 Request Time-out</h1>\nYour browser didn't send a complete request in time.\n</body></html>\n"),
            Page::HeadTooLarge => (431, "Request Header Fields Too Large", "<html><body><h1>431 Request Header Fields Too Large</h1>\nYour browser sent a request head larger than allowed.\n</body></html>\n"),
            Page::NotImplemented => (501, "Not Implemented", "<html><body><h1>501 Not Implemented</h1>\nThe request uses a transfer coding this proxy does not support.\n</body></html>\n"),
            Page::BadGateway => (502, "Bad Gateway", "<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid or incomplete response.\n</body></html>\n"),
            Page::Unavailable => (503, "Service Unavailable", "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n"),
            Page::GatewayTimeout => (504, "Gateway Timeout", "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>\n"),
        }
    }
}

/// The page of a `deny` rule (HAProxy's `http_err_msgs`).
fn denied(status: u16) -> (u16, &'static str, &'static str) {
    match status {
        200 => Page::Monitor.parts(),
        400 => Page::BadRequest.parts(),
        401 => (401, "Unauthorized", "<html><body><h1>401 Unauthorized</h1>\nYou need a valid user and password to access this content.\n</body></html>\n"),
        404 => (404, "Not Found", "<html><body><h1>404 Not Found</h1>\nThe resource could not be found.\n</body></html>\n"),
        405 => (405, "Method Not Allowed", "<html><body><h1>405 Method Not Allowed</h1>\nA request was made of a resource using a request method not supported by that resource\n</body></html>\n"),
        407 => (407, "Unauthorized", "<html><body><h1>407 Unauthorized</h1>\nYou need a valid user and password to access this content.\n</body></html>\n"),
        408 => Page::RequestTimeout.parts(),
        410 => (410, "Gone", "<html><body><h1>410 Gone</h1>\nThe resource is no longer available and will not be available again.\n</body></html>\n"),
        413 => (413, "Payload Too Large", "<html><body><h1>413 Payload Too Large</h1>\nThe request entity exceeds the maximum allowed.\n</body></html>\n"),
        425 => (425, "Too Early", "<html><body><h1>425 Too Early</h1>\nYour browser sent early data.\n</body></html>\n"),
        429 => (429, "Too Many Requests", "<html><body><h1>429 Too Many Requests</h1>\nYou have sent too many requests in a given amount of time.\n</body></html>\n"),
        500 => (500, "Internal Server Error", "<html><body><h1>500 Internal Server Error</h1>\nAn internal server error occurred.\n</body></html>\n"),
        501 => Page::NotImplemented.parts(),
        502 => Page::BadGateway.parts(),
        503 => Page::Unavailable.parts(),
        504 => Page::GatewayTimeout.parts(),
        _ => (403, "Forbidden", "<html><body><h1>403 Forbidden</h1>\nRequest forbidden by administrative rules.\n</body></html>\n"),
    }
}

/// Appends the answer of a `return` rule to `out`: `status` with `body` (typed `content_type`,
/// when there is a body); `close` and `head_only` as in [`write_page`]. A 204 or 304 carries
/// no body and no length (the configuration gives those none).
pub fn write_reply(
    status: u16,
    content_type: Option<&[u8]>,
    body: &[u8],
    close: bool,
    head_only: bool,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_u64(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
    let bodiless = status == 204 || status == 304;
    if !bodiless {
        out.extend_from_slice(b"content-length: ");
        push_u64(out, body.len() as u64);
        out.extend_from_slice(b"\r\n");
    }
    if let Some(t) = content_type {
        out.extend_from_slice(b"content-type: ");
        out.extend_from_slice(t);
        out.extend_from_slice(b"\r\n");
    }
    if close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if !head_only && !bodiless {
        out.extend_from_slice(body);
    }
}

/// Appends a configured error page in place of tern's own: `head` (its status line and
/// fields, each ending in CRLF, without framing or `Connection`), then the length of `body`,
/// `connection: close` when `close`, and `body` unless `head_only`.
pub fn write_custom_page(
    head: &[u8],
    body: &[u8],
    close: bool,
    head_only: bool,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(head);
    out.extend_from_slice(b"content-length: ");
    push_u64(out, body.len() as u64);
    out.extend_from_slice(b"\r\n");
    if close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(body);
    }
}

/// Appends a redirect (`code`, its reason phrase, no body) with the field lines `lines`
/// (`location: ...\r\n` and the others a redirect rule made); `close` as in [`write_page`].
/// HAProxy's shape: an empty body announced by `content-length: 0`.
pub fn write_redirect(code: u16, lines: &[u8], close: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_u64(out, u64::from(code));
    out.push(b' ');
    out.extend_from_slice(reason(code).as_bytes());
    out.extend_from_slice(b"\r\ncontent-length: 0\r\n");
    out.extend_from_slice(lines);
    if close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// The reason phrase of a status (RFC 9110 §15); empty for codes without one, which HTTP/1.1
/// allows (RFC 9112 §4).
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

/// Appends `page` as a complete HTTP/1.1 response to `out`. `close` adds `Connection: close`
/// (tern closes after it); `head_only` leaves the body out (the answer to a HEAD request) but
/// keeps its Content-Length.
pub fn write_page(page: Page, close: bool, head_only: bool, out: &mut Vec<u8>) {
    let (status, reason, body) = page.parts();
    out.extend_from_slice(b"HTTP/1.1 ");
    push_u64(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason.as_bytes());
    out.extend_from_slice(b"\r\ncontent-length: ");
    push_u64(out, body.len() as u64);
    out.extend_from_slice(b"\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n");
    if close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
}

#[cfg(test)]
mod tests;
