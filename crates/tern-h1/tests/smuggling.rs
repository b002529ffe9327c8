//! Request smuggling scenarios, end to end through the codec: a client's byte stream is parsed
//! as tern would (head, then body forwarded, chunked bodies re-framed), rewritten, and the
//! bytes that would reach
//! the server are parsed again as a strict server would. Each scenario is either refused with
//! the right status, or forwarded as exactly one unambiguous message (no Content-Length next to
//! Transfer-Encoding, the body ending where tern thinks it ends), with what follows left for
//! tern to read as the next request.

#![allow(clippy::unwrap_used)]

use tern_h1::{
    parse_request, write_request, Forwarding, Framing, H1Error, Limits, RequestHead, Status,
};

#[derive(Debug, PartialEq)]
enum Outcome {
    /// tern answers this status and closes.
    Refused(u16, H1Error),
    /// tern forwards `to_server`; `rest` stays in its buffer as the next request.
    Forwarded {
        to_server: String,
        keep_alive: bool,
        rest: String,
    },
}

/// What tern does with `stream` (one request head, its body, and whatever follows).
fn proxy(stream: &str) -> Outcome {
    let raw = stream.as_bytes();
    let limits = Limits::default();
    let mut head = RequestHead::new();
    let len = match parse_request(raw, &limits, &mut head) {
        Ok(Status::Complete(len)) => len,
        Ok(Status::Partial) => panic!("incomplete head in {stream:?}"),
        Err(e) => return Outcome::Refused(e.request_status(), e),
    };
    let mut out = Vec::new();
    write_request(&head, raw, &Forwarding::none(), &mut out);
    let mut body = head.body_reader(&limits);
    let progress = match body.forward_into(&raw[len..], &mut out) {
        Ok(p) => p,
        Err(e) => return Outcome::Refused(e.request_status(), e),
    };
    assert!(progress.done, "body incomplete in {stream:?}");
    // A strict server reads exactly one message from what tern sent.
    let mut server = RequestHead::new();
    let Ok(Status::Complete(server_len)) = parse_request(&out, &limits, &mut server) else {
        panic!("server refused {:?}", String::from_utf8_lossy(&out))
    };
    assert_eq!(server.framing(), head.framing());
    let mut server_body = server.body_reader(&limits);
    let p = server_body.advance(&out[server_len..]).unwrap();
    assert!(
        p.done && server_len + p.used == out.len(),
        "server reads another message"
    );
    Outcome::Forwarded {
        to_server: String::from_utf8(out).unwrap(),
        keep_alive: head.keep_alive(),
        rest: String::from_utf8(raw[len + progress.used..].to_vec()).unwrap(),
    }
}

fn refused(stream: &str) -> (u16, H1Error) {
    match proxy(stream) {
        Outcome::Refused(status, e) => (status, e),
        other => panic!("forwarded {stream:?}: {other:?}"),
    }
}

const SMUGGLED: &str = "GET /admin HTTP/1.1\r\nHost: h\r\n\r\n";

#[test]
fn cl_cl_with_different_values_is_refused() {
    let stream = format!(
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Length: {}\r\n\r\n{SMUGGLED}",
        SMUGGLED.len()
    );
    assert_eq!(refused(&stream), (400, H1Error::InvalidContentLength));
}

#[test]
fn cl_te_is_read_as_chunked_forwarded_without_content_length_and_closed() {
    // The front reads Content-Length 35 (swallowing the smuggled request), a back end reading
    // chunked would see /admin as a second request. tern reads chunked and forwards no
    // Content-Length, so it and the server agree; it also closes after the response.
    let stream = format!(
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\nTransfer-Encoding: chunked\r\n\r\n\
         0\r\n\r\n{SMUGGLED}"
    );
    let Outcome::Forwarded {
        to_server,
        keep_alive,
        rest,
    } = proxy(&stream)
    else {
        panic!()
    };
    assert!(
        !to_server.to_ascii_lowercase().contains("content-length"),
        "{to_server}"
    );
    assert!(
        to_server.ends_with("transfer-encoding: chunked\r\n\r\n0\r\n\r\n"),
        "{to_server}"
    );
    assert!(!keep_alive, "connection kept after CL+TE");
    assert_eq!(
        rest, SMUGGLED,
        "the rest is tern's to judge as the next request"
    );
}

#[test]
fn te_cl_chunked_wins_over_a_short_content_length() {
    let stream =
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n\
                  8\r\nSMUGGLED\r\n0\r\n\r\n";
    let Outcome::Forwarded {
        to_server, rest, ..
    } = proxy(stream)
    else {
        panic!()
    };
    assert!(to_server.ends_with("8\r\nSMUGGLED\r\n0\r\n\r\n"));
    assert_eq!(rest, "");
}

#[test]
fn obfuscated_transfer_encodings_are_refused() {
    let head = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n";
    for (te, want) in [
        ("Transfer-Encoding: xchunked\r\n", 501),
        ("Transfer-Encoding: chunked, identity\r\n", 501),
        (
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: cow\r\n",
            501,
        ),
        ("Transfer-Encoding: \"chunked\"\r\n", 501),
        ("Transfer-Encoding:\r\n chunked\r\n", 400),
        ("Transfer-Encoding : chunked\r\n", 400),
        ("Transfer-Encoding: \x0bchunked\r\n", 400),
        ("Transfer_Encoding: chunked\r\n", 400),
        ("Content_Length: 0\r\n", 400),
        (" Transfer-Encoding: chunked\r\n", 400),
        ("Transfer-Encoding\r\n : chunked\r\n", 400),
    ] {
        let stream = format!("{head}{te}\r\n0\r\n\r\n");
        assert_eq!(refused(&stream).0, want, "{te:?}");
    }
}

