//! Arbitrary input never panics, never hangs and never yields a span outside the buffer: heads
//! of random bytes (and random bytes after a plausible start line), bodies of random bytes in
//! both modes, with small and default limits. Whatever is accepted can be rewritten, and the
//! rewrite is accepted in turn.

#![allow(clippy::unwrap_used)]

use proptest::collection::vec;
use proptest::prelude::*;
use tern_h1::{
    parse_request, parse_response, write_request, write_response, BodyReader, Forwarding, Limits,
    Method, RequestHead, ResponseHead, Status,
};

fn limits(small: bool) -> Limits {
    if small {
        Limits {
            max_head_size: 64,
            max_headers: 3,
            max_chunk_ext: 4,
            max_trailer_size: 8,
        }
    } else {
        Limits::default()
    }
}

/// Random bytes, or random field-ish lines after a start line, to get past the first byte.
fn head_bytes(start: &'static str) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..600),
        vec(
            prop_oneof![
                Just(b"\r\n".to_vec()),
                Just(b": ".to_vec()),
                Just(b"Transfer-Encoding".to_vec()),
                Just(b"Content-Length".to_vec()),
                Just(b"Connection".to_vec()),
                Just(b"Host".to_vec()),
                Just(b"chunked".to_vec()),
                vec(any::<u8>(), 0..8),
                "[ -~]{0,10}".prop_map(String::into_bytes),
            ],
            0..40
        )
        .prop_map(move |parts| [start.as_bytes().to_vec(), parts.concat()].concat()),
    ]
}

fn check_spans(len: usize, spans: impl Iterator<Item = tern_h1::Span>) {
    for s in spans {
        assert!(s.end() <= len, "span {s:?} outside a head of {len} bytes");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn request_heads(input in head_bytes("GET / HTTP/1.1\r\n"), small in any::<bool>()) {
        let mut head = RequestHead::new();
        if let Ok(Status::Complete(len)) = parse_request(&input, &limits(small), &mut head) {
            prop_assert!(len <= input.len());
            check_spans(len, head.fields().iter().flat_map(|f| [f.name_span(), f.value_span()]));
            check_spans(len, [head.target(), head.path()].into_iter());
            let mut out = Vec::new();
            write_request(&head, &input, &Forwarding::none().with_proto(true), &mut out);
            let mut again = RequestHead::new();
            let got = parse_request(&out, &Limits::default(), &mut again);
            prop_assert_eq!(got, Ok(Status::Complete(out.len())), "{:?}", String::from_utf8_lossy(&out));
        }
    }

    #[test]
    fn response_heads(input in head_bytes("HTTP/1.1 200 OK\r\n"), small in any::<bool>(), head_req in any::<bool>()) {
        let method = if head_req { Method::Head } else { Method::Get };
        let mut head = ResponseHead::new();
        if let Ok(Status::Complete(len)) = parse_response(&input, &limits(small), &mut head, method) {
            prop_assert!(len <= input.len());
            check_spans(len, head.fields().iter().flat_map(|f| [f.name_span(), f.value_span()]));
            let info = tern_h1::RequestInfo { method, ..Default::default() };
            let mut out = Vec::new();
            write_response(&head, &input, &info, &mut out);
            let mut again = ResponseHead::new();
            let got = parse_response(&out, &Limits::default(), &mut again, method);
            prop_assert_eq!(got, Ok(Status::Complete(out.len())), "{:?}", String::from_utf8_lossy(&out));
        }
    }

    #[test]
    fn bodies(input in vec(any::<u8>(), 0..600), small in any::<bool>(), n in 0u64..700) {
        let l = limits(small);
        for mut r in [BodyReader::chunked(&l), BodyReader::length(n), BodyReader::until_close()] {
            let mut pass = r.clone();
            let advanced = pass.advance(&input);
            if let Ok(p) = advanced {
                prop_assert!(p.used <= input.len());
            }
            // Forwarding stops where advance stops, and writes little framing on top of the
            // data.
            let mut fwd = r.clone();
            let mut out = Vec::new();
            let forwarded = fwd.forward_into(&input, &mut out);
            prop_assert_eq!(forwarded.is_ok(), advanced.is_ok());
            if let (Ok(f), Ok(a)) = (forwarded, advanced) {
                prop_assert_eq!(f, a);
                prop_assert!(out.len() <= 2 * input.len() + 8);
            }
            // Decode until the input is used up, an error, or the end: always bounded.
            let mut at = 0;
            for _ in 0..=input.len() + 1 {
                match r.decode(&input[at..]) {
                    Ok(d) => {
                        prop_assert!(d.data.end <= d.used && d.data.start <= d.data.end);
                        at += d.used;
                        if d.used == 0 || d.done {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
            prop_assert!(at <= input.len());
        }
    }
}
