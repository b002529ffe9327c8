//! A message cut into pieces anywhere gives the same result as in one piece: every proper
//! prefix of a head is `Partial`, the whole head is `Complete` at the same length, and a body
//! fed piece by piece (as a proxy's read buffer fills) ends at the same byte with the same data,
//! in advance, decode and forward mode (where a chunked body is re-framed: the chunk boundaries
//! follow the pieces, the data does not change). Bytes after the message are never consumed.

#![allow(clippy::unwrap_used)]

mod support;

use proptest::collection::vec;
use proptest::prelude::*;
use support::{cuts, request, response, GenMessage};
use tern_h1::{
    parse_request, parse_response, BodyReader, Limits, Method, RequestHead, ResponseHead, Status,
};

/// How [`feed`] reads a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Advance,
    Decode,
    Forward,
}

/// Feeds `body` (the bytes after the head) to `reader` as the pieces arrive; returns the bytes
/// the reader consumed when it said done, and the data (decode mode) or what tern writes
/// (forward mode).
fn feed(mut reader: BodyReader, body: &[u8], cut_at: &[usize], mode: Mode) -> (usize, Vec<u8>) {
    let mut at = 0;
    let mut data = Vec::new();
    let ends = cut_at.iter().copied().chain([body.len()]);
    'pieces: for end in ends {
        loop {
            if reader.is_done() {
                break 'pieces;
            }
            let input = &body[at..end];
            let used = match mode {
                Mode::Decode => {
                    let d = reader.decode(input).unwrap();
                    data.extend_from_slice(&input[d.data]);
                    d.used
                }
                Mode::Advance => reader.advance(input).unwrap().used,
                Mode::Forward => reader.forward_into(input, &mut data).unwrap().used,
            };
            at += used;
            if used == 0 {
                break;
            }
        }
    }
    assert!(reader.is_done(), "body not done after all bytes");
    (at, data)
}

fn check_body(msg: &GenMessage, reader: impl Fn() -> BodyReader, raw_cuts: &[usize]) {
    let body = &msg.bytes[msg.head_len..];
    let cut_at = cuts(body.len(), raw_cuts);
    let (whole, _) = feed(reader(), body, &[], Mode::Advance);
    assert_eq!(whole, msg.body_len, "one piece, advance");
    let (used, _) = feed(reader(), body, &cut_at, Mode::Advance);
    assert_eq!(used, msg.body_len, "pieces {cut_at:?}, advance");
    let (used, data) = feed(reader(), body, &cut_at, Mode::Decode);
    assert_eq!(used, msg.body_len, "pieces {cut_at:?}, decode");
    assert_eq!(data, msg.payload, "decoded data");
    let (used, mut data) = feed(reader(), body, &cut_at, Mode::Forward);
    assert_eq!(used, msg.body_len, "pieces {cut_at:?}, forward");
    if msg.chunked {
        let written = std::mem::take(&mut data);
        let limits = Limits::default();
        let decoded = feed(BodyReader::chunked(&limits), &written, &[], Mode::Decode);
        assert_eq!(
            decoded.0,
            written.len(),
            "tern writes one whole chunked body"
        );
        data = decoded.1;
    }
    assert_eq!(data, msg.payload, "forwarded data");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn requests_in_pieces(msg in request(), head_cuts in vec(any::<usize>(), 0..10), body_cuts in vec(any::<usize>(), 0..10)) {
        let limits = Limits::default();
        let mut head = RequestHead::new();
        for cut in cuts(msg.head_len, &head_cuts) {
            prop_assert_eq!(parse_request(&msg.bytes[..cut], &limits, &mut head), Ok(Status::Partial));
        }
        prop_assert_eq!(
            parse_request(&msg.bytes, &limits, &mut head),
            Ok(Status::Complete(msg.head_len)),
            "{}", String::from_utf8_lossy(&msg.bytes)
        );
        prop_assert_eq!(head.len(), msg.head_len);
        prop_assert_eq!(matches!(head.framing(), tern_h1::Framing::Chunked), msg.chunked);
        check_body(&msg, || head.body_reader(&limits), &body_cuts);
    }

    #[test]
    fn responses_in_pieces(msg in response(), head_cuts in vec(any::<usize>(), 0..10), body_cuts in vec(any::<usize>(), 0..10)) {
        let limits = Limits::default();
        let mut head = ResponseHead::new();
        for cut in cuts(msg.head_len, &head_cuts) {
            prop_assert_eq!(
                parse_response(&msg.bytes[..cut], &limits, &mut head, Method::Get),
                Ok(Status::Partial)
            );
        }
        prop_assert_eq!(
            parse_response(&msg.bytes, &limits, &mut head, Method::Get),
            Ok(Status::Complete(msg.head_len))
        );
        check_body(&msg, || head.body_reader(&limits), &body_cuts);
    }

    /// Arbitrary bytes as a chunked body: the outcome (bytes used, done, or the error) does not
    /// depend on how the bytes are cut.
    #[test]
    fn chunked_outcome_does_not_depend_on_cuts(
        input in prop_oneof![
            vec(any::<u8>(), 0..200),
            proptest::string::string_regex("([0-9a-fA-F]{1,3}(;[a-z= ]{0,4})?\r\n[a-z]{0,20}\r\n){0,4}(0\r\n([a-z]{1,3}:[ a-z]{0,5}\r\n)?\r\n)?").unwrap().prop_map(String::into_bytes),
        ],
        raw_cuts in vec(any::<usize>(), 0..10),
    ) {
        let limits = Limits { max_chunk_ext: 6, max_trailer_size: 12, ..Limits::default() };
        let outcome = |cut_at: &[usize]| {
            let mut r = BodyReader::chunked(&limits);
            let mut at = 0;
            for end in cut_at.iter().copied().chain([input.len()]) {
                while at < end && !r.is_done() {
                    match r.advance(&input[at..end]) {
                        Ok(p) => at += p.used,
                        // Where inside the failing call the error is is not reported.
                        Err(e) => return Err(e),
                    }
                }
            }
            Ok((at, r.is_done()))
        };
        let whole = outcome(&[]);
        prop_assert_eq!(outcome(&cuts(input.len(), &raw_cuts)), whole);
    }
}
