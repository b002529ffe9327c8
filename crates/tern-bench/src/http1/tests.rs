#![allow(clippy::unwrap_used)]

use super::*;

/// Feeds `input` in pieces of `step` bytes the way the client does (keeping unconsumed bytes),
/// then signals EOF; returns the response and how many bytes followed it.
fn parse_in_steps(input: &[u8], step: usize) -> Result<(Response, usize), ParseError> {
    let mut parser = ResponseParser::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut fed = 0;
    for piece in input.chunks(step) {
        pending.extend_from_slice(piece);
        fed += piece.len();
        let (used, progress) = parser.feed(&pending)?;
        pending.drain(..used);
        if let Progress::Done(response) = progress {
            return Ok((response, pending.len() + input.len() - fed));
        }
    }
    parser.eof().map(|response| (response, 0))
}

/// Parses `input` whole, byte by byte and in 7-byte pieces; all must agree.
fn parse(input: &[u8]) -> Result<(Response, usize), ParseError> {
    let whole = parse_in_steps(input, input.len().max(1));
    assert_eq!(whole, parse_in_steps(input, 1), "byte by byte");
    assert_eq!(whole, parse_in_steps(input, 7), "7-byte pieces");
    whole
}

fn ok(status: u16, keep_alive: bool, left: usize) -> Result<(Response, usize), ParseError> {
    Ok((Response { status, keep_alive }, left))
}

#[test]
fn content_length() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA";
    assert_eq!(parse(input), ok(200, true, 5));
    assert_eq!(
        parse(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"),
        ok(404, true, 0)
    );
    assert_eq!(
        parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nhi"),
        ok(200, true, 0)
    );
}

#[test]
fn connection_header_and_version() {
    let close = b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(parse(close), ok(200, false, 0));
    assert_eq!(
        parse(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"),
        ok(200, false, 0)
    );
    let ka = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx";
    assert_eq!(parse(ka), ok(200, true, 0));
}

#[test]
fn chunked_with_extensions_and_trailers() {
    let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
        5;name=value\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT";
    assert_eq!(parse(input), ok(200, true, 4));
    let plain = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    assert_eq!(parse(plain), ok(200, true, 0));
    let bare_lf = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\n0\n\n";
    assert_eq!(parse(bare_lf), ok(200, true, 0));
}

#[test]
fn chunked_wins_over_content_length() {
    let input =
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    assert_eq!(parse(input), ok(200, true, 0));
}

#[test]
fn close_delimited() {
    let input = b"HTTP/1.1 200 OK\r\n\r\nbody until the peer closes";
    assert_eq!(parse(input), ok(200, false, 0));
    let gzip_only = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n\x1f\x8b";
    assert_eq!(parse(gzip_only), ok(200, false, 0));
}

#[test]
fn bodiless_statuses_and_interim_responses() {
    assert_eq!(parse(b"HTTP/1.1 204 No Content\r\n\r\nX"), ok(204, true, 1));
    assert_eq!(
        parse(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"),
        ok(304, true, 0)
    );
    let interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
        HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(parse(interim), ok(201, true, 0));
}

#[test]
fn malformed_heads() {
    assert!(matches!(
        parse(b"HTTP/1.1 2x0 OK\r\n\r\n"),
        Err(ParseError::Head(_))
    ));
    assert!(matches!(
        parse(b"SMTP ready\r\n\r\n"),
        Err(ParseError::Head(_))
    ));
    assert!(matches!(
        parse(b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n"),
        Err(ParseError::Head(_))
    ));
    let upgrade = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";
    assert_eq!(parse(upgrade), Err(ParseError::Upgrade));
    let mut huge = b"HTTP/1.1 200 OK\r\nX-Long: ".to_vec();
    huge.resize(MAX_HEAD + 10, b'a');
    assert_eq!(
        parse_in_steps(&huge, huge.len()),
        Err(ParseError::HeadTooLarge)
    );
    assert_eq!(parse_in_steps(&huge, 1000), Err(ParseError::HeadTooLarge));
}

#[test]
fn malformed_lengths() {
    for cl in ["-1", "1x", "", "1, 2", "99999999999999999999", "+5"] {
        let input = format!("HTTP/1.1 200 OK\r\nContent-Length: {cl}\r\n\r\n");
        assert_eq!(
            parse(input.as_bytes()),
            Err(ParseError::ContentLength),
            "{cl:?}"
        );
    }
    let twice = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab";
    assert_eq!(parse(twice), Err(ParseError::ContentLength));
}

#[test]
fn malformed_chunks() {
    for body in [
        "x\r\n",
        "\r\n",
        "5\r\nhelloXX",
        "11111111111111111\r\n",
        "3\r\nabc\r\n0\r\n\rX",
    ] {
        let input = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{body}");
        assert_eq!(
            parse(input.as_bytes()),
            Err(ParseError::Chunked),
            "{body:?}"
        );
    }
}

#[test]
fn early_eof() {
    assert_eq!(parse(b""), Err(ParseError::UnexpectedEof));
    assert_eq!(
        parse(b"HTTP/1.1 200 OK\r\nContent-Le"),
        Err(ParseError::UnexpectedEof)
    );
    assert_eq!(
        parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc"),
        Err(ParseError::UnexpectedEof)
    );
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n";
    assert_eq!(parse(chunked), Err(ParseError::UnexpectedEof));
}

#[test]
fn request_bytes() {
    let target = crate::args::Target::parse("https://example.test:8443/test").unwrap();
    assert_eq!(
        request(&target, false),
        b"GET /test HTTP/1.1\r\nHost: example.test:8443\r\nUser-Agent: tern-bench\r\n\r\n"
    );
    assert!(request(&target, true).ends_with(b"Connection: close\r\n\r\n"));
}
