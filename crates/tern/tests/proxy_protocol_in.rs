//! PROXY protocol received on binds (`accept_proxy`, HAProxy's `accept-proxy`) through the real
//! binary: the carried client address in X-Forwarded-For, the access log, `src` and `dst_port`
//! routing and the PROXY header tern sends on; HTTP/1.1, HTTP/2 (h2c, and over TLS handshaken
//! on the offload thread) and TCP mode; real senders (`curl --haproxy-protocol`, Debian's
//! HAProxy with `send-proxy` and `send-proxy-v2`); and what is refused: garbage, a truncated
//! header, a v2 with a bad length, a header late past the timeout — each closed, counted in
//! `proxy_errors`, never reaching a server; and `accept_proxy_from`, the header required from
//! trusted senders only. (A reader that took bytes past the header, eating
//! the request, was tried on purpose: three of these tests failed.)
//!
//! Backends are `tern term`: `?h=1` answers with the request head it received, and
//! `--accept-proxy` echoes the PROXY header tern sent (`x-proxy-src`, `x-proxy-dst`).

#![allow(clippy::unwrap_used)]

mod support;
use support::others::{free_port, Other};
use support::*;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest wait for anything in these tests.
const WAIT: Duration = Duration::from_secs(10);

/// A request for `term`'s dump of the request head.
const DUMP: &[u8] = b"GET /?h=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// Sends `bytes` on a new connection to `addr` and reads until tern closes it.
fn exchange(addr: SocketAddr, bytes: &[u8]) -> Raw {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(bytes).unwrap();
    read_until_closed(&mut s, WAIT)
}

fn bind(extra: &str) -> String {
    format!("{{ address = \"127.0.0.1:0\", accept_proxy = true{extra} }}")
}

#[test]
fn the_carried_address_is_the_client_in_headers_log_routing_and_onward_header() {
    let office = Term::start_with("office", &["--accept-proxy"]);
    let app = Term::start("app");
    let toml = format!(
        "[[frontend]]\nname = \"web\"\nbind = [{}]\ndefault_backend = \"app\"\n\
         use_backend = [{{ backend = \"office\", if = \"{{ src 203.0.113.0/24 }} {{ dst_port 8443 }}\" }}]\n\n\
         [[backend]]\nname = \"office\"\nservers = [{{ name = \"o\", address = \"{}\", proxy_protocol = \"v2\" }}]\n\n\
         [[backend]]\nname = \"app\"\nservers = [{{ name = \"a\", address = \"{}\" }}]\n\n\
         [access_log]\ntarget = \"access.log\"\n",
        bind(""),
        office.addr,
        app.addr
    );
    let tern = Tern::run(&toml);
    let log = tern.dir.join("access.log");

    // v1 from the office network to port 8443: routed to `office`, which gets the client's
    // addresses in the PROXY header tern sends on.
    let mut req = b"PROXY TCP4 203.0.113.9 198.51.100.1 4567 8443\r\n".to_vec();
    req.extend_from_slice(DUMP);
    let got = exchange(tern.addr(), &req);
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(
        got.dumped("x-forwarded-for").as_deref(),
        Some("203.0.113.9")
    );
    assert_eq!(
        got.head_value("x-proxy-src").as_deref(),
        Some("203.0.113.9:4567")
    );
    assert_eq!(
        got.head_value("x-proxy-dst").as_deref(),
        Some("198.51.100.1:8443")
    );

    // v2 (IPv6, with TLVs) from elsewhere: `app`.
    let mut v2 = b"\r\n\r\n\0\r\nQUIT\n\x21\x21".to_vec();
    let mut body = vec![0u8; 36];
    body[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    body[15] = 7;
    body[31] = 1;
    body[32..34].copy_from_slice(&1234u16.to_be_bytes());
    body[34..36].copy_from_slice(&8443u16.to_be_bytes());
    body.extend_from_slice(&[0x01, 0, 2, b'h', b'2', 0x04, 0, 1, 0]);
    v2.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    v2.extend_from_slice(&body);
    v2.extend_from_slice(DUMP);
    let got = exchange(tern.addr(), &v2);
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(
        got.dumped("x-forwarded-for").as_deref(),
        Some("2001:db8::7")
    );
    assert_eq!(got.head_value("x-proxy-src"), None, "went to app");

    // LOCAL (a health check of the proxy in front): the connection's own address.
    let mut local = b"\r\n\r\n\0\r\nQUIT\n\x20\x00\x00\x00".to_vec();
    local.extend_from_slice(DUMP);
    let got = exchange(tern.addr(), &local);
    assert_eq!(got.dumped("x-forwarded-for").as_deref(), Some("127.0.0.1"));

    let lines = wait_log_lines(&log, 3, WAIT);
    assert!(lines[0].starts_with("203.0.113.9:4567 ["), "{lines:?}");
    assert!(lines[0].contains(" web office/o "), "{lines:?}");
    assert!(lines[1].starts_with("[2001:db8::7]:1234 ["), "{lines:?}");
    assert!(lines[2].starts_with("127.0.0.1:"), "{lines:?}");
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "proxy_errors"), 0);
}

