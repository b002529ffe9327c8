//! Generators of valid HTTP/1.1 messages for the property tests, with what each one means
//! (the payload of its body, its framing), so a test can check the codec against it.

#![allow(dead_code)]

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

/// A generated request: its bytes, where the head ends, and its body.
#[derive(Debug, Clone)]
pub struct GenMessage {
    pub bytes: Vec<u8>,
    pub head_len: usize,
    /// Length of the body as framed on the wire.
    pub body_len: usize,
    /// The body's data, without chunk framing.
    pub payload: Vec<u8>,
    pub chunked: bool,
}

/// Bytes that follow the message on the connection (the start of a pipelined request).
pub const NEXT: &[u8] = b"GET /next HTTP/1.1\r\n";

#[derive(Debug, Clone)]
pub enum GenBody {
    None,
    Length(Vec<u8>),
    Chunked {
        chunks: Vec<(Vec<u8>, Option<String>)>,
        trailers: Vec<(String, String)>,
    },
}

fn field_value() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[!-~]([ -~]{0,20}[!-~])?"]
}

/// End-to-end field names that no rule of the codec looks at.
pub fn plain_field() -> impl Strategy<Value = (String, String)> {
    ("[xX]-[A-Za-z0-9-]{1,10}", field_value())
}

pub fn body() -> impl Strategy<Value = GenBody> {
    let chunk = (
        vec(any::<u8>(), 1..40),
        option::of("[a-z]{1,5}(=[a-z0-9]{1,5})?"),
    );
    prop_oneof![
        Just(GenBody::None),
        vec(any::<u8>(), 0..100).prop_map(GenBody::Length),
        (vec(chunk, 0..5), vec(plain_field(), 0..3))
            .prop_map(|(chunks, trailers)| GenBody::Chunked { chunks, trailers }),
    ]
}

/// Frames `body` and appends it to `out`; returns (payload, chunked).
pub fn frame_body(body: &GenBody, out: &mut Vec<u8>) -> (Vec<u8>, bool) {
    match body {
        GenBody::None => (Vec::new(), false),
        GenBody::Length(data) => {
            out.extend_from_slice(data);
            (data.clone(), false)
        }
        GenBody::Chunked { chunks, trailers } => {
            let mut payload = Vec::new();
            for (data, ext) in chunks {
                out.extend_from_slice(format!("{:X}", data.len()).as_bytes());
                if let Some(ext) = ext {
                    out.extend_from_slice(format!(";{ext}").as_bytes());
                }
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(data);
                out.extend_from_slice(b"\r\n");
                payload.extend_from_slice(data);
            }
            out.extend_from_slice(b"0\r\n");
            for (name, value) in trailers {
                out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
            }
            out.extend_from_slice(b"\r\n");
            (payload, true)
        }
    }
}

/// The framing field line for a body, if any.
pub fn framing_line(body: &GenBody) -> Option<String> {
    match body {
        GenBody::None => None,
        GenBody::Length(d) => Some(format!("Content-Length: {}", d.len())),
        GenBody::Chunked { .. } => Some("Transfer-Encoding: chunked".into()),
    }
}

/// A valid request, varied in everything the codec judges.
pub fn request() -> impl Strategy<Value = GenMessage> {
    let target = prop_oneof![
        "/[A-Za-z0-9/._~%!$&'()*+,;=:@-]{0,20}(\\?[a-z0-9=&]{0,10})?",
        "https?://([a-z]{1,4}(:[a-z]{1,4})?@)?[a-z]{1,8}(\\.[a-z]{2,3})?(:[0-9]{1,4})?(/[a-z0-9/]{0,10})?(\\?[a-z]{1,4})?",
    ];
    let extras = (
        option::of("(close|keep-alive|x-a|X-A, x-b)"),
        any::<bool>(),
        any::<bool>(),
        option::of("[0-9.]{1,15}"),
    );
    (
        prop_oneof![
            Just("GET"),
            Just("POST"),
            Just("PUT"),
            Just("PATCH"),
            Just("X-MKCOL")
        ],
        target,
        any::<bool>(),
        "[a-z]{1,10}(:[0-9]{1,4})?",
        vec(plain_field(), 0..6),
        extras,
        body(),
    )
        .prop_map(|(method, target, http11, host, fields, extras, body)| {
            let (connection, trailers, expect, xff) = extras;
            let mut body = body;
            if !http11 && matches!(body, GenBody::Chunked { .. }) {
                body = GenBody::Length(b"1.0 has no chunked".to_vec());
            }
            let mut head = format!(
                "{method} {target} HTTP/1.{}\r\nHost: {host}\r\n",
                u8::from(http11)
            );
            for (i, (name, value)) in fields.iter().enumerate() {
                head.push_str(&format!("{name}: {value}\r\n"));
                if i == 1 {
                    if let Some(line) = framing_line(&body) {
                        head.push_str(&format!("{line}\r\n"));
                    }
                }
            }
            if fields.len() < 2 {
                if let Some(line) = framing_line(&body) {
                    head.push_str(&format!("{line}\r\n"));
                }
            }
            if let Some(c) = connection {
                head.push_str(&format!("Connection: {c}\r\nX-A: 1\r\n"));
            }
            if trailers {
                head.push_str("TE: trailers\r\n");
            }
            if expect {
                head.push_str("Expect: 100-continue\r\n");
            }
            if let Some(xff) = xff {
                head.push_str(&format!("X-Forwarded-For: {xff}\r\n"));
            }
            head.push_str("\r\n");
            let mut bytes = head.into_bytes();
            let head_len = bytes.len();
            let (payload, chunked) = frame_body(&body, &mut bytes);
            let body_len = bytes.len() - head_len;
            bytes.extend_from_slice(NEXT);
            GenMessage {
                bytes,
                head_len,
                body_len,
                payload,
                chunked,
            }
        })
}

/// A valid response to GET, with a body delimited by its fields (never until close).
pub fn response() -> impl Strategy<Value = GenMessage> {
    (
        prop_oneof![Just(200u16), Just(201), Just(404), Just(500), Just(302)],
        "[A-Za-z ]{0,12}",
        any::<bool>(),
        vec(plain_field(), 0..6),
        option::of(Just("Connection: close")),
        body(),
    )
        .prop_map(|(status, reason, http11, fields, close, body)| {
            let mut body = body;
            if matches!(body, GenBody::None) || (!http11 && matches!(body, GenBody::Chunked { .. }))
            {
                body = GenBody::Length(b"x".to_vec());
            }
            let mut head = format!("HTTP/1.{} {status} {reason}\r\n", u8::from(http11));
            for (name, value) in &fields {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            if let Some(line) = framing_line(&body) {
                head.push_str(&format!("{line}\r\n"));
            }
            if let Some(close) = close {
                head.push_str(&format!("{close}\r\n"));
            }
            head.push_str("\r\n");
            let mut bytes = head.into_bytes();
            let head_len = bytes.len();
            let (payload, chunked) = frame_body(&body, &mut bytes);
            let body_len = bytes.len() - head_len;
            bytes.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
            GenMessage {
                bytes,
                head_len,
                body_len,
                payload,
                chunked,
            }
        })
}

/// Cut points for splitting `len` bytes into pieces: sorted, unique, inside 1..len.
pub fn cuts(len: usize, raw: &[usize]) -> Vec<usize> {
    let mut cuts: Vec<usize> = raw
        .iter()
        .filter(|_| len > 1)
        .map(|c| 1 + c % (len - 1))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}
