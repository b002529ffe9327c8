//! TLS passthrough routed by SNI through the real binary: tern reads the ClientHello on a plain
//! bind of a TCP frontend (`tcp_request.inspect_delay`), chooses the backend on `req.ssl_sni`
//! and relays the whole stream, ClientHello included, to a TLS origin it never decrypts.
//!
//! The origins are `tern term --tls-cert` processes, each with a certificate of its own: the
//! certificate a client saw tells which origin answered, and a completed request proves the
//! TLS session was the origin's. Clients: rustls (through hyper), a raw socket sending its
//! ClientHello in two pieces with a pause between them, and `curl --resolve` (the origin's
//! `x-term-server` header names it). Every wait is bounded by `WAIT`.

#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::{bounded_get, rustls_client, tls_connect, write_named_cert};
use support::*;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, ServerName};
use tern_tls::KeyKind;

/// Longest wait for anything in these tests.
const WAIT: Duration = Duration::from_secs(10);

/// A TLS origin with a certificate for `names`; the certificate's DER.
fn origin(dir: &Path, name: &str, names: &[&str]) -> (Term, CertificateDer<'static>) {
    let leaf = write_named_cert(dir, name, names, KeyKind::EcdsaP256);
    let pem = dir.join(format!("{name}.pem"));
    let term = Term::start_with(name, &["--tls-cert", pem.to_str().unwrap()]);
    (term, leaf)
}

/// Three origins: `a` for a.example, `b` for *.b.example, `c` the default.
struct Origins {
    a: (Term, CertificateDer<'static>),
    b: (Term, CertificateDer<'static>),
    c: (Term, CertificateDer<'static>),
}

fn origins(tag: &str) -> Origins {
    let dir = temp_dir(tag);
    Origins {
        a: origin(&dir, "a", &["a.example"]),
        b: origin(&dir, "b", &["x.b.example"]),
        c: origin(&dir, "c", &["default.example"]),
    }
}

/// A passthrough frontend `sni` on a plain bind, with these `tcp_request` content rules (TOML
/// items), routing to backends `a`, `b` and the default `c` at these addresses.
fn passthrough(content: &str, a: SocketAddr, b: SocketAddr, c: SocketAddr) -> String {
    let backend = |name: &str, addr: SocketAddr| {
        format!(
            "[[backend]]\nname = \"{name}\"\nmode = \"tcp\"\n\
             servers = [ {{ name = \"{name}1\", address = \"{addr}\" }} ]\n\n"
        )
    };
    format!(
        "[global]\nworkers = 1\n\n[[frontend]]\nname = \"sni\"\nmode = \"tcp\"\n\
         bind = [\"127.0.0.1:0\"]\n\
         tcp_request = {{ inspect_delay = \"300ms\", content = [{content}] }}\n\
         use_backend = [\n  {{ backend = \"a\", if = \"{{ req.ssl_sni -i a.example }}\" }},\n  \
         {{ backend = \"b\", if = \"{{ req.ssl_sni -m end .b.example }}\" }},\n]\n\
         default_backend = \"c\"\n\n{}{}{}",
        backend("a", a),
        backend("b", b),
        backend("c", c)
    )
}

/// The certificate the origin behind `addr` showed a client asking for `sni`, after one
/// request answered 200 on that TLS session.
fn seen_by_client(addr: SocketAddr, sni: &str) -> CertificateDer<'static> {
    block_on(async {
        let (mut conn, negotiated) = tls_connect(addr, rustls_client(&[], false), sni).await;
        assert_eq!(bounded_get(&mut conn, "/").await.status, 200, "SNI {sni}");
        negotiated.leaf.unwrap()
    })
}

/// A handshake whose ClientHello leaves in `pieces` (already framed), each written on its own
/// with a pause between them, then one request; the certificate the server showed.
fn seen_by_slow_client(
    addr: SocketAddr,
    sni: &str,
    split: impl Fn(&[u8]) -> Vec<Vec<u8>>,
) -> CertificateDer<'static> {
    let name = ServerName::try_from(sni.to_owned()).unwrap();
    let mut conn = rustls::ClientConnection::new(rustls_client(&[], false), name).unwrap();
    let mut hello = Vec::new();
    conn.write_tls(&mut hello).unwrap();
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_nodelay(true).unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    for (i, piece) in split(&hello).iter().enumerate() {
        if i > 0 {
            // The scenario itself: a client whose ClientHello arrives late, not a wait for tern.
            thread::sleep(Duration::from_millis(100));
        }
        tcp.write_all(piece).unwrap();
    }
    let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
    tls.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = Vec::new();
    // The origin may close without close_notify: what arrived is what counts.
    let _ = tls.read_to_end(&mut response);
    assert!(
        response.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&response)
    );
    conn.peer_certificates().unwrap()[0].clone().into_owned()
}