/// A backend that counts the connections it accepts and closes them.
fn counting_backend() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&seen);
    std::thread::spawn(move || {
        for conn in listener.incoming().map_while(Result::ok) {
            count.fetch_add(1, Ordering::SeqCst);
            drop(conn);
        }
    });
    (addr, seen)
}

#[test]
fn bad_headers_close_the_connection_count_and_reach_no_server() {
    let (backend, seen) = counting_backend();
    for mode in ["http", "tcp"] {
        let toml = format!(
            "[[frontend]]\nname = \"web\"\nmode = \"{mode}\"\nbind = [{}]\ndefault_backend = \"app\"\n\
             timeouts = {{ handshake = \"300ms\" }}\n\n\
             [[backend]]\nname = \"app\"\nmode = \"{mode}\"\nservers = [{{ name = \"a\", address = \"{backend}\" }}]\n",
            bind("")
        );
        let tern = Tern::run(&toml);
        let cases: [&[u8]; 5] = [
            // An HTTP request in place of the header.
            DUMP,
            // Garbage.
            b"\x16\x03\x01\x00\xff garbage that is no header",
            // v1 with a bad port, then a request.
            b"PROXY TCP4 1.2.3.4 5.6.7.8 070000 80\r\nGET / HTTP/1.1\r\n\r\n",
            // v2 whose length is shorter than its IPv4 addresses.
            b"\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x04\x01\x02\x03\x04GET / HTTP/1.1\r\n\r\n",
            // A truncated header: the client closes its side.
            b"PROXY TCP4 1.2.3.4 5.6.7.8",
        ];
        for case in cases {
            let mut s = TcpStream::connect(tern.addr()).unwrap();
            s.write_all(case).unwrap();
            // tern may have closed (and reset) already: then there is nothing to shut down.
            let _ = s.shutdown(std::net::Shutdown::Write);
            let got = read_until_closed(&mut s, WAIT);
            assert!(got.bytes.is_empty(), "{mode}: answered {:?}", got.text());
        }
        // A header that never ends: closed after the handshake timeout.
        let mut slow = TcpStream::connect(tern.addr()).unwrap();
        slow.write_all(b"PROXY TCP4 ").unwrap();
        let start = Instant::now();
        let mut byte = [0u8; 1];
        slow.set_read_timeout(Some(WAIT)).unwrap();
        assert_eq!(slow.read(&mut byte).unwrap_or(0), 0, "{mode}");
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(250) && waited < WAIT,
            "{mode}: {waited:?}"
        );
        let c = tern.stop();
        assert_eq!(
            c.get("frontend web", "proxy_errors"),
            6,
            "{mode}: {:?}",
            c.0
        );
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0, "a server saw a connection");
}

