//! The `health_reply` target: a server's reply to an HTTP health check, read by the check's own
//! code (`tern_proxy::health_fuzz`): HTTP/1.1 (tern-h1's response parser, interim responses,
//! body framing, the incremental `expect_body` search) or HTTP/2 (the `h2` crate as the check's
//! client, the same judgement).
//!
//! Properties: nothing panics; the check always ends with the reply (a timeout on a stream
//! that has ended is a hang); the verdict is one an HTTP check can give (`L7*` or `SOCKERR`),
//! passes only as `L7OK`, names a status that `expect_status` allows, and a body that passed
//! `expect_body` holds the needle's bytes; over HTTP/1.1 the verdict and its text do not depend
//! on how the reply was cut into reads.
//!
//! Selector (first byte): bit 0 HTTP/2; bit 1 a HEAD request; bit 2 `expect_body = "ok"`;
//! bits 3-4 `expect_status` (default 2xx-3xx, 200, 5xx, 200 and 404); bits 5-7 how the reply
//! is cut (all at once, or pieces of 1, 2, 3, 7, 16, 64 or 512 bytes).

use std::time::Duration;

use tern_config::{HttpCheck, StatusRange};
use tern_proxy::health_fuzz::{judge, Verdict};

use crate::peer::play;

/// The check's timeout: never reached on a reply that ends (the stream is in memory).
const LIMIT: Duration = Duration::from_secs(2);

/// How the reply is cut, by bits 5-7 of the selector.
const PIECES: [usize; 8] = [0, 1, 2, 3, 7, 16, 64, 512];

pub fn health_reply(data: &[u8]) {
    let Some((&sel, reply)) = data.split_first() else {
        return;
    };
    let check = check(sel);
    let piece = PIECES[usize::from(sel >> 5)];
    let verdict = run(&check, reply, piece);
    check_verdict(&check, reply, &verdict);
    if !check.h2 && piece != 0 {
        let whole = run(&check, reply, 0);
        assert_eq!(
            verdict, whole,
            "the verdict depends on how the reply was cut"
        );
    }
}

fn check(sel: u8) -> HttpCheck {
    let range = |low, high| StatusRange { low, high };
    HttpCheck {
        method: if sel & 2 != 0 { "HEAD" } else { "GET" }.to_owned(),
        path: "/health".to_owned(),
        host: None,
        expect_status: match (sel >> 3) & 3 {
            0 => Vec::new(),
            1 => vec![range(200, 200)],
            2 => vec![range(500, 599)],
            _ => vec![range(200, 200), range(404, 404)],
        },
        expect_body: (sel & 4 != 0).then(|| "ok".to_owned()),
        h2: sel & 1 != 0,
    }
}

fn run(check: &HttpCheck, reply: &[u8], piece: usize) -> Verdict {
    let address = ([127, 0, 0, 1], 8080).into();
    play(reply, piece, |io| judge(io, check, address, LIMIT))
}

fn check_verdict(check: &HttpCheck, reply: &[u8], v: &Verdict) {
    assert!(
        matches!(v.code, "L7OK" | "L7RSP" | "L7STS" | "L7BODY" | "SOCKERR"),
        "{v:?}: not the verdict of an HTTP check that ended"
    );
    assert_eq!(v.passed, v.code == "L7OK", "{v:?}");
    if !v.passed && v.code != "L7STS" && v.code != "L7BODY" {
        return;
    }
    let status: u16 = v
        .text
        .strip_prefix("status ")
        .and_then(|t| t.get(..3))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{v:?}: no status"));
    assert!((100..=999).contains(&status), "{v:?}");
    let allowed = if check.expect_status.is_empty() {
        (200..=399).contains(&status)
    } else {
        check.expect_status.iter().any(|r| r.contains(status))
    };
    assert_eq!(
        allowed,
        v.code != "L7STS",
        "{v:?} against {:?}",
        check.expect_status
    );
    if !check.h2 {
        let digits = status.to_string();
        assert!(
            reply.windows(3).any(|w| w == digits.as_bytes()),
            "{v:?}: a status not in the reply"
        );
    }
    if let (true, Some(needle)) = (v.passed, &check.expect_body) {
        assert!(
            needle.bytes().all(|b| reply.contains(&b)),
            "{v:?}: the body passed without the needle's bytes"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(sel: u8, reply: &[u8]) -> Verdict {
        run(&check(sel), reply, PIECES[usize::from(sel >> 5)])
    }

    #[test]
    fn replies_get_the_verdicts_of_real_checks() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(verdict(0, ok).code, "L7OK");
        // Read a byte at a time, searched for "ok" across two chunks.
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\no\r\n1\r\nk\r\n0\r\n\r\n";
        assert_eq!(verdict(0x24, chunked).code, "L7OK");
        let no =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\no\r\n1\r\nx\r\n0\r\n\r\n";
        assert_eq!(verdict(0x24, no).code, "L7BODY");
        // Cut short inside the body.
        assert_eq!(verdict(0x24, &chunked[..53]).code, "L7RSP");
        assert_eq!(verdict(0x08, ok).code, "L7OK");
        assert_eq!(verdict(0x10, ok).code, "L7STS");
        assert_eq!(verdict(0, b"SSH-2.0-OpenSSH\r\n\r\n").code, "L7RSP");
        // HTTP/2: SETTINGS, then HEADERS with :status 200 (HPACK index 8) ending the stream.
        let h2 = b"\0\0\0\x04\0\0\0\0\0\0\0\x01\x01\x05\0\0\0\x01\x88";
        assert_eq!(verdict(1, h2).code, "L7OK");
        assert_eq!(verdict(0x11, h2).code, "L7STS");
        assert_eq!(verdict(1, b"HTTP/1.1 200 OK\r\n\r\n").code, "L7RSP");
    }
}
