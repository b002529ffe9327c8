//! Chunked bodies through the real `tern` binary, in both directions, against raw backends that
//! record the exact bytes they receive: tern writes every chunk-size line afresh (lowercase hex,
//! no leading zeros, no extensions), drops framing, hop-by-hop and routing fields from trailers
//! and writes the others as `name: value`, and answers 400 (request) or 502 (response) to a
//! chunk size that does not fit 64 bits, which never reaches the other side. Chunk boundaries
//! may change on the way (tern writes the data it holds as one chunk), so the framing is
//! checked by a strict reader of canonical chunks, not compared byte for byte.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(5);

/// A chunked body read back by the strict reader: its data and trailer lines.
#[derive(Debug, PartialEq)]
struct Body {
    data: Vec<u8>,
    trailers: Vec<String>,
}

/// Reads one chunked body from the start of `bytes` and checks that it is canonical: size lines
/// of lowercase hex without leading zeros or extensions, data followed by CRLF, `0\r\n` last,
/// trailer lines `name: value` with no whitespace around the value. Returns the body and the
/// bytes it took, or what was not canonical.
fn canonical(bytes: &[u8]) -> Result<(Body, usize), String> {
    let mut at = 0;
    let mut data = Vec::new();
    let line = |at: usize| -> Result<(&[u8], usize), String> {
        let rest = &bytes[at..];
        let end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| format!("no CRLF after offset {at}"))?;
        Ok((&rest[..end], at + end + 2))
    };
    loop {
        let (size_line, next) = line(at)?;
        let text = String::from_utf8_lossy(size_line).into_owned();
        let canonical_hex = !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && (text == "0" || !text.starts_with('0'));
        if !canonical_hex {
            return Err(format!(
                "size line {text:?} at offset {at} is not canonical"
            ));
        }
        let size = usize::from_str_radix(&text, 16).map_err(|e| e.to_string())?;
        at = next;
        if size == 0 {
            break;
        }
        let end = at + size;
        if bytes.get(end..end + 2) != Some(b"\r\n") {
            return Err(format!(
                "chunk of {size} bytes at {at} not followed by CRLF"
            ));
        }
        data.extend_from_slice(&bytes[at..end]);
        at = end + 2;
    }
    let mut trailers = Vec::new();
    loop {
        let (field, next) = line(at)?;
        at = next;
        if field.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(field).into_owned();
        let canonical_field = match text.split_once(':') {
            Some((_, "")) => true,
            Some((_, value)) => {
                value.starts_with(' ') && value.trim() == &value[1..] && !value[1..].is_empty()
            }
            None => false,
        };
        if !canonical_field {
            return Err(format!("trailer line {text:?} is not canonical"));
        }
        trailers.push(text);
    }
    Ok((Body { data, trailers }, at))
}

/// The offset just past the first `\r\n\r\n` (the end of a head).
fn head_end(bytes: &[u8]) -> usize {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(bytes.len(), |p| p + 4)
}

/// A raw backend that reads one request whose chunked body ends with `body_end`, answers 200
/// with `ok` and keeps the connection until tern closes it. Returns every byte it received.
fn recording_backend(
    body_end: &'static [u8],
) -> (SocketAddr, std::thread::JoinHandle<Option<Vec<u8>>>) {
    raw_backend(Duration::from_secs(20), move |mut s| {
        let (bytes, _) = read_until_contains(&mut s, body_end, WAIT);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        let rest = read_until_closed(&mut s, WAIT);
        [bytes, rest.bytes].concat()
    })
}

/// The client's chunked upload: odd sizes, every kind of extension, forbidden trailers.
const UPLOAD: &[u8] = b"POST /up HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\
    Connection: close\r\n\r\n\
    000a;name=value;q=\"a;b\\\"c\"\r\n0123456789\r\n\
    5 ;ext ; other = token\r\nhello\r\n\
    00000000000000000001\r\n!\r\n\
    000;last\r\n\
    X-Sum:   1  \r\nContent-Length: 5\r\nHost: evil.example\r\nTransfer-Encoding: chunked\r\n\
    Trailer: x-sum\r\nConnection: keep-alive\r\nx-b:two words\r\n\r\n";

/// The request body as the server must see it, whatever the chunk boundaries.
fn expected_upload() -> Body {
    Body {
        data: b"0123456789hello!".to_vec(),
        trailers: vec!["X-Sum: 1".into(), "x-b: two words".into()],
    }
}