#[test]
fn tcp_mode_relays_after_the_header_and_sends_the_carried_address_on() {
    let term = Term::start_with("t", &["--accept-proxy"]);
    let toml = format!(
        "[[frontend]]\nname = \"web\"\nmode = \"tcp\"\nbind = [{}]\ndefault_backend = \"app\"\n\
         use_backend = [{{ backend = \"other\", if = \"!{{ src 203.0.113.9 }}\" }}]\n\n\
         [[backend]]\nname = \"app\"\nmode = \"tcp\"\nbalance = \"source\"\n\
         servers = [{{ name = \"t\", address = \"{}\", proxy_protocol = \"v1\" }}]\n\n\
         [[backend]]\nname = \"other\"\nmode = \"tcp\"\nservers = [{{ name = \"none\", address = \"127.0.0.1:1\" }}]\n",
        bind(""),
        term.addr
    );
    let tern = Tern::run(&toml);
    let mut req = b"PROXY TCP4 203.0.113.9 198.51.100.1 4567 443\r\n".to_vec();
    req.extend_from_slice(DUMP);
    let got = exchange(tern.addr(), &req);
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(
        got.head_value("x-proxy-src").as_deref(),
        Some("203.0.113.9:4567")
    );
    assert_eq!(
        got.head_value("x-proxy-dst").as_deref(),
        Some("198.51.100.1:443")
    );
    // The bytes after the header reached the server untouched: no X-Forwarded-For in TCP mode.
    assert_eq!(got.dumped("x-forwarded-for"), None);
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "tcp_sessions"), 1);
    assert_eq!(c.get("frontend web", "proxy_errors"), 0);
}

#[test]
fn curl_haproxy_protocol_is_accepted() {
    if !have("curl") {
        eprintln!("skipped: curl is not installed");
        return;
    }
    let term = Term::start("t");
    let tern = Tern::run(&Config::new().terms(&[&term]).binds(&[&bind("")]).toml());
    let url = format!("http://{}/?h=1", tern.addr());
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "--haproxy-protocol", &url])
        .output()
        .unwrap();
    let body = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{body} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        body.to_ascii_lowercase()
            .contains("x-forwarded-for: 127.0.0.1"),
        "{body}"
    );
    // Without the header, curl's request is garbage to this bind.
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", &url])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "requests"), 1);
    assert_eq!(c.get("frontend web", "proxy_errors"), 1);
}

