//! The `proxy_header` target: [`tern_proxy_protocol::parse`], the PROXY header tern reads first
//! on an `accept_proxy` bind, from untrusted clients.
//!
//! Besides "no panic", the checks are the properties tern-proxy's reader (`listen/proxy_in.rs`)
//! relies on to never read past the header and never spin: a complete header ends inside the
//! bytes and within `MAX_HEADER`, and parsing just its bytes gives the same header; every
//! shorter prefix of an accepted or partial input is `Partial` (the reader consumes partial
//! bytes and waits for more); a refusal stays a refusal whatever follows; a partial input is
//! shorter than the bound.

use tern_proxy_protocol::{parse, Parsed, MAX_HEADER};

/// Bytes appended to check that a refusal does not depend on what follows.
const TAILS: [&[u8]; 3] = [b"\r\n", b"\0\0\0\0", b"0 0\r\nGET / HTTP/1.1\r\n\r\n"];

pub fn proxy_header(data: &[u8]) {
    match parse(data) {
        Ok(Parsed::Complete(h)) => {
            assert!(h.len <= data.len() && h.len <= MAX_HEADER, "{h:?}");
            assert_eq!(
                parse(&data[..h.len]),
                Ok(Parsed::Complete(h.clone())),
                "the header depends on bytes after it"
            );
            prefixes_are_partial(&data[..h.len]);
        }
        Ok(Parsed::Partial) => {
            assert!(data.len() < MAX_HEADER, "partial beyond the bound");
            prefixes_are_partial(data);
        }
        Err(why) => {
            for tail in TAILS {
                let mut longer = data.to_vec();
                longer.extend_from_slice(tail);
                assert!(parse(&longer).is_err(), "{why:?} undone by {tail:?}");
            }
        }
    }
}

fn prefixes_are_partial(data: &[u8]) {
    for cut in 0..data.len() {
        assert_eq!(
            parse(&data[..cut]),
            Ok(Parsed::Partial),
            "prefix of {cut} bytes"
        );
    }
}
