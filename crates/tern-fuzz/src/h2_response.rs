//! The `h2_response` target: what an HTTP/2 server sends back to a request of tern's
//! (`tern_proxy::h2_upstream_fuzz`): the `h2` crate as a client with the settings tern
//! announces to servers, the response HEADERS turned into an HTTP/1.1 head, then the DATA and
//! trailers as the HTTP/1.1 bytes the relay reads and passes to the client.
//!
//! Properties: nothing panics and the exchange ends with the server's bytes; once a response
//! came, its bytes are one whole HTTP/1.1 response head to tern-h1 (never `Partial`: the relay
//! would read the body as head) with the server's status, or refused (the relay answers 502);
//! and its body, read with the framing that head announces, takes up exactly the bytes that
//! follow (never a byte past its end: a second response smuggled to the client), and ends when
//! the stream ended cleanly.
//!
//! Selector (first byte): bit 0 a HEAD request (no body follows whatever the fields say); bits
//! 5-7 how the server's bytes are cut (all at once, or pieces of 1, 2, 3, 7, 16, 64 or 512).

use tern_h1::{parse_response, Method, ResponseHead, Status};
use tern_proxy::h2_upstream_fuzz::{fetch, Fetched, LIMITS};

use crate::peer::play;

/// How the server's bytes are cut, by bits 5-7 of the selector.
const PIECES: [usize; 8] = [0, 1, 2, 3, 7, 16, 64, 512];

pub fn h2_response(data: &[u8]) {
    let Some((&sel, frames)) = data.split_first() else {
        return;
    };
    let head_only = sel & 1 != 0;
    let piece = PIECES[usize::from(sel >> 5)];
    let fetched = play(frames, piece, |io| fetch(io, head_only));
    check(&fetched, head_only);
}

fn check(f: &Fetched, head_only: bool) {
    let Some(status) = f.status else {
        assert!(f.bytes.is_empty(), "bytes without a response: {f:?}");
        return;
    };
    let method = if head_only { Method::Head } else { Method::Get };
    let mut head = ResponseHead::new();
    let len = match parse_response(&f.bytes, &LIMITS, &mut head, method) {
        Ok(Status::Complete(len)) => len,
        // Refused by the relay (502): stricter, never unsafe. Such as a head over the limits,
        // or a `content-length` the h2 crate reads leniently (empty: 0) and tern-h1 does not.
        Err(_) => return,
        Ok(Status::Partial) => panic!(
            "the translated head is not a whole response head: {:?}",
            String::from_utf8_lossy(&f.bytes)
        ),
    };
    assert_eq!(head.status(), status, "{f:?}");
    let rest = &f.bytes[len..];
    let mut body = head.body_reader(&LIMITS);
    let progress = body.advance(rest).unwrap_or_else(|e| {
        panic!(
            "the body does not read as its head announced ({e}): {:?}",
            String::from_utf8_lossy(&f.bytes)
        )
    });
    assert_eq!(
        progress.used,
        rest.len(),
        "bytes after the end of the response: {:?}",
        String::from_utf8_lossy(&f.bytes)
    );
    // tern frames every response it translates by length or chunks, never by the close.
    if f.complete {
        assert!(
            progress.done,
            "a response that ended cleanly is not complete: {:?}",
            String::from_utf8_lossy(&f.bytes)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let len = u32::try_from(payload.len()).unwrap_or(0).to_be_bytes();
        let mut f = vec![len[1], len[2], len[3], kind, flags, 0, 0, 0, 1];
        f.extend_from_slice(payload);
        f
    }

    fn fetched(head_only: bool, frames: &[Vec<u8>]) -> Fetched {
        let mut bytes = vec![0, 0, 0, 4, 0, 0, 0, 0, 0];
        frames.iter().for_each(|f| bytes.extend_from_slice(f));
        play(&bytes, 0, |io| fetch(io, head_only))
    }

    #[test]
    fn responses_become_the_http1_bytes_the_relay_reads() {
        // :status 200, a DATA frame, trailers: chunked, the trailers as the trailer section.
        let trailer = b"\x00\x0bgrpc-status\x010";
        let f = fetched(
            false,
            &[
                frame(1, 4, b"\x88"),
                frame(0, 0, b"hello"),
                frame(1, 5, trailer),
            ],
        );
        assert!(f.complete, "{f:?}");
        let text = String::from_utf8_lossy(&f.bytes);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(
            text.ends_with(
                "transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\ngrpc-status: 0\r\n\r\n"
            ),
            "{text}"
        );
        check(&f, false);
        // A reset mid-body: not complete, a prefix of the body.
        let f = fetched(
            false,
            &[
                frame(1, 4, b"\x88\x0f\x0d\x015"),
                frame(0, 0, b"he"),
                frame(3, 0, b"\0\0\0\x02"),
            ],
        );
        assert!(!f.complete && f.status == Some(200), "{f:?}");
        check(&f, false);
        // HEAD: the length stays, no body follows.
        let f = fetched(true, &[frame(1, 5, b"\x88\x0f\x0d\x015")]);
        assert!(f.complete, "{f:?}");
        assert!(String::from_utf8_lossy(&f.bytes).ends_with("content-length: 5\r\n\r\n"));
        check(&f, true);
    }
}