/// The ClientHello cut in two TCP segments inside its record.
fn two_segments(hello: &[u8]) -> Vec<Vec<u8>> {
    vec![hello[..40].to_vec(), hello[40..].to_vec()]
}

/// The ClientHello's handshake message cut into two TLS records.
fn two_records(hello: &[u8]) -> Vec<Vec<u8>> {
    let message = &hello[5..];
    let cut = message.len() / 2;
    [&message[..cut], &message[cut..]]
        .iter()
        .map(|part| {
            let mut record = vec![22, 3, 1];
            record.extend((part.len() as u16).to_be_bytes());
            record.extend(*part);
            record
        })
        .collect()
}

#[test]
fn each_name_reaches_its_origin_and_an_unknown_name_the_default() {
    let o = origins("sni-route");
    let tern = Tern::run(&passthrough("", o.a.0.addr, o.b.0.addr, o.c.0.addr));
    let addr = tern.addr();
    assert!(seen_by_client(addr, "a.example") == o.a.1, "a.example");
    assert!(
        seen_by_client(addr, "A.EXAMPLE") == o.a.1,
        "-i ignores case"
    );
    assert!(seen_by_client(addr, "x.b.example") == o.b.1, "-m end");
    assert!(seen_by_client(addr, "other.example") == o.c.1, "default");
    // An address sends no SNI: the default.
    assert!(seen_by_client(addr, "127.0.0.1") == o.c.1, "no SNI");
    let counters = tern.stop();
    assert_eq!(counters.get("frontend sni", "tcp_sessions"), 5);
    assert_eq!(counters.get("backend a", "tcp_sessions"), 2);
    assert_eq!(counters.get("backend b", "tcp_sessions"), 1);
    assert_eq!(counters.get("backend c", "tcp_sessions"), 2);
}

#[test]
fn a_client_hello_in_pieces_is_still_routed_by_its_name() {
    let o = origins("sni-split");
    let tern = Tern::run(&passthrough("", o.a.0.addr, o.b.0.addr, o.c.0.addr));
    let addr = tern.addr();
    assert!(seen_by_slow_client(addr, "a.example", two_segments) == o.a.1);
    assert!(seen_by_slow_client(addr, "x.b.example", two_records) == o.b.1);
    tern.stop();
}

/// An echo server: writes back what it reads; at end of stream, shuts down its sending side.
fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for mut conn in listener.incoming().map_while(Result::ok) {
            thread::spawn(move || {
                let _ = conn.set_read_timeout(Some(WAIT));
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = conn.read(&mut buf) {
                    if conn.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
                let _ = conn.shutdown(Shutdown::Write);
            });
        }
    });
    addr
}

/// What a client sending `data` (then closing its sending side) gets back before the
/// connection ends (a refused client may see a reset rather than a close: both end it).
fn exchange(addr: SocketAddr, data: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(data).unwrap();
    let _ = s.shutdown(Shutdown::Write);
    let mut out = Vec::new();
    match s.read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) => assert!(
            e.kind() == std::io::ErrorKind::ConnectionReset,
            "the connection did not end: {e}"
        ),
    }
    out
}

#[test]
fn without_content_rules_a_client_that_is_not_tls_goes_to_the_default_whole() {
    let o = origins("sni-plain");
    let echo = echo_server();
    let tern = Tern::run(&passthrough("", o.a.0.addr, o.b.0.addr, echo));
    // The bytes read to judge the connection are relayed first, then the rest.
    let got = exchange(tern.addr(), b"PING not tls\r\n");
    assert_eq!(got, b"PING not tls\r\n");
    // A silent client: once the delay expires it is routed (default) and relayed as well.
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    thread::sleep(Duration::from_millis(400));
    s.write_all(b"late").unwrap();
    let mut buf = [0u8; 4];
    s.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"late");
    drop(s);
    let counters = tern.stop();
    assert_eq!(counters.get("backend c", "tcp_sessions"), 2);
    assert_eq!(counters.get("frontend sni", "denied"), 0);
}