#[test]
fn whitespace_around_chunked_is_just_whitespace() {
    // OWS around a field value is not part of it (RFC 9110 §5.5).
    for te in [
        "Transfer-Encoding:\tchunked\t",
        "Transfer-Encoding:    chunked   ",
    ] {
        let stream = format!("POST / HTTP/1.1\r\nHost: h\r\n{te}\r\n\r\n0\r\n\r\n");
        let Outcome::Forwarded { to_server, .. } = proxy(&stream) else {
            panic!("{te:?}")
        };
        assert!(to_server.contains("transfer-encoding: chunked\r\n"));
    }
}

#[test]
fn bad_content_lengths_are_refused() {
    for cl in [
        "-1",
        "+5",
        "5 5",
        " ",
        "0x5",
        "5.0",
        "99999999999999999999",
        "5, 6",
    ] {
        let stream = format!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: {cl}\r\n\r\nhello");
        assert_eq!(
            refused(&stream),
            (400, H1Error::InvalidContentLength),
            "{cl:?}"
        );
    }
}

#[test]
fn chunk_framing_tricks_are_refused() {
    for body in [
        "fffffffffffffffff\r\nx\r\n0\r\n\r\n",
        "5\nhello\r\n0\r\n\r\n",
        "5;ext\nhello\r\n0\r\n\r\n",
        "5\r\nhello\n0\r\n\r\n",
        "5\r\nhello\r\n0\r\nX: a\n\r\n",
        "5\r\nhello\r\n0\r\n\n",
        "-5\r\nhello\r\n0\r\n\r\n",
        "5\r\nhelloX\r\n0\r\n\r\n",
        "0x5\r\nhello\r\n0\r\n\r\n",
        "10000000000000000\r\nx\r\n0\r\n\r\n",
        "5 \r\nhello\r\n0\r\n\r\n",
        "5;\r\nhello\r\n0\r\n\r\n",
        "5;a=\"b\r\nhello\r\n0\r\n\r\n",
        "5;a=\r\nhello\r\n0\r\n\r\n",
    ] {
        let stream =
            format!("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n{body}");
        let (status, e) = refused(&stream);
        assert_eq!(status, 400, "{body:?}");
        assert!(matches!(e, H1Error::InvalidChunk(_)), "{body:?}: {e}");
    }
}

#[test]
fn chunk_framing_reaches_the_server_as_tern_writes_it() {
    // Leading zeros, extensions a server could read as something else, and trailers that would
    // frame or route the message if a server merged them into the head.
    let stream = format!(
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
         0000000005;a=\"1;0\";b\r\nhello\r\n0;x=y\r\nContent-Length: 35\r\nHost: admin\r\n\
         Transfer-Encoding: identity\r\nx-sum: 1\r\n\r\n{SMUGGLED}"
    );
    let Outcome::Forwarded {
        to_server, rest, ..
    } = proxy(&stream)
    else {
        panic!()
    };
    assert!(
        to_server
            .ends_with("transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nx-sum: 1\r\n\r\n"),
        "{to_server:?}"
    );
    assert_eq!(rest, SMUGGLED);
}

#[test]
fn transfer_encoding_in_http_1_0_is_refused() {
    let stream = "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    assert_eq!(refused(stream), (400, H1Error::InvalidTransferEncoding));
}

#[test]
fn duplicate_host_is_refused_and_absolute_form_wins_over_host() {
    let stream = "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n";
    assert_eq!(refused(stream), (400, H1Error::DuplicateHost));
    // tern and the server must agree on the authority: the server sees the target's.
    let stream = "GET http://a.example/x HTTP/1.1\r\nHost: b.example\r\n\r\n";
    let Outcome::Forwarded { to_server, .. } = proxy(stream) else {
        panic!()
    };
    assert_eq!(to_server, "GET /x HTTP/1.1\r\nHost: a.example\r\n\r\n");
}

#[test]
fn a_content_length_body_ends_where_it_says() {
    let stream = format!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello{SMUGGLED}");
    let Outcome::Forwarded {
        to_server,
        keep_alive,
        rest,
    } = proxy(&stream)
    else {
        panic!()
    };
    assert!(to_server.ends_with("content-length: 5\r\n\r\nhello"));
    assert!(keep_alive);
    assert_eq!(rest, SMUGGLED);
    assert_eq!(
        proxy(&rest),
        Outcome::Forwarded {
            to_server: SMUGGLED.to_owned(),
            keep_alive: true,
            rest: String::new()
        }
    );
}

#[test]
fn framing_is_decided_by_the_head_alone() {
    let mut head = RequestHead::new();
    let raw = b"GET / HTTP/1.1\r\nHost: h\r\n\r\n5\r\nhello\r\n";
    parse_request(raw, &Limits::default(), &mut head).unwrap();
    assert_eq!(
        head.framing(),
        Framing::None,
        "a GET without framing has no body"
    );
}
