#![allow(clippy::unwrap_used)]

use std::io::Read;

use tern_config::{Coding, Compression};
use tern_h1::{parse_response, HeaderEdits, Limits, Method, ResponseHead};

use super::judge::worth_compressing;
use super::negotiate::{choose, old_mozilla};
use super::{edit_head, Encoder, Offer};

fn config() -> Compression {
    Compression {
        algos: vec![Coding::Brotli, Coding::Gzip, Coding::Zstd],
        types: vec!["text/".into(), "application/json".into()],
        offload: false,
        min_size: 100,
        gzip_level: 1,
        br_level: 4,
        zstd_level: 3,
    }
}

#[test]
fn the_highest_weight_wins_then_the_configured_order() {
    let algos = [Coding::Brotli, Coding::Gzip];
    let pick = |v: &str| choose(&algos, [v.as_bytes()].into_iter());
    assert_eq!(pick("gzip, deflate, br"), Some(Coding::Brotli));
    assert_eq!(pick("gzip;q=1.0, br;q=0.5"), Some(Coding::Gzip));
    assert_eq!(pick("br;q=0, gzip"), Some(Coding::Gzip));
    assert_eq!(pick("GZIP ; Q=0.001"), Some(Coding::Gzip));
    assert_eq!(pick("identity"), None);
    assert_eq!(pick("br;q=0, gzip;q=0"), None);
    assert_eq!(pick("*"), Some(Coding::Brotli));
    assert_eq!(pick("br;q=0, *;q=0.2"), Some(Coding::Gzip));
    assert_eq!(pick("*;q=0"), None);
    assert_eq!(pick("gzip;q=2, br;q=0.x"), None, "invalid weights refuse");
    assert_eq!(pick(""), None);
    assert_eq!(
        choose(&algos, [&b"deflate"[..], b"gzip;q=0.3"].into_iter()),
        Some(Coding::Gzip)
    );
}

#[test]
fn old_user_agents_are_refused_as_haproxy_does() {
    assert!(old_mozilla(
        b"Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)"
    ));
    assert!(old_mozilla(
        b"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"
    ));
    assert!(!old_mozilla(
        b"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)"
    ));
    assert!(!old_mozilla(
        b"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)"
    ));
    assert!(!old_mozilla(b"Mozilla/5.0 (X11; Linux x86_64)"));
}

fn judged(raw: &str) -> bool {
    let cfg = config();
    let offer = Offer {
        coding: Coding::Gzip,
        config: &cfg,
    };
    let mut head = ResponseHead::new();
    parse_response(raw.as_bytes(), &Limits::default(), &mut head, Method::Get).unwrap();
    worth_compressing(&offer, &head, raw.as_bytes())
}

#[test]
fn haproxy_skip_rules_and_tern_s_own() {
    let ok = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 500\r\n\r\n";
    assert!(judged(ok));
    assert!(judged(
        "HTTP/1.1 203 X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ));
    for (raw, why) in [
        ("HTTP/1.1 206 Partial\r\nContent-Type: text/html\r\nContent-Length: 500\r\n\r\n", "status"),
        ("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 500\r\n\r\n", "status"),
        ("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: 500\r\n\r\n", "HTTP/1.0"),
        ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 99\r\n\r\n", "small"),
        ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", "until close"),
        ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\nContent-Length: 500\r\n\r\n", "encoded"),
        ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nCache-Control: public, No-Transform\r\nContent-Length: 500\r\n\r\n", "no-transform"),
        ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Range: bytes 0-499/900\r\nContent-Length: 500\r\n\r\n", "range"),
        ("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 500\r\n\r\n", "type"),
        ("HTTP/1.1 200 OK\r\nContent-Type: multipart/byteranges\r\nContent-Length: 500\r\n\r\n", "multipart"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", "no type"),
        ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: abc\r\nContent-Length: 500\r\n\r\n", "bad etag"),
        ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"a\"\r\nETag: \"b\"\r\nContent-Length: 500\r\n\r\n", "two etags"),
    ] {
        assert!(!judged(raw), "{why}: {raw}");
    }
}

#[test]
fn the_head_says_the_coding_varies_and_weakens_the_etag() {
    let raw = "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nVary: Origin\r\nContent-Length: 500\r\n\r\n";
    let mut head = ResponseHead::new();
    parse_response(raw.as_bytes(), &Limits::default(), &mut head, Method::Get).unwrap();
    let mut edits = HeaderEdits::new();
    edit_head(Coding::Brotli, &head, raw.as_bytes(), &mut edits);
    let added = String::from_utf8(edits.added().to_vec()).unwrap();
    assert_eq!(
        added,
        "content-encoding: br\r\nvary: Accept-Encoding\r\netag: W/\"v1\"\r\n"
    );
    assert!(edits.deletes(b"ETag"));
    let raw =
        "HTTP/1.1 200 OK\r\nETag: W/\"v1\"\r\nVary: accept-encoding\r\nContent-Length: 500\r\n\r\n";
    parse_response(raw.as_bytes(), &Limits::default(), &mut head, Method::Get).unwrap();
    let mut edits = HeaderEdits::new();
    edit_head(Coding::Gzip, &head, raw.as_bytes(), &mut edits);
    assert_eq!(edits.added(), b"content-encoding: gzip\r\n");
}

/// The chunks' data joined (the test writes no last chunk).
fn dechunk(mut framed: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    while !framed.is_empty() {
        let eol = framed.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&framed[..eol]).unwrap(), 16).unwrap();
        data.extend_from_slice(&framed[eol + 2..eol + 2 + size]);
        framed = &framed[eol + 2 + size + 2..];
    }
    data
}

fn decode(coding: Coding, coded: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    match coding {
        Coding::Gzip => flate2::read::GzDecoder::new(coded).read_to_end(&mut plain),
        Coding::Deflate => flate2::read::ZlibDecoder::new(coded).read_to_end(&mut plain),
        Coding::RawDeflate => flate2::read::DeflateDecoder::new(coded).read_to_end(&mut plain),
        Coding::Brotli => brotli::Decompressor::new(coded, 4096).read_to_end(&mut plain),
        Coding::Zstd => zstd::stream::read::Decoder::new(coded)
            .unwrap()
            .read_to_end(&mut plain),
    }
    .unwrap();
    plain
}

#[test]
fn every_coding_streams_flushed_pieces_that_decode_as_they_come() {
    let text: Vec<u8> = (0..40_000)
        .flat_map(|i| format!("line {i} of a text body\n").into_bytes())
        .collect();
    for (_, coding) in Coding::ALL {
        let mut enc = Encoder::new(coding, &config()).unwrap();
        let mut framed = Vec::new();
        for piece in text.chunks(32 * 1024) {
            enc.write(piece).unwrap();
            enc.flush_chunk(&mut framed).unwrap();
        }
        // Everything written so far decodes before the end (the flush), except for the
        // formats' trailers, so a streaming client sees each piece at once.
        let partial = dechunk(&framed);
        assert!(partial.len() < text.len() / 4, "{coding:?} compresses");
        enc.finish_chunk(&mut framed).unwrap();
        assert_eq!(decode(coding, &dechunk(&framed)), text, "{coding:?}");
        assert!(enc.write(b"more").is_err());
    }
}
