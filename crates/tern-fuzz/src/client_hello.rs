//! The `client_hello` target: the two readers of a connection's first bytes
//! (`tern_proxy::tls::client_hello`), which run on network input before any TLS library sees it.
//!
//! Properties: neither panics; a judged input stays judged the same way when more bytes follow
//! it, and every shorter prefix is either still incomplete or already judged the same (so
//! reading more can never change a verdict given earlier); a server name found is a host name
//! (letters, digits, `-`, `.`, `_`) that appears in the input as sent.

use tern_proxy::tls::client_hello::{peek, read_hello, Hello, Peek};

/// Cut points tried per input (every prefix would make long inputs quadratic).
const CUTS: usize = 16;

pub fn client_hello(data: &[u8]) {
    let _ = peek(data);
    let whole = read_hello(data);
    if let Hello::Complete {
        sni: Some(name), ..
    } = &whole
    {
        assert!(!name.is_empty());
        assert!(name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_')));
        assert!(data.windows(name.len()).any(|w| w == name.as_bytes()));
    }
    for cut in cuts(data.len()) {
        let prefix = read_hello(&data[..cut]);
        assert!(
            prefix == Hello::Incomplete || prefix == whole,
            "{cut} bytes judged {prefix:?}, all {} bytes {whole:?}",
            data.len()
        );
        if peek(&data[..cut]) != Peek::Incomplete {
            assert_eq!(peek(&data[..cut]), peek(data), "peek at {cut} bytes");
        }
    }
    if whole != Hello::Incomplete {
        let mut more = data.to_vec();
        more.extend_from_slice(&[22, 3, 1, 0, 1, 1]);
        assert_eq!(read_hello(&more), whole, "bytes after a judged input");
    }
}

/// Up to [`CUTS`] prefix lengths spread over `0..len`, always including the first few bytes
/// (where the one-byte verdicts are).
fn cuts(len: usize) -> impl Iterator<Item = usize> {
    let step = (len / CUTS).max(1);
    (0..len.min(6)).chain((6..len).step_by(step))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The seeds are what they say: a real ClientHello, in one record and in two.
    #[test]
    fn the_seeds_carry_their_name() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/corpus/client_hello/"
        );
        for seed in ["openssl_sni", "two_records"] {
            let data = std::fs::read(format!("{dir}{seed}")).unwrap();
            let expected = Hello::Complete {
                kind: 1,
                sni: Some("a.example".to_owned()),
            };
            assert_eq!(read_hello(&data), expected, "{seed}");
        }
    }
}