#[test]
fn haproxy_send_proxy_and_send_proxy_v2_in_front_over_h1_h2_and_tls() {
    if !have("haproxy") || !have("curl") {
        eprintln!("skipped: haproxy or curl is not installed");
        return;
    }
    let term = Term::start("t");
    let dir = temp_dir("pp-in-haproxy");
    let cert = write_cert(&dir, "c", tern_tls::KeyKind::EcdsaP256);
    let toml = format!(
        "[global]\nhandshake_offload = true\n\n[[frontend]]\nname = \"web\"\n\
         bind = [{}, {}]\ndefault_backend = \"app\"\n\
         tls = {{ certs = [\"{cert}\"] }}\n\n\
         [[frontend]]\nname = \"h2c\"\nbind = [{}]\ndefault_backend = \"app\"\n\
         http2 = {{ cleartext = true }}\n\n\
         [[backend]]\nname = \"app\"\nservers = [{{ name = \"t\", address = \"{}\" }}]\n\n\
         [access_log]\ntarget = \"access.log\"\n",
        bind(", tls = false"),
        bind(""),
        bind(""),
        term.addr
    );
    let tern = Tern::run_in(dir.clone(), &toml);
    let (plain, tls, h2c) = (tern.binds[0].1, tern.binds[1].1, tern.binds[2].1);
    assert!(tern.is_tls(1));
    let (p1, p2, p3, p4) = (free_port(), free_port(), free_port(), free_port());
    let cfg = format!(
        "global\n  nbthread 1\ndefaults\n  mode tcp\n  timeout client 10s\n  timeout server 10s\n  \
         timeout connect 2s\n\
         listen v1\n  bind 127.0.0.1:{p1}\n  server t {plain} send-proxy\n\
         listen v2h2\n  bind 127.0.0.1:{p2}\n  server t {tls} send-proxy-v2 ssl verify none alpn h2\n\
         listen v2h1\n  bind 127.0.0.1:{p3}\n  server t {tls} send-proxy-v2 ssl verify none alpn http/1.1\n\
         listen v2h2c\n  bind 127.0.0.1:{p4}\n  server t {h2c} send-proxy-v2\n"
    );
    let _haproxy = Other::haproxy(&dir, &cfg, &[p1, p2, p3, p4]);
    // The client connects to HAProxy from 127.0.0.3; HAProxy connects to tern from 127.0.0.1.
    let curl = |port: u16, extra: &[&str]| {
        let url = format!("http://127.0.0.1:{port}/?h=1");
        let mut args = vec!["-sS", "--max-time", "10", "--interface", "127.0.0.3"];
        args.extend_from_slice(extra);
        args.push(&url);
        let out = Command::new("curl").args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_ascii_lowercase()
    };
    // v1, HTTP/1.1 on the plain bind.
    assert!(curl(p1, &[]).contains("x-forwarded-for: 127.0.0.3"));
    // v2 then TLS (handshaken on the offload thread), HTTP/2 then HTTP/1.1 by ALPN.
    assert!(curl(p2, &["--http2-prior-knowledge"]).contains("x-forwarded-for: 127.0.0.3"));
    assert!(curl(p3, &[]).contains("x-forwarded-for: 127.0.0.3"));
    // v2 then h2c with prior knowledge on a plain bind.
    assert!(curl(p4, &["--http2-prior-knowledge"]).contains("x-forwarded-for: 127.0.0.3"));
    let lines = wait_log_lines(&dir.join("access.log"), 4, WAIT);
    for line in &lines {
        assert!(line.starts_with("127.0.0.3:"), "{lines:?}");
    }
    let c = tern.stop();
    // The readiness probes above reach tern through HAProxy too: count streams, not sessions.
    assert_eq!(c.get("frontend web", "h2_streams"), 1, "{:?}", c.0);
    assert_eq!(c.get("frontend h2c", "h2_streams"), 1, "{:?}", c.0);
    assert_eq!(c.get("frontend web", "proxy_errors"), 0);
    assert_eq!(c.get("frontend h2c", "proxy_errors"), 0);
}

/// `balance = "source"` hashes the carried address: connections that all come from 127.0.0.1
/// but carry different sources spread over both servers, and one source keeps its server.
#[test]
fn source_hashing_in_tcp_mode_keys_on_the_carried_address() {
    let (one, two) = (Term::start("one"), Term::start("two"));
    let toml = format!(
        "[[frontend]]\nname = \"web\"\nmode = \"tcp\"\nbind = [{}]\ndefault_backend = \"app\"\n\n\
         [[backend]]\nname = \"app\"\nmode = \"tcp\"\nbalance = \"source\"\n\
         servers = [{{ name = \"one\", address = \"{}\" }}, {{ name = \"two\", address = \"{}\" }}]\n",
        bind(""),
        one.addr,
        two.addr
    );
    let tern = Tern::run(&toml);
    let server_for = |source: u8| {
        let mut req = format!("PROXY TCP4 198.51.100.{source} 10.0.0.1 4000 443\r\n").into_bytes();
        req.extend_from_slice(DUMP);
        let got = exchange(tern.addr(), &req);
        got.head_value("x-term-server").unwrap()
    };
    let chosen: Vec<String> = (1..=16).map(server_for).collect();
    assert!(
        chosen.iter().any(|s| s == "one") && chosen.iter().any(|s| s == "two"),
        "{chosen:?}"
    );
    for (i, server) in chosen.iter().enumerate().take(4) {
        let source = u8::try_from(i + 1).unwrap();
        assert_eq!(&server_for(source), server, "source {source} moved");
    }
    tern.stop();
}