#[test]
fn accept_only_tls_rejects_other_bytes_and_slow_clients_counted() {
    let o = origins("sni-reject");
    let rules =
        "{ action = \"accept\", if = \"{ req.ssl_hello_type 1 }\" }, { action = \"reject\" }";
    let tern = Tern::run(&passthrough(rules, o.a.0.addr, o.b.0.addr, o.c.0.addr));
    let addr = tern.addr();
    assert!(seen_by_client(addr, "a.example") == o.a.1);
    // Not TLS: judged at the first byte, closed without a byte relayed.
    assert_eq!(exchange(addr, b"GET / HTTP/1.0\r\n\r\n"), b"");
    // Silent past the inspect delay (300ms): closed once it expires, not before.
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let waited = started.elapsed();
    assert!(out.is_empty());
    assert!(
        waited >= Duration::from_millis(250),
        "closed after {waited:?}"
    );
    assert!(waited < WAIT, "closed after {waited:?}");
    let counters = tern.stop();
    assert_eq!(counters.get("frontend sni", "denied"), 2);
    assert_eq!(counters.get("backend a", "tcp_sessions"), 1);
    assert_eq!(counters.get("backend c", "tcp_sessions"), 0);
}

#[test]
fn a_converted_haproxy_passthrough_config_runs() {
    let o = origins("sni-haproxy");
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
         frontend tls\n  bind 127.0.0.1:0\n  tcp-request inspect-delay 5s\n\
         tcp-request content accept if {{ req_ssl_hello_type 1 }}\n  tcp-request content reject\n\
         use_backend a if {{ req.ssl_sni -i a.example }}\n\
         use_backend b if {{ req_ssl_sni -m end .b.example }}\n  default_backend c\n\
         backend a\n  server a1 {}\nbackend b\n  server b1 {}\nbackend c\n  server c1 {}\n",
        o.a.0.addr, o.b.0.addr, o.c.0.addr
    );
    let dir = temp_dir("sni-haproxy-cfg");
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg).unwrap();
    let converted = tern_finish(&["convert", path.to_str().unwrap()], WAIT);
    assert_eq!(converted.code, Some(0), "{converted:?}");
    let tern = Tern::run(&converted.stdout);
    let addr = tern.addr();
    assert!(seen_by_client(addr, "a.example") == o.a.1, "a.example");
    assert!(seen_by_client(addr, "x.b.example") == o.b.1, "x.b.example");
    assert!(seen_by_client(addr, "c.example") == o.c.1, "default");
    assert_eq!(exchange(addr, b"not tls"), b"");
    let counters = tern.stop();
    assert_eq!(counters.get("frontend tls", "denied"), 1);
}

/// The origin (`x-term-server`) that answered `curl -k https://NAME:PORT/` with NAME resolved to
/// tern's address.
fn curl_origin(addr: SocketAddr, name: &str) -> String {
    let port = addr.port();
    let out = std::process::Command::new("curl")
        .args(["-sk", "-o", "/dev/null", "-D", "-", "--max-time", "10"])
        .arg("--resolve")
        .arg(format!("{name}:{port}:127.0.0.1"))
        .arg(format!("https://{name}:{port}/"))
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&out.stdout).to_ascii_lowercase();
    head.lines()
        .find_map(|l| l.strip_prefix("x-term-server:"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| panic!("no answer for {name}: {head:?}"))
}

#[test]
fn curl_reaches_the_origin_of_the_name_it_asks_for() {
    if !have("curl") {
        eprintln!("skipped: curl is not installed");
        return;
    }
    let o = origins("sni-curl");
    let tern = Tern::run(&passthrough("", o.a.0.addr, o.b.0.addr, o.c.0.addr));
    let addr = tern.addr();
    assert_eq!(curl_origin(addr, "a.example"), "a");
    assert_eq!(curl_origin(addr, "www.b.example"), "b");
    assert_eq!(curl_origin(addr, "unknown.example"), "c");
    tern.stop();
}
