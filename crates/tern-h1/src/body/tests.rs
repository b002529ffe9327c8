#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn content_length_body_ends_after_n_bytes() {
    let mut r = BodyReader::length(5);
    assert_eq!(r.remaining(), Some(5));
    assert_eq!(
        r.advance(b"abc").unwrap(),
        Progress {
            used: 3,
            done: false
        }
    );
    assert_eq!(
        r.advance(b"deGET").unwrap(),
        Progress {
            used: 2,
            done: true
        }
    );
    assert_eq!(
        r.advance(b"more").unwrap(),
        Progress {
            used: 0,
            done: true
        }
    );
    assert!(r.finish().is_ok());
}

#[test]
fn empty_bodies_are_done_at_once() {
    for mut r in [BodyReader::none(), BodyReader::length(0)] {
        assert!(r.is_done());
        assert_eq!(
            r.advance(b"x").unwrap(),
            Progress {
                used: 0,
                done: true
            }
        );
    }
}

#[test]
fn eof_before_the_end_is_truncation() {
    let mut r = BodyReader::length(5);
    r.advance(b"ab").unwrap();
    assert_eq!(r.finish(), Err(H1Error::Truncated));
    let mut r = BodyReader::chunked(&Limits::default());
    r.advance(b"5\r\nhello\r\n").unwrap();
    assert_eq!(r.finish(), Err(H1Error::Truncated));
}

#[test]
fn until_close_takes_everything_and_ends_at_eof() {
    let mut r = BodyReader::until_close();
    assert_eq!(
        r.advance(b"abc").unwrap(),
        Progress {
            used: 3,
            done: false
        }
    );
    assert_eq!(r.remaining(), None);
    assert!(r.finish().is_ok());
    assert!(r.is_done());
}

#[test]
fn passthrough_finds_the_end_of_a_chunked_body() {
    let body = b"5\r\nhello\r\n0\r\nx: y\r\n\r\nNEXT";
    let mut r = BodyReader::chunked(&Limits::default());
    assert_eq!(
        r.advance(body).unwrap(),
        Progress {
            used: body.len() - 4,
            done: true
        }
    );
}

#[test]
fn decode_yields_data_ranges_one_per_call() {
    let body = b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
    let mut r = BodyReader::chunked(&Limits::default());
    let mut at = 0;
    let mut data = Vec::new();
    let mut calls = 0;
    while !r.is_done() {
        let d = r.decode(&body[at..]).unwrap();
        data.extend_from_slice(&body[at..][d.data.clone()]);
        at += d.used;
        calls += 1;
        assert!(calls < 10);
    }
    assert_eq!(data, b"abcde");
    assert_eq!(at, body.len());
}

#[test]
fn chunk_headers_are_lowercase_hex_lines() {
    assert_eq!(ChunkHeader::new(0).as_bytes(), b"0\r\n");
    assert_eq!(ChunkHeader::new(255).as_bytes(), b"ff\r\n");
    assert_eq!(ChunkHeader::new(16384).as_bytes(), b"4000\r\n");
    assert_eq!(
        ChunkHeader::new(usize::MAX).as_bytes(),
        format!("{:x}\r\n", usize::MAX).as_bytes()
    );
    let mut out = Vec::new();
    encode_chunk(b"hello", &mut out);
    encode_chunk(b"", &mut out);
    out.extend_from_slice(LAST_CHUNK);
    assert_eq!(out, b"5\r\nhello\r\n0\r\n\r\n");
    let mut r = BodyReader::chunked(&Limits::default());
    assert!(
        r.advance(&out).unwrap().done,
        "the encoder's output decodes"
    );
}
