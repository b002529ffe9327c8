//! Chunked bodies (RFC 9112 §7.1) through [`BodyReader`], in both of its modes.
//!
//! The same bytes are read four ways: passthrough in one call, passthrough in pieces, decode
//! in one buffer, decode in pieces (the piece sizes come from the selector bytes). All four
//! must end at the same byte, or all fail, and the decoded data must not depend on the pieces.
//! Whatever tern reads as a complete body, the reference decoder below (written from the
//! grammar, without limits) must read with the same end and the same data: tern may refuse
//! more, never read a body differently.
//!
//! The reference takes any extension text without control bytes after `;`: RFC 9112 wants
//! `token [= value]` there, and tern still passes extensions on as received (issue 19: chunk-size
//! lines are to be rewritten). Make it strict when that lands.

use tern_h1::BodyReader;

use crate::h1::limits;
use crate::rfc::{is_field_byte, is_token};

/// How one way of reading ended.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The body ended after this many bytes.
    Done(usize),
    /// All input consumed, more needed.
    Open,
    /// Refused.
    Failed,
}

/// `chunked`: byte 0 is the selector (bit 0: small limits), bytes 1 and 2 give the piece
/// sizes of the piecewise reads; the rest is the body.
pub fn chunked(data: &[u8]) {
    let [sel, a, b, input @ ..] = data else {
        return;
    };
    let limits = limits(*sel);
    let piece = usize::from(*a % 64) + 1;
    let piece2 = usize::from(*b % 7) + 1;

    let whole = match BodyReader::chunked(&limits).advance(input) {
        Ok(p) if p.done => Outcome::Done(p.used),
        Ok(p) => {
            assert_eq!(
                p.used,
                input.len(),
                "passthrough stopped early without an end"
            );
            Outcome::Open
        }
        Err(_) => Outcome::Failed,
    };
    let (pieces, _) = read(&mut BodyReader::chunked(&limits), input, piece, false);
    assert_eq!(pieces, whole, "passthrough in pieces of {piece}");
    let (decoded, data) = read(&mut BodyReader::chunked(&limits), input, input.len(), true);
    assert_eq!(decoded, whole, "decode in one buffer");
    let (decoded2, data2) = read(&mut BodyReader::chunked(&limits), input, piece2, true);
    assert_eq!(decoded2, whole, "decode in pieces of {piece2}");
    assert_eq!(data, data2, "decoded data depends on the pieces");

    if let Outcome::Done(end) = whole {
        match reference(input) {
            Ok(Some((ref_end, ref_data))) => {
                assert_eq!(ref_end, end, "tern ends the body elsewhere");
                assert_eq!(ref_data, data, "tern decodes other data");
            }
            other => panic!("tern accepts a body the grammar does not: {other:?}"),
        }
    }
}

/// Feeds `input` in pieces of `piece` bytes, as a socket would; returns how the reading ended
/// and, when decoding, the data.
fn read(r: &mut BodyReader, input: &[u8], piece: usize, decode: bool) -> (Outcome, Vec<u8>) {
    let mut at = 0;
    let mut data = Vec::new();
    let mut end = 0;
    while end < input.len() {
        end = (end + piece.max(1)).min(input.len());
        // Bytes the reader did not take stay in the buffer, as in the proxy's read buffer.
        loop {
            let avail = &input[at..end];
            let used = if decode {
                match r.decode(avail) {
                    Ok(d) => {
                        assert!(d.data.start <= d.data.end && d.data.end <= d.used);
                        data.extend_from_slice(&avail[d.data]);
                        d.used
                    }
                    Err(_) => return (Outcome::Failed, data),
                }
            } else {
                match r.advance(avail) {
                    Ok(p) => p.used,
                    Err(_) => return (Outcome::Failed, data),
                }
            };
            assert!(used <= avail.len());
            at += used;
            if r.is_done() {
                return (Outcome::Done(at), data);
            }
            if used == 0 || at == end {
                break;
            }
        }
        assert_eq!(at, end, "the reader left bytes it did not need more of");
    }
    (Outcome::Open, data)
}

