//! Responses tern writes itself: the monitor page and error pages.
//!
//! The pages follow HAProxy's wording so operators and monitoring that parse them see what they
//! expect. They are static: building one allocates nothing but the header map.

use bytes::Bytes;
use http::header::{HeaderValue, CACHE_CONTROL, CONNECTION, CONTENT_TYPE};
use http::{Response, StatusCode};

use crate::body::Content;

const MONITOR: &str = "<html><body><h1>200 OK</h1>\nService ready.\n</body></html>\n";
const BAD_REQUEST: &str =
    "<html><body><h1>400 Bad request</h1>\nYour browser sent an invalid request.\n</body></html>\n";
const REQUEST_TIMEOUT: &str = "<html><body><h1>408 Request Time-out</h1>\nYour browser didn't send a complete request in time.\n</body></html>\n";
const BAD_GATEWAY: &str = "<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid or incomplete response.\n</body></html>\n";
const NOT_IMPLEMENTED: &str = "<html><body><h1>501 Not Implemented</h1>\nThe request uses a transfer coding this proxy does not support.\n</body></html>\n";
const UNAVAILABLE: &str = "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n";
const GATEWAY_TIMEOUT: &str = "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>\n";

/// A local response. `close` asks hyper to end the connection after it (used when the request
/// body may be left half-read, so nothing of it is mistaken for the next request).
pub(crate) fn page(status: StatusCode, close: bool) -> Response<Content> {
    let body = match status {
        StatusCode::OK => MONITOR,
        StatusCode::BAD_REQUEST => BAD_REQUEST,
        StatusCode::REQUEST_TIMEOUT => REQUEST_TIMEOUT,
        StatusCode::BAD_GATEWAY => BAD_GATEWAY,
        StatusCode::GATEWAY_TIMEOUT => GATEWAY_TIMEOUT,
        StatusCode::NOT_IMPLEMENTED => NOT_IMPLEMENTED,
        _ => UNAVAILABLE,
    };
    let mut resp = Response::new(Content::Local(Some(Bytes::from_static(body.as_bytes()))));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/html"));
    if close {
        h.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}
