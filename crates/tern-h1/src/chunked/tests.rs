#![allow(clippy::unwrap_used)]

use super::*;

/// Decodes a whole chunked body given in one piece: (data, bytes consumed) or the error.
fn decode(input: &[u8], limits: &Limits) -> Result<(Vec<u8>, usize), H1Error> {
    let mut c = Chunked::new(limits);
    let mut data = Vec::new();
    let mut at = 0;
    while !c.is_done() {
        let (used, range) = c.step(&input[at..])?;
        if let Some((s, e)) = range {
            data.extend_from_slice(&input[at + s..at + e]);
        }
        if used == 0 {
            return Err(H1Error::Truncated);
        }
        at += used;
    }
    Ok((data, at))
}

fn ok(input: &str) -> String {
    let (data, used) = decode(input.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(used, input.len(), "all of {input:?} consumed");
    String::from_utf8(data).unwrap()
}

fn bad(input: &str) -> H1Error {
    decode(input.as_bytes(), &Limits::default())
        .err()
        .unwrap_or_else(|| panic!("accepted {input:?}"))
}

#[test]
fn chunks_decode_to_their_data() {
    assert_eq!(ok("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"), "hello world");
    assert_eq!(ok("0\r\n\r\n"), "");
    assert_eq!(ok("A\r\n0123456789\r\n000\r\n\r\n"), "0123456789");
    assert_eq!(ok("a\r\n0123456789\r\n0\r\n\r\n"), "0123456789");
    assert_eq!(ok("0000000000000000000005\r\nhello\r\n0\r\n\r\n"), "hello");
}

#[test]
fn extensions_are_skipped_within_their_limit() {
    // RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS value ] ).
    assert_eq!(ok("5;a=b\r\nhello\r\n0;last\r\n\r\n"), "hello");
    assert_eq!(ok("5 ;a=\"q;x\"\r\nhello\r\n0\r\n\r\n"), "hello");
    let limits = Limits {
        max_chunk_ext: 8,
        ..Limits::default()
    };
    let input = b"1;12345\r\na\r\n1;123\r\nb\r\n0\r\n\r\n";
    assert_eq!(decode(input, &limits), Err(H1Error::ChunkExtTooLong));
    assert!(decode(b"1;12345\r\na\r\n0;1\r\n\r\n", &limits).is_ok());
}

#[test]
fn extensions_follow_their_grammar() {
    for good in [
        "5;a\r\nhello\r\n0\r\n\r\n",
        "5;a;b;c\r\nhello\r\n0\r\n\r\n",
        "5;a=b;c=d\r\nhello\r\n0\r\n\r\n",
        "5 \t; a = b ;c\r\nhello\r\n0\r\n\r\n",
        "5;a=\"\"\r\nhello\r\n0\r\n\r\n",
        "5;a=\"x y;z=\\\"w\\\\\"\r\nhello\r\n0\r\n\r\n",
        "5;a=\"q\" ;b\r\nhello\r\n0\r\n\r\n",
        "5;a=\"\u{e9}\"\r\nhello\r\n0\r\n\r\n",
        "5;!#$%&'*+-.^_`|~=x\r\nhello\r\n0\r\n\r\n",
    ] {
        assert_eq!(ok(good), "hello", "{good:?}");
    }
    for bad_ext in [
        // Empty: no name after `;`, no value after `=`.
        "5;\r\nhello\r\n0\r\n\r\n",
        "5;;a\r\nhello\r\n0\r\n\r\n",
        "5;=b\r\nhello\r\n0\r\n\r\n",
        "5;a=\r\nhello\r\n0\r\n\r\n",
        "5;a=;b\r\nhello\r\n0\r\n\r\n",
        // Unterminated or malformed quoted strings.
        "5;a=\"b\r\nhello\r\n0\r\n\r\n",
        "5;a=\"b\\\"\r\nhello\r\n0\r\n\r\n",
        "5;a=\"b\"c\r\nhello\r\n0\r\n\r\n",
        "5;a=b\"c\"\r\nhello\r\n0\r\n\r\n",
        // Not a token.
        "5;a b\r\nhello\r\n0\r\n\r\n",
        "5;a=b c\r\nhello\r\n0\r\n\r\n",
        "5;a(b)\r\nhello\r\n0\r\n\r\n",
        "5;a=b=c\r\nhello\r\n0\r\n\r\n",
        "5;a=\"\x7f\"\r\nhello\r\n0\r\n\r\n",
        "5;a=\"\x01\"\r\nhello\r\n0\r\n\r\n",
    ] {
        assert!(
            matches!(bad(bad_ext), H1Error::InvalidChunk(_)),
            "{bad_ext:?}"
        );
    }
}

#[test]
fn whitespace_before_the_crlf_of_a_size_line_is_refused() {
    // BWS belongs before `;` or `=` only: a size or an extension followed by whitespace and
    // the CRLF is outside the grammar (llhttp refuses it too).
    for input in [
        "5 \r\nhello\r\n0\r\n\r\n",
        "5\t\r\nhello\r\n0\r\n\r\n",
        "5;a \r\nhello\r\n0\r\n\r\n",
        "5;a=b \r\nhello\r\n0\r\n\r\n",
        "5;a=\"b\" \r\nhello\r\n0\r\n\r\n",
        "5;a= \r\nhello\r\n0\r\n\r\n",
        "5\r\nhello\r\n0 \r\n\r\n",
    ] {
        assert!(matches!(bad(input), H1Error::InvalidChunk(_)), "{input:?}");
    }
}

#[test]
fn bytes_of_a_size_line_beyond_the_size_are_bounded() {
    // Leading zeros and whitespace are read and dropped: they count like extensions.
    let limits = Limits {
        max_chunk_ext: 4,
        ..Limits::default()
    };
    assert!(decode(b"000005\r\nhello\r\n0\r\n\r\n", &limits).is_ok());
    assert_eq!(
        decode(b"0000005\r\nhello\r\n0\r\n\r\n", &limits),
        Err(H1Error::ChunkExtTooLong)
    );
    assert_eq!(
        decode(b"5     ;a\r\nhello\r\n0\r\n\r\n", &limits),
        Err(H1Error::ChunkExtTooLong)
    );
    // Zeros after a significant digit are the size.
    assert!(Chunked::new(&limits).step(b"100000\r\n").is_ok());
}

#[test]
fn trailers_are_checked_and_bounded() {
    // RFC 9112 §7.1.2: trailer-section = *( field-line CRLF ).
    assert_eq!(
        ok("5\r\nhello\r\n0\r\nx-checksum: abc\r\nx-b:c\r\n\r\n"),
        "hello"
    );
    for bad_trailer in [
        "0\r\nno colon\r\n\r\n",
        "0\r\n x: folded\r\n\r\n",
        "0\r\nx : a\r\n\r\n",
        "0\r\nx: a\rb\r\n\r\n",
        "0\r\nx: a\0\r\n\r\n",
        "0\r\nx: a\n\r\n",
    ] {
        assert!(
            matches!(bad(bad_trailer), H1Error::InvalidChunk(_)),
            "{bad_trailer:?}"
        );
    }
    let limits = Limits {
        max_trailer_size: 10,
        ..Limits::default()
    };
    assert_eq!(
        decode(b"0\r\nx-long: 0123456789\r\n\r\n", &limits),
        Err(H1Error::TrailersTooLarge)
    );
    assert!(decode(b"0\r\nx: 1\r\n\r\n", &limits).is_ok());
}

#[test]
fn chunk_size_overflow_is_refused() {
    // 17 hex digits: 2^68 - 1 does not fit u64; it must not wrap to a small size.
    assert_eq!(
        bad("fffffffffffffffff\r\nx\r\n0\r\n\r\n"),
        H1Error::InvalidChunk("chunk size overflows")
    );
    assert_eq!(
        bad("10000000000000000\r\n"),
        H1Error::InvalidChunk("chunk size overflows")
    );
    // The largest size parses; the body then simply is not complete.
    let mut c = Chunked::new(&Limits::default());
    assert!(c.step(b"ffffffffffffffff\r\nabc").is_ok());
}

#[test]
fn framing_must_use_crlf_and_hex() {
    for input in [
        "5\nhello\r\n0\r\n\r\n",
        "5\r\nhello\n0\r\n\r\n",
        "5\r\nhello\r\n0\n\n",
        "5\r\nhello\r\n0\r\n\n",
        "5;ext\nhello\r\n0\r\n\r\n",
        "5;e\rx\r\nhello\r\n0\r\n\r\n",
        "\r\nhello\r\n0\r\n\r\n",
        "-5\r\nhello\r\n0\r\n\r\n",
        "+5\r\nhello\r\n0\r\n\r\n",
        "0x5\r\nhello\r\n0\r\n\r\n",
        " 5\r\nhello\r\n0\r\n\r\n",
        "5 5\r\nhello\r\n0\r\n\r\n",
        "5\r\r\nhello\r\n0\r\n\r\n",
        "g\r\n",
        "5\r\nhello!\r\n0\r\n\r\n",
        "5\r\nhell\r\n0\r\n\r\n",
    ] {
        assert!(matches!(bad(input), H1Error::InvalidChunk(_)), "{input:?}");
    }
}

#[test]
fn bytes_after_the_body_are_not_consumed() {
    let input = b"3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n";
    let (data, used) = decode(input, &Limits::default()).unwrap();
    assert_eq!(data, b"abc");
    assert_eq!(&input[used..], b"GET / HTTP/1.1\r\n");
}

/// The end of the body as tern writes it, after decoding all of `input`.
fn last_chunk(input: &str) -> (String, usize) {
    let mut c = Chunked::new(&Limits::default());
    let mut at = 0;
    while !c.is_done() {
        let (used, _) = c.step(&input.as_bytes()[at..]).unwrap();
        assert!(used > 0, "incomplete: {input:?}");
        at += used;
    }
    let t = c.trailers();
    (
        String::from_utf8(t.last_chunk().to_vec()).unwrap(),
        t.dropped(),
    )
}

#[test]
fn trailers_come_out_canonical_and_filtered() {
    assert_eq!(last_chunk("0\r\n\r\n"), ("0\r\n\r\n".into(), 0));
    assert_eq!(
        last_chunk("000;x=1\r\nX-Sum:\t 1 \t\r\nx-empty:   \r\nx-b:two  words\r\n\r\n"),
        (
            "0\r\nX-Sum: 1\r\nx-empty:\r\nx-b: two  words\r\n\r\n".into(),
            0
        )
    );
    assert_eq!(
        last_chunk(
            "1\r\na\r\n0\r\nContent-Length: 5\r\nx-keep: 1\r\nHOST:evil\r\n\
             transfer-encoding: chunked\r\n\r\n"
        ),
        ("0\r\nx-keep: 1\r\n\r\n".into(), 3)
    );
    // Every field dropped: the plain last chunk.
    assert_eq!(
        last_chunk("0\r\nConnection: close\r\nSet-Cookie: a=b\r\n\r\n"),
        ("0\r\n\r\n".into(), 2)
    );
}

#[test]
fn the_end_is_the_plain_last_chunk_until_the_body_is_complete() {
    let mut c = Chunked::new(&Limits::default());
    c.step(b"0\r\nx-a: 1\r\n").unwrap();
    assert!(!c.is_done());
    assert_eq!(c.trailers().last_chunk(), b"0\r\n\r\n");
    c.step(b"\r\n").unwrap();
    assert_eq!(c.trailers().last_chunk(), b"0\r\nx-a: 1\r\n\r\n");
}
