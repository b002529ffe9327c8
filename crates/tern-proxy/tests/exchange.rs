//! The proxy loop against scripted servers, for what `tern term` cannot be made to do: close a
//! pooled connection just as a request arrives on it, send interim responses, switch
//! protocols, or delimit a body by closing. The proxy runs in-process on an ephemeral port (one
//! worker); each server is a thread that plays its script on the connections it accepts.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use tern_proxy::{ProxyHandle, Snapshot, StatsSnapshot};

const WAIT: Duration = Duration::from_secs(5);

/// A server that plays `script(n, stream)` on its `n`-th accepted connection, for `conns`
/// connections.
fn server(
    conns: usize,
    script: impl Fn(usize, TcpStream) + Send + 'static,
) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        for n in 0..conns {
            let (s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(WAIT)).unwrap();
            script(n, s);
        }
    });
    (addr, handle)
}

/// Reads one request head (up to the blank line); empty if the peer closed first.
fn read_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

fn proxy(server: SocketAddr) -> ProxyHandle {
    let toml = format!(
        "[global]\nworkers = 1\n\n[[frontend]]\nname = \"web\"\nbind = [\"127.0.0.1:0\"]\n\
         default_backend = \"app\"\n\n[[backend]]\nname = \"app\"\n\
         servers = [ {{ name = \"s1\", address = \"{server}\" }} ]\n"
    );
    let config = tern_config::parse(&toml, Path::new("test.toml")).unwrap();
    tern_proxy::start(Snapshot {
        config,
        tls: vec![vec![None]],
        servers_tls: Vec::new(),
        openssl: Vec::new(),
        access_log: None,
    })
    .unwrap()
}

/// Sends `requests` on one connection and reads until the proxy closes it.
fn exchange(p: &ProxyHandle, requests: &[&str]) -> String {
    let mut c = TcpStream::connect(p.binds()[0].address).unwrap();
    c.set_read_timeout(Some(WAIT)).unwrap();
    let mut got = Vec::new();
    for r in requests {
        c.write_all(r.as_bytes()).unwrap();
    }
    let _ = c.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

fn stop(p: ProxyHandle) -> StatsSnapshot {
    let stats = p.stats().clone();
    p.shutdown();
    p.join();
    stats.snapshot()
}

const GET: &str = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
const GET_LAST: &str = "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

/// Answers the first request of the first connection, then closes that connection when the
/// second request arrives on it; later connections answer `b2`.
fn closes_after_one(n: usize, mut s: TcpStream) {
    if n == 0 {
        read_head(&mut s);
        s.write_all(OK).unwrap();
        read_head(&mut s);
    } else {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nb2")
            .unwrap();
    }
}

#[test]
fn idempotent_request_lost_on_a_pooled_connection_is_sent_again() {
    let (addr, backend) = server(2, closes_after_one);
    let p = proxy(addr);
    let got = exchange(&p, &[GET_LAST]);
    assert!(got.ends_with("ok"), "{got:?}");
    let got = exchange(&p, &[GET_LAST]);
    assert!(got.starts_with("HTTP/1.1 200"), "{got:?}");
    assert!(got.ends_with("b2"), "{got:?}");
    let s = stop(p);
    backend.join().unwrap();
    assert_eq!(s.servers[0][0].connects, 2);
    assert_eq!(s.servers[0][0].requests, 2);
    assert_eq!(s.backends[0].upstream_errors, 0);
}

#[test]
fn post_lost_on_a_pooled_connection_is_not_replayed() {
    let (addr, backend) = server(1, closes_after_one);
    let p = proxy(addr);
    assert!(exchange(&p, &[GET_LAST]).ends_with("ok"));
    let got = exchange(
        &p,
        &["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"],
    );
    assert!(got.starts_with("HTTP/1.1 502"), "{got:?}");
    let s = stop(p);
    backend.join().unwrap();
    assert_eq!(s.servers[0][0].connects, 1, "no second connection");
    assert_eq!(s.backends[0].upstream_errors, 1);
}

#[test]
fn interim_responses_are_dropped_and_101_is_refused() {
    let (addr, backend) = server(2, |n, mut s| {
        read_head(&mut s);
        let reply: &[u8] = if n == 0 {
            b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n\
              HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
        } else {
            b"HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\nconnection: upgrade\r\n\r\n"
        };
        s.write_all(reply).unwrap();
        read_head(&mut s);
    });
    let p = proxy(addr);
    let got = exchange(&p, &[GET_LAST]);
    assert_eq!(got.matches("HTTP/1.1").count(), 1, "{got:?}");
    assert!(
        got.starts_with("HTTP/1.1 200") && got.ends_with("ok"),
        "{got:?}"
    );
    let got = exchange(&p, &[GET_LAST]);
    assert!(got.starts_with("HTTP/1.1 502"), "{got:?}");
    let s = stop(p);
    backend.join().unwrap();
    assert_eq!(s.backends[0].upstream_errors, 1);
}

#[test]
fn body_delimited_by_close_is_chunked_for_a_keep_alive_client() {
    let (addr, backend) = server(2, |_, mut s| {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\n\r\nuntil ").unwrap();
        s.write_all(b"close").unwrap();
    });
    let p = proxy(addr);
    let got = exchange(&p, &[GET, GET_LAST]);
    let chunked = "transfer-encoding: chunked\r\n";
    assert_eq!(got.matches(chunked).count(), 2, "{got:?}");
    assert_eq!(got.matches("0\r\n\r\n").count(), 2, "{got:?}");
    let (first, second) = got.split_at(got.rfind("HTTP/1.1 200").unwrap());
    for resp in [first, second] {
        let body = &resp[resp.find("\r\n\r\n").unwrap() + 4..];
        let mut data = String::new();
        let mut rest = body;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size, 16).unwrap();
            if n == 0 {
                break;
            }
            data.push_str(&after[..n]);
            rest = &after[n + 2..];
        }
        assert_eq!(data, "until close", "{resp:?}");
    }
    let s = stop(p);
    backend.join().unwrap();
    assert_eq!(
        s.servers[0][0].connects, 2,
        "a closed connection is not reused"
    );
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let (addr, backend) = server(1, |_, mut s| {
        for i in 0..3 {
            let head = read_head(&mut s);
            let path = head.split(' ').nth(1).unwrap_or("?").to_owned();
            let body = format!("{i}{path}");
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            s.write_all(reply.as_bytes()).unwrap();
        }
        read_head(&mut s);
    });
    let p = proxy(addr);
    let all = "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n\
               GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let got = exchange(&p, &[all]);
    let bodies: Vec<&str> = got
        .split("HTTP/1.1 200 OK")
        .skip(1)
        .map(|r| &r[r.find("\r\n\r\n").unwrap() + 4..])
        .collect();
    assert_eq!(bodies, ["0/a", "1/b", "2/c"], "{got:?}");
    let s = stop(p);
    backend.join().unwrap();
    assert_eq!(s.frontends[0].requests, 3);
    assert_eq!(s.servers[0][0].reused, 2);
}
