#![allow(clippy::unwrap_used)]

use tern_h1::{BodyReader, Limits, LAST_CHUNK};

use super::*;

/// Writes `flight` as a socket taking at most `step` bytes per write would: returns every
/// byte written and the source bytes to drop.
fn write_all(
    mut flight: Flight,
    prefix: &[u8],
    src: &[u8],
    last: &[u8],
    step: usize,
) -> (Vec<u8>, usize) {
    let mut wire = Vec::new();
    loop {
        let mut slices = [IoSlice::new(&[]); MAX_SLICES];
        let n = flight.slices(prefix, src, last, &mut slices);
        if n == 0 {
            return (wire, flight.finish());
        }
        let mut room = step;
        for s in &slices[..n] {
            let take = s.len().min(room);
            wire.extend_from_slice(&s[..take]);
            room -= take;
        }
        flight.wrote(step - room);
    }
}

/// A flight for the start of `src` read by `reader`.
fn flight_of(reader: &mut BodyReader, src: &[u8], framing: Framing) -> Flight {
    let mut flight = Flight::default();
    reader.forward(src, &mut flight.piece).unwrap();
    flight.frame(framing);
    flight
}

#[test]
fn a_re_framed_piece_goes_out_whole_whatever_the_write_sizes() {
    let src = b"3;x\r\nabc\r\n2\r\nde\r\n0\r\nx-t: 1\r\nhost: h\r\n\r\nNEXT";
    for step in 1..40 {
        let mut reader = BodyReader::chunked(&Limits::default());
        let flight = flight_of(&mut reader, src, Framing::Forward);
        let (wire, used) = write_all(flight, b"HEAD\r\n\r\n", src, reader.last_chunk(), step);
        assert_eq!(
            String::from_utf8(wire).unwrap(),
            "HEAD\r\n\r\n5\r\nabcde\r\n0\r\nx-t: 1\r\n\r\n",
            "writes of {step} bytes"
        );
        assert_eq!(used, src.len() - 4, "the next request stays");
    }
}

#[test]
fn data_only_and_chunk_framings() {
    let src = b"3;x\r\nabc\r\n0\r\n\r\n";
    let mut reader = BodyReader::chunked(&Limits::default());
    let flight = flight_of(&mut reader, src, Framing::DataOnly);
    assert_eq!(
        write_all(flight, &[], src, reader.last_chunk(), 3),
        (b"abc".to_vec(), src.len())
    );

    let src = b"body until close";
    let mut reader = BodyReader::until_close();
    let mut flight = flight_of(&mut reader, src, Framing::Chunk);
    flight.tail = LAST_CHUNK;
    let (wire, used) = write_all(flight, &[], src, reader.last_chunk(), 7);
    assert_eq!(wire, b"10\r\nbody until close\r\n0\r\n\r\n");
    assert_eq!(used, src.len());
}

#[test]
fn a_tail_alone_and_an_empty_flight() {
    let mut flight = Flight::default();
    assert!(flight.is_empty());
    flight.tail = b"HTTP/1.1 100 Continue\r\n\r\n";
    assert!(!flight.is_empty());
    let (wire, used) = write_all(flight, &[], &[], &[], 5);
    assert_eq!(
        (wire.as_slice(), used),
        (&b"HTTP/1.1 100 Continue\r\n\r\n"[..], 0)
    );
    // Framing alone (a size line cut before its data) writes nothing but is consumed.
    let mut reader = BodyReader::chunked(&Limits::default());
    let flight = flight_of(&mut reader, b"1a;e", Framing::Forward);
    assert!(!flight.is_empty());
    assert_eq!(write_all(flight, &[], b"1a;e", &[], 5), (Vec::new(), 4));
}

#[test]
fn finish_forgets_the_piece() {
    let src = b"5\r\nhello\r\n";
    let mut reader = BodyReader::chunked(&Limits::default());
    let mut flight = flight_of(&mut reader, src, Framing::Forward);
    assert_eq!(flight.finish(), src.len());
    let mut slices = [IoSlice::new(&[]); MAX_SLICES];
    assert_eq!(flight.slices(b"", src, &[], &mut slices), 0);
    assert!(flight.is_empty());
}
