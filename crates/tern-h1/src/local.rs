//! Responses tern writes itself: the monitor page, error pages and `100 Continue`.
//!
//! The pages use HAProxy's wording (as crates/tern-proxy/src/local.rs does) so operators and
//! monitoring that parse them see what they expect. Each is a static string: writing one is a
//! few `extend_from_slice` calls into the caller's output buffer.

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
}

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