/// Checks what the recording backend received for [`UPLOAD`].
fn check_upload(received: &[u8]) {
    let head = String::from_utf8_lossy(&received[..head_end(received)]).to_ascii_lowercase();
    assert!(head.contains("transfer-encoding: chunked\r\n"), "{head}");
    let body = &received[head_end(received)..];
    let (got, used) =
        canonical(body).unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(body)));
    assert_eq!(
        got,
        expected_upload(),
        "{:?}",
        String::from_utf8_lossy(body)
    );
    assert_eq!(used, body.len(), "bytes after the body");
    for leak in ["name=value", "ext", "evil.example", "content-length"] {
        assert!(
            !String::from_utf8_lossy(body)
                .to_ascii_lowercase()
                .contains(leak),
            "{leak:?} reached the server: {:?}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn request_chunks_reach_the_server_canonical() {
    let (addr, backend) = recording_backend(b"two words\r\n\r\n");
    let tern = Tern::run(&Config::new().server("s1", &addr.to_string(), 1).toml());
    let r = raw_exchange(tern.addr(), UPLOAD, WAIT);
    assert_eq!(r.status(), Some(200), "{}", r.text());
    tern.stop_clean();
    check_upload(&backend.join().unwrap().expect("tern never connected"));
}

#[test]
fn request_chunks_sent_byte_by_byte_reach_the_server_canonical() {
    // The head in one write, then the body one byte per write: the framing arrives cut
    // anywhere (as far as the network keeps the writes apart), the server's view is the same.
    let (addr, backend) = recording_backend(b"two words\r\n\r\n");
    let tern = Tern::run(&Config::new().server("s1", &addr.to_string(), 1).toml());
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.set_nodelay(true).unwrap();
    let body_at = head_end(UPLOAD);
    s.write_all(&UPLOAD[..body_at]).unwrap();
    for b in &UPLOAD[body_at..] {
        s.write_all(std::slice::from_ref(b)).unwrap();
    }
    let r = read_until_closed(&mut s, WAIT);
    assert_eq!(r.status(), Some(200), "{}", r.text());
    tern.stop_clean();
    check_upload(&backend.join().unwrap().expect("tern never connected"));
}

#[test]
fn response_chunks_reach_the_client_canonical() {
    let (addr, backend) = raw_backend(Duration::from_secs(20), |mut s| {
        let _ = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-checksum\r\n\r\n\
              0005;a=b;c=\"d\"\r\nhello\r\n\
              6 ;x\r\n world\r\n\
              0;end=1\r\n\
              Content-Length: 3\r\nTransfer-Encoding: chunked\r\nHost: evil.example\r\n\
              Set-Cookie: a=b\r\nConnection: close\r\nx-checksum:\tabc \r\n\r\n",
        );
        let _ = read_until_closed(&mut s, WAIT);
    });
    let tern = Tern::run(&Config::new().server("s1", &addr.to_string(), 1).toml());
    let r = raw_exchange(
        tern.addr(),
        b"GET / HTTP/1.1\r\nHost: localhost\r\nTE: trailers\r\nConnection: close\r\n\r\n",
        WAIT,
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    assert_eq!(
        r.head_value("transfer-encoding").as_deref(),
        Some("chunked")
    );
    let body = r.body_bytes();
    let (got, used) =
        canonical(body).unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(body)));
    assert_eq!(
        got,
        Body {
            data: b"hello world".to_vec(),
            trailers: vec!["x-checksum: abc".into()],
        }
    );
    assert_eq!(used, body.len(), "{:?}", r.text());
    tern.stop_clean();
    backend.join().unwrap().expect("tern never connected");
}

#[test]
fn http_1_0_client_gets_the_data_of_a_chunked_response_with_extensions() {
    let (addr, backend) = raw_backend(Duration::from_secs(20), |mut s| {
        let _ = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
              0005;a=b\r\nhello\r\n6\r\n world\r\n0\r\nx-checksum: abc\r\n\r\n",
        );
        let _ = read_until_closed(&mut s, WAIT);
    });
    let tern = Tern::run(&Config::new().server("s1", &addr.to_string(), 1).toml());
    let r = raw_exchange(
        tern.addr(),
        b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n",
        WAIT,
    );
    assert_eq!(r.status(), Some(200), "{}", r.text());
    assert!(r.closed);
    assert_eq!(r.body_bytes(), b"hello world", "{:?}", r.text());
    tern.stop_clean();
    backend.join().unwrap().expect("tern never connected");
}

/// Sizes that do not fit 64 bits: 17 hex digits.
const OVERFLOWS: [&str; 2] = ["fffffffffffffffff", "10000000000000000"];