/// A connection to `to` from the loopback address `source`.
fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let from: SocketAddr = format!("{source}:0").parse().unwrap();
    socket.bind(&from.into()).unwrap();
    socket.connect(&to.into()).unwrap();
    socket.into()
}

/// `accept_proxy_from` (HAProxy's `tcp-request connection expect-proxy layer4 if { src ... }`):
/// the header is required from the listed sources and not read from the others, so a direct
/// client cannot choose its address by sending one.
#[test]
fn accept_proxy_from_requires_the_header_from_listed_sources_only() {
    let app = Term::start("app");
    let toml = format!(
        "[[frontend]]\nname = \"web\"\nbind = [\"127.0.0.1:0\"]\naccept_proxy_from = [\"127.0.0.2\"]\n\
         default_backend = \"app\"\ntimeouts = {{ handshake = \"300ms\" }}\n\n\
         [[backend]]\nname = \"app\"\nservers = [{{ name = \"a\", address = \"{}\" }}]\n",
        app.addr
    );
    let tern = Tern::run(&toml);
    let header = b"PROXY TCP4 203.0.113.9 198.51.100.1 4567 443\r\n";
    let send = |source: &str, bytes: &[u8]| {
        let mut s = connect_from(source, tern.addr());
        s.write_all(bytes).unwrap();
        read_until_closed(&mut s, WAIT)
    };
    // The trusted sender: its header gives the client.
    let got = send("127.0.0.2", &[&header[..], DUMP].concat());
    assert_eq!(
        got.dumped("x-forwarded-for").as_deref(),
        Some("203.0.113.9"),
        "{}",
        got.text()
    );
    // Anyone else: served as it comes, with its own address.
    let got = send("127.0.0.1", DUMP);
    assert_eq!(got.dumped("x-forwarded-for").as_deref(), Some("127.0.0.1"));
    // Anyone else sending a header: it is no header here, but a bad request line.
    let got = send("127.0.0.1", &[&header[..], DUMP].concat());
    assert_eq!(got.status(), Some(400), "{}", got.text());
    // The trusted sender without a header: closed, counted.
    let got = send("127.0.0.2", DUMP);
    assert!(got.bytes.is_empty(), "answered {:?}", got.text());
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "proxy_errors"), 1);
    // The two served; the bad request line is not a request.
    assert_eq!(c.get("frontend web", "requests"), 2);
}

#[test]
fn custom_tlvs_in_a_crafted_v2_header_are_read_and_kept() {
    let app = Term::start("app");
    let toml = format!(
        "[[frontend]]\nname = \"web\"\nbind = [{}]\ndefault_backend = \"app\"\n\n\
         [[backend]]\nname = \"app\"\nservers = [{{ name = \"a\", address = \"{}\" }}]\n",
        bind(""),
        app.addr
    );
    let tern = Tern::run_with(temp_dir("pp-custom-tlvs"), &toml, &["--log-level", "debug"]);
    // IPv4 addresses, then custom TLVs 0xE1 and 0xEA and a NOOP.
    let mut body = vec![198, 51, 100, 9, 127, 0, 0, 1, 0x9c, 0x40, 0x1f, 0x90];
    body.extend_from_slice(&[0xE1, 0, 5]);
    body.extend_from_slice(b"acme1");
    body.extend_from_slice(&[0xEA, 0, 2, 0x01, 0x02, 0x04, 0, 1, 0]);
    let mut header = b"\r\n\r\n\0\r\nQUIT\n\x21\x11".to_vec();
    header.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    header.extend_from_slice(&body);
    header.extend_from_slice(DUMP);
    let got = exchange(tern.addr(), &header);
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(
        got.dumped("x-forwarded-for").as_deref(),
        Some("198.51.100.9")
    );
    let log = tern.proc.stderr_text();
    assert!(
        log.lines()
            .any(|l| l.contains("PROXY header received") && l.contains("other_tlvs=[225, 234]")),
        "{log}"
    );
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "proxy_errors"), 0);
}