/// A chunked body by the grammar: `Ok(Some((end, data)))`, `Ok(None)` when incomplete.
/// Lenient where RFC 9112 leaves room (whitespace after the size, extension text), strict on
/// line endings (CRLF only) and on the size (hex digits that fit 64 bits).
fn reference(input: &[u8]) -> Result<Option<(usize, Vec<u8>)>, &'static str> {
    let mut at = 0;
    let mut data = Vec::new();
    loop {
        let Some((line, next)) = crlf_line(input, at)? else {
            return Ok(None);
        };
        at = next;
        let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        if digits == 0 {
            return Err("no chunk size");
        }
        let mut size: u64 = 0;
        for b in &line[..digits] {
            let d = char::from(*b).to_digit(16).ok_or("hex")?;
            size = size
                .checked_mul(16)
                .and_then(|s| s.checked_add(u64::from(d)))
                .ok_or("size overflows")?;
        }
        let rest = &line[digits..];
        let ws = rest
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        match &rest[ws..] {
            [] => {}
            [b';', ext @ ..] if ext.iter().all(|b| is_field_byte(*b)) => {}
            _ => return Err("junk after the chunk size"),
        }
        if size == 0 {
            return trailers(input, at).map(|end| end.map(|e| (e, data)));
        }
        let end = usize::try_from(size).ok().and_then(|s| at.checked_add(s));
        let Some(chunk) = end.and_then(|end| input.get(at..end)) else {
            return Ok(None);
        };
        data.extend_from_slice(chunk);
        at += chunk.len();
        match &input[at..] {
            [b'\r', b'\n', ..] => at += 2,
            [] | [b'\r'] => return Ok(None),
            _ => return Err("chunk data not followed by CRLF"),
        }
    }
}

/// The trailer section and the final CRLF; returns where the body ends.
fn trailers(input: &[u8], mut at: usize) -> Result<Option<usize>, &'static str> {
    loop {
        let Some((line, next)) = crlf_line(input, at)? else {
            return Ok(None);
        };
        at = next;
        if line.is_empty() {
            return Ok(Some(at));
        }
        let colon = line
            .iter()
            .position(|b| *b == b':')
            .ok_or("trailer without colon")?;
        if !is_token(&line[..colon]) || !line[colon + 1..].iter().all(|b| is_field_byte(*b)) {
            return Err("invalid trailer line");
        }
    }
}

/// The line at `at`, which must end in CRLF (a bare LF or CR is an error), and where the next
/// one starts; `None` when it is not complete.
fn crlf_line(input: &[u8], at: usize) -> Result<Option<(&[u8], usize)>, &'static str> {
    let rest = &input[at..];
    let Some(lf) = rest.iter().position(|b| *b == b'\n') else {
        if rest.iter().rev().skip(1).any(|b| *b == b'\r') {
            return Err("CR without LF");
        }
        return Ok(None);
    };
    match rest[..lf].strip_suffix(b"\r") {
        Some(line) if !line.contains(&b'\r') => Ok(Some((line, at + lf + 1))),
        _ => Err("bare LF or CR"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_reference_reads_a_body_with_extensions_and_trailers() {
        let body = b"3;a=b\r\nabc\r\n1 \r\nd\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        let (end, data) = reference(body).unwrap().unwrap();
        assert_eq!((end, &data[..]), (body.len() - 4, &b"abcd"[..]));
        assert_eq!(reference(b"3\r\nab").unwrap(), None);
        assert!(reference(b"3\nabc\r\n0\r\n\r\n").is_err());
        assert!(reference(b"10000000000000000\r\n").is_err());
    }

    #[test]
    fn the_check_passes_on_valid_and_invalid_bodies() {
        chunked(b"\x00\x05\x03a\r\n0123456789\r\n0\r\n\r\n");
        chunked(b"\x01\x00\x00ffffffffffffffffff\r\n");
        chunked(b"\x00\x01\x01");
    }
}
