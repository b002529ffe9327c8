#![allow(clippy::unwrap_used)]

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::limits::Limits;

/// The body forwarded from `input` fed in pieces ending at `cuts` (then the rest), as a proxy
/// would write it: (output, input bytes consumed, trailer fields dropped).
fn forward(input: &[u8], cuts: &[usize]) -> (Vec<u8>, usize, usize) {
    let mut r = BodyReader::chunked(&Limits::default());
    let mut out = Vec::new();
    let mut at = 0;
    for end in cuts.iter().copied().chain([input.len()]) {
        let end = end.clamp(at, input.len());
        let p = r.forward_into(&input[at..end], &mut out).unwrap();
        at += p.used;
        if p.done {
            break;
        }
    }
    assert!(
        r.is_done(),
        "body incomplete: {:?}",
        String::from_utf8_lossy(input)
    );
    (out, at, r.dropped_trailers())
}

/// A strict reader of what tern writes: size lines of lowercase hex without leading zeros or
/// extensions, then `0\r\n`, trailer lines and the final CRLF. Returns (data, trailer
/// section) or panics at the first byte that is not canonical.
fn read_canonical(out: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut data = Vec::new();
    let mut at = 0;
    loop {
        let line_end = at + out[at..].windows(2).position(|w| w == b"\r\n").unwrap();
        let size = &out[at..line_end];
        assert!(
            size.iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
                && !size.is_empty()
                && (size == b"0" || size[0] != b'0'),
            "size line {:?}",
            String::from_utf8_lossy(size)
        );
        let n = usize::from_str_radix(std::str::from_utf8(size).unwrap(), 16).unwrap();
        at = line_end + 2;
        if n == 0 {
            return (data, out[at..].to_vec());
        }
        data.extend_from_slice(&out[at..at + n]);
        assert_eq!(&out[at + n..at + n + 2], b"\r\n");
        at += n + 2;
    }
}

#[test]
fn chunks_are_re_framed_without_extensions_or_leading_zeros() {
    let input = b"000A;a=b;c=\"d;e\"\r\n0123456789\r\n5 ; x\r\nhello\r\n000;end\r\n\r\nNEXT";
    let (out, used, dropped) = forward(input, &[]);
    // One read: the data of both chunks in one chunk.
    assert_eq!(out, b"f\r\n0123456789hello\r\n0\r\n\r\n");
    assert_eq!(used, input.len() - 4, "the next request is not consumed");
    assert_eq!(dropped, 0);
}

#[test]
fn trailers_are_filtered_and_rewritten() {
    let input = b"3\r\nabc\r\n0\r\nX-Sum:  1 \r\nContent-Length: 3\r\nHost: h\r\n\
                  Transfer-Encoding: chunked\r\nx-b:2\r\n\r\n";
    let (out, _, dropped) = forward(input, &[]);
    assert_eq!(out, b"3\r\nabc\r\n0\r\nX-Sum: 1\r\nx-b: 2\r\n\r\n");
    assert_eq!(dropped, 3);
}

#[test]
fn a_chunk_cut_across_reads_becomes_several() {
    let input = b"a\r\n0123456789\r\n0\r\n\r\n";
    let (out, _, _) = forward(input, &[7]);
    assert_eq!(out, b"4\r\n0123\r\n6\r\n456789\r\n0\r\n\r\n");
}

#[test]
fn split_at_every_byte_gives_the_same_body() {
    let input: &[u8] = b"0005;a=\"x\"\r\nhello\r\n1 ;b\r\n \r\n5\r\nworld\r\n\
                         0;z\r\nx-t:\tv \r\nHost: x\r\n\r\n";
    let (whole, used, _) = forward(input, &[]);
    assert_eq!(whole, b"b\r\nhello world\r\n0\r\nx-t: v\r\n\r\n");
    let every: Vec<usize> = (1..input.len()).collect();
    let (cut, cut_used, dropped) = forward(input, &every);
    assert_eq!(cut_used, used);
    assert_eq!(dropped, 1);
    assert_eq!(read_canonical(&cut), read_canonical(&whole));
    for i in 1..input.len() {
        let (out, _, _) = forward(input, &[i]);
        assert_eq!(read_canonical(&out), read_canonical(&whole), "cut at {i}");
    }
}

