#![allow(clippy::unwrap_used)]

use super::*;

fn head(
    status: u16,
    fields: &[(&str, &str)],
    ends: bool,
    head_only: bool,
) -> (String, BodyFraming) {
    let mut b = http::Response::builder().status(status);
    for (n, v) in fields {
        b = b.header(*n, *v);
    }
    let parts = b.body(()).unwrap().into_parts().0;
    let mut out = Vec::new();
    let framing = write_head(&parts, ends, head_only, &mut out);
    (String::from_utf8(out).unwrap(), framing)
}

#[test]
fn a_body_without_length_is_chunked_and_one_with_length_passed() {
    let (h, f) = head(200, &[("content-type", "application/grpc")], false, false);
    assert_eq!(
        h,
        "HTTP/1.1 200 OK\r\ncontent-type: application/grpc\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    assert_eq!(f, BodyFraming::Chunked);
    let (h, f) = head(404, &[("content-length", "3")], false, false);
    assert_eq!(h, "HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\n");
    assert_eq!(f, BodyFraming::Length);
}

#[test]
fn a_response_that_ended_with_its_head_says_its_length() {
    // A gRPC error is a "trailers-only" response: HEADERS with END_STREAM.
    let (h, f) = head(200, &[("grpc-status", "5")], true, false);
    assert_eq!(
        h,
        "HTTP/1.1 200 OK\r\ngrpc-status: 5\r\ncontent-length: 0\r\n\r\n"
    );
    assert_eq!(f, BodyFraming::Empty);
}

#[test]
fn bodiless_responses_keep_their_fields_as_they_are() {
    let (h, f) = head(200, &[("content-length", "10")], true, true);
    assert_eq!(h, "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n");
    assert_eq!(f, BodyFraming::Empty);
    let (h, _) = head(304, &[], true, false);
    assert_eq!(h, "HTTP/1.1 304 Not Modified\r\n\r\n");
}