#[test]
fn overflowing_chunk_size_in_the_first_bytes_gets_400_before_any_server() {
    for size in OVERFLOWS {
        let (addr, backend) = raw_backend(Duration::from_secs(1), |mut s| {
            read_until_closed(&mut s, WAIT).bytes
        });
        let tern = Tern::run(&Config::new().server("s1", &addr.to_string(), 1).toml());
        let request = format!(
            "POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n\
             5\r\nhello\r\n{size}\r\nx\r\n0\r\n\r\n"
        );
        let r = raw_exchange(tern.addr(), request.as_bytes(), WAIT);
        assert_eq!(r.status(), Some(400), "{size}: {}", r.text());
        assert!(r.closed, "{size}: connection still open after the 400");
        let c = tern.stop_clean();
        assert_eq!(c.get("frontend web", "bad_requests"), 1, "{size}");
        assert_eq!(
            backend.join().unwrap(),
            None,
            "{size}: a server was contacted"
        );
    }
}

#[test]
fn overflowing_chunk_size_during_the_upload_gets_400_and_never_reaches_the_server() {
    for size in OVERFLOWS {
        // The backend signals once the first chunk is in, then records until tern closes.
        let (seen_tx, seen_rx) = mpsc::channel();
        let (addr, backend) = raw_backend(Duration::from_secs(20), move |mut s| {
            let (mut bytes, _) = read_until_contains(&mut s, b"hello\r\n", WAIT);
            let _ = seen_tx.send(());
            bytes.extend(read_until_closed(&mut s, WAIT).bytes);
            bytes
        });
        let tern = Tern::run(&Config::new().server("s1", &addr.to_string(), 1).toml());
        let mut s = TcpStream::connect(tern.addr()).unwrap();
        s.set_nodelay(true).unwrap();
        s.write_all(
            b"POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n\
              5\r\nhello\r\n",
        )
        .unwrap();
        seen_rx
            .recv_timeout(WAIT)
            .expect("the first chunk never reached the server");
        // The size line cut in two writes: no part of it may pass.
        let (first, second) = size.split_at(9);
        s.write_all(first.as_bytes()).unwrap();
        s.write_all(format!("{second}\r\nx\r\n0\r\n\r\n").as_bytes())
            .unwrap();
        let r = read_until_closed(&mut s, WAIT);
        assert_eq!(r.status(), Some(400), "{size}: {}", r.text());
        let c = tern.stop_clean();
        assert_eq!(c.get("frontend web", "bad_requests"), 1, "{size}");
        let received = backend.join().unwrap().expect("tern never connected");
        let body = String::from_utf8_lossy(&received[head_end(&received)..]).into_owned();
        assert_eq!(
            body, "5\r\nhello\r\n",
            "{size}: the server saw more than the first chunk"
        );
    }
}

#[test]
fn overflowing_chunk_size_in_a_response_gets_502() {
    for size in OVERFLOWS {
        // Head and body in one small write: tern reads them together, so nothing of the
        // response has reached the client when the size is refused.
        let (addr, backend) = raw_backend(Duration::from_secs(20), move |mut s| {
            let _ = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
            let response = format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{size}\r\nx\r\n0\r\n\r\n"
            );
            let _ = s.write_all(response.as_bytes());
            let _ = read_until_closed(&mut s, WAIT);
        });
        let tern = Tern::run(&Config::new().server("s1", &addr.to_string(), 1).toml());
        let r = raw_exchange(
            tern.addr(),
            b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            WAIT,
        );
        assert_eq!(r.status(), Some(502), "{size}: {:?}", r.text());
        assert!(r.closed, "{size}");
        assert!(!r.text().contains(size), "{size}: {:?}", r.text());
        let c = tern.stop_clean();
        assert_eq!(c.get("backend app", "upstream_errors"), 1, "{size}");
        backend.join().unwrap().expect("tern never connected");
    }
}

#[test]
fn pipelined_request_after_a_chunked_body_is_served() {
    let term = Term::start("s1");
    let tern = Tern::run(&Config::new().terms(&[&term]).toml());
    let r = raw_exchange(
        tern.addr(),
        b"POST /?h=1 HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n\
          3;x=y\r\nabc\r\n0\r\nx-t: 1\r\n\r\n\
          GET /?h=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        WAIT,
    );
    assert!(r.closed);
    assert_eq!(
        r.text().matches("HTTP/1.1 200 ").count(),
        2,
        "{:?}",
        r.text()
    );
    assert!(r.text().contains("GET /?h=1 HTTP/1.1"), "{:?}", r.text());
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "requests"), 2);
}