#[test]
fn many_small_chunks_are_gathered_up_to_the_limit() {
    let mut input = Vec::new();
    for i in 0..100u8 {
        input.extend_from_slice(b"1;x\r\n");
        input.push(b'a' + i % 26);
        input.extend_from_slice(b"\r\n");
    }
    input.extend_from_slice(b"0\r\n\r\n");
    let mut r = BodyReader::chunked(&Limits::default());
    let mut piece = Piece::default();
    let mut at = 0;
    let mut sizes = Vec::new();
    while !r.is_done() {
        r.forward(&input[at..], &mut piece).unwrap();
        assert!(piece.ranges().count() <= MAX_RANGES);
        sizes.push(piece.size());
        at += piece.used;
    }
    assert_eq!(sizes, [32, 32, 32, 4], "one piece per {MAX_RANGES} chunks");
    assert!(piece.ends_chunked());
    assert_eq!(at, input.len());
}

#[test]
fn a_piece_says_the_end_once() {
    let mut r = BodyReader::chunked(&Limits::default());
    let mut piece = Piece::default();
    r.forward(b"2\r\nab\r\n0\r\n\r\n", &mut piece).unwrap();
    assert_eq!(piece.size(), 2);
    assert_eq!(piece.header().unwrap().as_bytes(), b"2\r\n");
    assert_eq!(piece.chunk_end(), CHUNK_END);
    assert!(piece.ends_chunked());
    r.forward(b"GET", &mut piece).unwrap();
    assert!(!piece.ends() && piece.used == 0 && piece.size() == 0);
}

#[test]
fn length_bodies_pass_as_they_are() {
    let mut r = BodyReader::length(5);
    let mut piece = Piece::default();
    r.forward(b"abc", &mut piece).unwrap();
    assert!(piece.ranges().eq(std::iter::once(0..3)));
    assert!(piece.header().is_none() && piece.chunk_end().is_empty() && !piece.ends());
    let mut out = Vec::new();
    let p = r.forward_into(b"de0\r\n\r\n", &mut out).unwrap();
    assert_eq!((out.as_slice(), p.used, p.done), (&b"de"[..], 2, true));
    assert!(
        !r.last_chunk().is_empty(),
        "a constant, never written for such a body"
    );
}

#[test]
fn errors_stop_the_piece() {
    let mut r = BodyReader::chunked(&Limits::default());
    let mut piece = Piece::default();
    assert!(r
        .forward(b"3\r\nabc\r\nfffffffffffffffff\r\n", &mut piece)
        .is_err());
    let mut r = BodyReader::chunked(&Limits::default());
    assert!(r.forward(b"3 \r\nabc\r\n", &mut piece).is_err());
}

proptest! {
    /// Any valid chunked body, cut anywhere: the output is canonical and carries the same data
    /// and the same trailer section as the body forwarded whole.
    #[test]
    fn output_is_canonical_whatever_the_cuts(
        chunks in vec((vec(any::<u8>(), 1..50), "(;[a-z]{1,3}(=([a-z]{1,3}|\"[ a-z;]{0,4}\"))?)?", 0..3usize), 0..6),
        trailers in vec(("(x-[a-z]{1,5}|host|content-length)", "[ \t]{0,2}[a-z]{0,4}[ \t]{0,2}"), 0..4),
        cuts in vec(any::<usize>(), 0..8),
    ) {
        let mut input = Vec::new();
        let mut data = Vec::new();
        for (bytes, ext, zeros) in &chunks {
            input.extend_from_slice(format!("{}{:X}{ext}\r\n", "0".repeat(*zeros), bytes.len()).as_bytes());
            input.extend_from_slice(bytes);
            input.extend_from_slice(b"\r\n");
            data.extend_from_slice(bytes);
        }
        input.extend_from_slice(b"0\r\n");
        for (name, value) in &trailers {
            input.extend_from_slice(format!("{name}:{value}\r\n").as_bytes());
        }
        input.extend_from_slice(b"\r\n");
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        cuts.sort_unstable();
        let (whole, used, _) = forward(&input, &[]);
        prop_assert_eq!(used, input.len());
        let (cut, _, _) = forward(&input, &cuts);
        let (whole_data, whole_trailers) = read_canonical(&whole);
        prop_assert_eq!(&whole_data, &data);
        prop_assert_eq!(read_canonical(&cut), (whole_data, whole_trailers.clone()));
        let kept: String = trailers
            .iter()
            .filter(|(name, _)| name.starts_with("x-"))
            .map(|(name, value)| match value.trim_matches([' ', '\t']) {
                "" => format!("{name}:\r\n"),
                v => format!("{name}: {v}\r\n"),
            })
            .collect();
        prop_assert_eq!(String::from_utf8(whole_trailers).unwrap(), format!("{kept}\r\n"));
    }
}
