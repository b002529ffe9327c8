#![allow(clippy::unwrap_used)]

use super::*;

/// Feeds trailer lines (`name:value`, as checked by the decoder) and returns the end of the
/// body and the number of fields dropped.
fn section(lines: &[&str]) -> (String, usize) {
    let mut t = Trailers::default();
    for line in lines {
        let (name, value) = line.split_once(':').unwrap();
        let mut name = name.bytes();
        t.start_line(name.next().unwrap());
        name.for_each(|b| t.name_byte(b));
        t.colon();
        value.bytes().for_each(|b| t.value_byte(b));
        t.end_line();
    }
    t.finish();
    (
        String::from_utf8(t.last_chunk().to_vec()).unwrap(),
        t.dropped(),
    )
}

#[test]
fn fields_of_every_category_are_dropped_in_any_case() {
    for name in [
        "Content-Length",
        "transfer-encoding",
        "Trailer",
        "Connection",
        "Keep-Alive",
        "Proxy-Connection",
        "TE",
        "Upgrade",
        "Host",
        "Max-Forwards",
        "Forwarded",
        "X-Forwarded-For",
        "x-forwarded-proto",
        "X-Forwarded-Host",
        "X-SSL-Client-Verify",
        "Authorization",
        "Proxy-Authorization",
        "WWW-Authenticate",
        "Proxy-Authenticate",
        "Cookie",
        "Set-Cookie",
        "Expect",
        "Accept-Encoding",
        "Range",
        "If-None-Match",
        "Date",
        "Location",
        "Retry-After",
        "Vary",
        "Cache-Control",
        "Expires",
        "Content-Type",
        "CONTENT-ENCODING",
        "Content-Range",
        "Content-Location",
    ] {
        assert!(is_dropped(name.as_bytes()), "{name}");
    }
}

#[test]
fn fields_made_to_be_trailers_and_unknown_ones_pass() {
    for name in [
        "x-checksum",
        "Server-Timing",
        "grpc-status",
        "grpc-message",
        "Content-Digest",
        "ETag",
        "Authentication-Info",
        "x-forwarded",
        "hosts",
        "te2",
        "x-content-length",
    ] {
        assert!(!is_dropped(name.as_bytes()), "{name}");
    }
}

#[test]
fn kept_lines_are_canonical() {
    assert_eq!(
        section(&["x-a:1", "X-B: \t two words \t", "x-c:", "x-d:   "]),
        (
            "0\r\nx-a: 1\r\nX-B: two words\r\nx-c:\r\nx-d:\r\n\r\n".into(),
            0
        )
    );
    // obs-text in a value is kept as it is.
    assert_eq!(
        section(&["x-u: caf\u{e9}"]).0,
        "0\r\nx-u: caf\u{e9}\r\n\r\n"
    );
}

#[test]
fn dropped_lines_leave_nothing_behind() {
    assert_eq!(
        section(&[
            "Host: evil",
            "x-a: 1",
            "Content-Length:5",
            "x-b:2",
            "Set-Cookie: a=b"
        ]),
        ("0\r\nx-a: 1\r\nx-b: 2\r\n\r\n".into(), 3)
    );
    assert_eq!(section(&["Host: evil"]), ("0\r\n\r\n".into(), 1));
    assert_eq!(section(&[]), ("0\r\n\r\n".into(), 0));
}
