//! WebSocket to HTTP/2 servers (`proto = "h2"`): RFC 8441 extended CONNECT on the server's
//! stream, through the real binary.
//!
//! The chain: a WebSocket client → tern → **HAProxy 2.6** (Debian's `haproxy`, `bind ... proto
//! h2`: an h2c server that announces `SETTINGS_ENABLE_CONNECT_PROTOCOL` and takes WebSockets
//! as extended CONNECT) → the `websockets` echo server of the other WebSocket tests. Clients:
//! Python's `websockets` over HTTP/1.1 (`ws://` and `wss://`, tests/clients/ws_client.py) and
//! the HTTP/2 client of the RFC 8441 tests (tests/clients/ws_h2_client.py, over h2c and TLS):
//! echo of text, binary and a large message (4 MiB and 1 MiB), ping/pong, a close code from each
//! side; then with raw sockets, the `Sec-WebSocket-Accept` tern computes, a half-close passed
//! on as END_STREAM, a client's reset passed on as RST_STREAM, and the tunnel timeout. HAProxy
//! ends a stream in order when its own server aborts, so a server's RST_STREAM comes from
//! tests/clients/h2_reset_server.py (Python's h2) in its WebSocket mode. A server that does not
//! announce extended CONNECT (`nghttpd`, Debian's nghttp2-server) gets no WebSocket: the client
//! gets a `502`, as HAProxy 2.6 answers, and nothing is retried.
//!
//! `.ci/run` installs haproxy, nghttp2-server and the Python packages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::others::{free_port, Other};
use support::ws::{client_script, json_log_lines, run_client, EchoServer};
use support::*;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// How long any step may take.
const WAIT: Duration = Duration::from_secs(10);

/// A WebSocket opening with RFC 6455's sample key.
const UPGRADE: &[u8] = b"GET /echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
    Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    Sec-WebSocket-Version: 13\r\n\r\n";

/// The accept value that answers the sample key (RFC 6455 §1.3).
const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

/// HAProxy as an h2c server in front of `echo`, with an HTTP log on its stdout.
struct H2Server {
    haproxy: Other,
    addr: SocketAddr,
}

impl H2Server {
    fn start(dir: &Path, echo: SocketAddr) -> H2Server {
        let port = free_port();
        let cfg = format!(
            "defaults\n  mode http\n  log stdout format raw local0\n  option httplog\n\
             \n  timeout connect 5s\n  timeout client 1m\n  timeout server 1m\n  timeout tunnel 1m\n\
             frontend h2\n  bind 127.0.0.1:{port} proto h2\n  log global\n  default_backend ws\n\
             backend ws\n  server echo {echo}\n"
        );
        let haproxy = Other::haproxy(dir, &cfg, &[port]);
        H2Server {
            haproxy,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    /// Waits for HAProxy's log lines of `n` WebSockets it took over HTTP/2 (status 101); the log.
    fn wait_websockets(&self, n: usize) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let log = self.haproxy.log_text();
            let seen = log
                .lines()
                .filter(|l| l.contains(" 101 ") && l.contains("HTTP/2.0\""))
                .count();
            if seen >= n {
                return log;
            }
            assert!(Instant::now() < deadline, "{n} WebSockets not in: {log}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Everything of one chain: the echo server, HAProxy, tern and its access log.
struct Chain {
    echo: EchoServer,
    h2: H2Server,
    tern: Tern,
    log: PathBuf,
}

/// How clients reach tern.
#[derive(Clone, Copy, PartialEq)]
enum Bind {
    /// HTTP/1.1.
    Plain,
    /// HTTP/2 with prior knowledge.
    H2c,
    /// TLS, ALPN h2 and http/1.1.
    Tls,
}

/// The chain, tern's frontend and backend given extra lines.
fn chain(bind: Bind, frontend: &[&str], backend: &[&str]) -> Chain {
    let echo = EchoServer::start();
    let dir = temp_dir("ws-h2-servers");
    let h2 = H2Server::start(&dir, echo.addr);
    let server = format!(
        "{{ name = \"h2\", address = \"{}\", proto = \"h2\" }}",
        h2.addr
    );
    let mut cfg = Config::new()
        .raw_server(&server)
        .with_lines(frontend, backend);
    cfg = match bind {
        Bind::Tls => {
            let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
            cfg.frontend(&format!(
                "tls = {{ certs = [{cert:?}], alpn = [\"h2\", \"http/1.1\"] }}"
            ))
        }
        Bind::H2c => cfg.frontend("http2 = { cleartext = true }"),
        Bind::Plain => cfg,
    };
    let log = dir.join("access.log");
    let toml = format!(
        "{}\n[access_log]\ntarget = {:?}\nformat = \"json\"\n",
        cfg.toml(),
        log.to_str().unwrap()
    );
    let tern = Tern::run_in(dir, &toml);
    Chain {
        echo,
        h2,
        tern,
        log,
    }
}

/// After a client's echo scenario (two WebSockets): the closes reached the server, HAProxy
/// took both over HTTP/2, and tern counted and logged two tunnels on one server connection.
fn check_echo(c: Chain, version: &str, large: u64) {
    assert_eq!(c.echo.closed_line(), "closed 1000 client done");
    assert_eq!(c.echo.closed_line(), "closed 4001 server says bye");
    c.h2.wait_websockets(2);
    let counters = c.tern.stop_clean();
    assert_eq!(counters.get("frontend web", "tunnels"), 2);
    assert_eq!(counters.get("frontend web", "resp_1xx"), 2);
    assert_eq!(counters.get("frontend web", "client_aborts"), 0);
    assert_eq!(counters.get("backend app", "upstream_errors"), 0);
    for section in ["frontend web", "backend app", "server app/h2"] {
        assert!(counters.get(section, "bytes_in") > large, "{section}");
        assert!(counters.get(section, "bytes_out") > large, "{section}");
    }
    // Both WebSockets were streams of one HTTP/2 connection.
    assert_eq!(counters.get("server app/h2", "connects"), 1);
    let lines = json_log_lines(&c.log);
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in &lines {
        assert_eq!(l["version"], version, "{l}");
        assert_eq!(l["status"], 101, "{l}");
        assert_eq!(l["termination"], "--", "{l}");
        assert_eq!(l["server"], "h2", "{l}");
    }
}

#[test]
fn a_websocket_over_http1_reaches_an_h2_server_as_extended_connect() {
    let c = chain(Bind::Plain, &[], &[]);
    let url = format!("ws://{}/echo", c.tern.addr());
    let lines = run_client("ws_client.py", &[&url]);
    assert_eq!(lines.iter().filter(|l| l.starts_with("ok ")).count(), 6);
    check_echo(c, "HTTP/1.1", 4 << 20);
}

#[test]
fn a_websocket_over_wss_reaches_an_h2_server_as_extended_connect() {
    let c = chain(Bind::Tls, &[], &[]);
    let ca = c.tern.dir.join("site.crt");
    let url = format!("wss://{}/echo", c.tern.addr());
    let lines = run_client("ws_client.py", &[&url, ca.to_str().unwrap()]);
    assert_eq!(lines.iter().filter(|l| l.starts_with("ok ")).count(), 6);
    check_echo(c, "HTTP/1.1", 4 << 20);
}

/// The RFC 8441 client's echo scenario over `mode` ("h2c" or "h2").
fn h2_client_echo(bind: Bind, mode: &str) {
    let c = chain(bind, &[], &[]);
    let port = c.tern.addr().port().to_string();
    let lines = run_client(
        "ws_h2_client.py",
        &[mode, "127.0.0.1", &port, "echo", "/echo", "websocket"],
    );
    assert_eq!(lines[0], "settings enable_connect_protocol 1");
    assert_eq!(
        lines[1..],
        [
            "ok text echo",
            "ok binary echo",
            "ok 1 MiB echo",
            "ok ping pong",
            "ok client close",
            "ok server close 4001",
        ]
    );
    check_echo(c, "HTTP/2.0", 1 << 20);
}

#[test]
fn a_websocket_over_h2c_reaches_an_h2_server_as_extended_connect() {
    h2_client_echo(Bind::H2c, "h2c");
}

#[test]
fn a_websocket_over_h2_with_tls_reaches_an_h2_server_as_extended_connect() {
    h2_client_echo(Bind::Tls, "h2");
}

/// The RFC 8441 client's `scenario` on `/echo` through `c`, over h2c; its lines.
fn h2c_client(c: &Chain, scenario: &str) -> Vec<String> {
    let port = c.tern.addr().port().to_string();
    run_client(
        "ws_h2_client.py",
        &["h2c", "127.0.0.1", &port, scenario, "/echo", "websocket"],
    )
}

/// Opens a WebSocket through `c` with a raw socket; the socket once the `101` was read, after
/// checking the accept value tern computed for the sample key.
fn open_raw(c: &Chain) -> TcpStream {
    let mut s = TcpStream::connect(c.tern.addr()).unwrap();
    s.write_all(UPGRADE).unwrap();
    let (got, found) = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
    let head = String::from_utf8_lossy(&got).to_ascii_lowercase();
    assert!(found, "{head}");
    assert!(head.starts_with("http/1.1 101 "), "{head}");
    assert!(head.contains("upgrade: websocket\r\n"), "{head}");
    let accept = format!("sec-websocket-accept: {}\r\n", ACCEPT.to_ascii_lowercase());
    assert!(head.contains(&accept), "{head}");
    s
}

/// A masked client frame (RFC 6455 §5.2): FIN, `opcode`, a payload under 126 bytes.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [0x12, 0x34, 0x56, 0x78];
    let mut f = vec![0x80 | opcode, 0x80 | payload.len() as u8];
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    f
}

#[test]
fn a_half_close_goes_as_end_stream_and_comes_back() {
    // Long timeouts: only the half-close can end the tunnel within the wait.
    let c = chain(
        Bind::Plain,
        &["timeouts = { client = \"1m\" }"],
        &["timeouts = { server = \"1m\", tunnel = \"1m\" }"],
    );
    let mut s = open_raw(&c);
    s.write_all(&frame(1, b"hi")).unwrap();
    let mut echo = [0u8; 4];
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.read_exact(&mut echo).unwrap();
    assert_eq!(echo, [0x81, 2, b'h', b'i']);
    // The client finishes: END_STREAM to HAProxy, a FIN to the echo server, which closes (no
    // close frame came: 1006); its end comes back the same way as an orderly end of stream.
    s.shutdown(Shutdown::Write).unwrap();
    let rest = read_until_closed(&mut s, WAIT);
    assert!(rest.closed, "the tunnel did not end");
    assert_eq!(c.echo.closed_line(), "closed 1006 ");
    let counters = c.tern.stop_clean();
    assert_eq!(counters.get("frontend web", "tunnels"), 1);
    assert_eq!(counters.get("frontend web", "client_aborts"), 0);
    let lines = json_log_lines(&c.log);
    assert_eq!(lines[0]["termination"], "--", "{lines:?}");
}

/// tests/clients/h2_reset_server.py in its WebSocket mode (Python's h2): it accepts an extended
/// CONNECT, sends 1000 bytes, then resets the stream (CANCEL). Killed on drop.
struct ResetServer(std::process::Child, SocketAddr);

impl ResetServer {
    fn start() -> ResetServer {
        let mut child = Command::new("python3")
            .args([&client_script("h2_reset_server.py"), "websocket"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs (with `h2`: .ci/run installs it)");
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
        let port: u16 = line.trim().strip_prefix("port ").unwrap().parse().unwrap();
        ResetServer(child, SocketAddr::from(([127, 0, 0, 1], port)))
    }
}

impl Drop for ResetServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_server_reset_reaches_the_client_as_a_reset() {
    // HAProxy ends the stream in order when its own server aborts, so the reset comes from a
    // server that sends one.
    let server = ResetServer::start();
    let item = format!(
        "{{ name = \"h2\", address = \"{}\", proto = \"h2\" }}",
        server.1
    );
    let tern = Tern::run(&Config::new().raw_server(&item).toml());
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(UPGRADE).unwrap();
    // The 101 (no accept value to check: this server is no WebSocket server), the 1000 bytes,
    // then the reset.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    s.set_read_timeout(Some(WAIT)).unwrap();
    let end = loop {
        match s.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => break Some(e.kind()),
        }
    };
    let text = String::from_utf8_lossy(&got).into_owned();
    assert!(text.starts_with("HTTP/1.1 101 "), "{text}");
    assert!(text.ends_with(&"x".repeat(1000)), "{text}");
    assert_eq!(end, Some(ErrorKind::ConnectionReset), "{text}");
    let counters = tern.stop_clean();
    assert_eq!(counters.get("frontend web", "tunnels"), 1);
}

#[test]
fn a_client_reset_reaches_the_h2_server_as_a_reset() {
    let c = chain(Bind::H2c, &[], &[]);
    // The client resets its stream: the server's connection is aborted, and another stream of
    // the same client connection still works.
    let lines = h2c_client(&c, "reset");
    assert_eq!(
        lines[1..],
        ["ok echo before the reset", "ok echo on a new stream"]
    );
    assert_eq!(c.echo.closed_line(), "closed 1006 ");
    assert_eq!(c.echo.closed_line(), "closed 1006 ");
    let counters = c.tern.stop_clean();
    assert_eq!(counters.get("frontend web", "tunnels"), 2);
}

/// The chain with a 500 ms tunnel timeout; the client and server timeouts, and HAProxy's, are
/// long: only `tunnel` can end an idle WebSocket.
fn idle_chain(bind: Bind) -> Chain {
    chain(
        bind,
        &["timeouts = { client = \"1m\" }"],
        &["timeouts = { server = \"1m\", tunnel = \"500ms\" }"],
    )
}

#[test]
fn an_idle_websocket_to_an_h2_server_ends_after_the_tunnel_timeout() {
    let c = idle_chain(Bind::Plain);
    let mut s = open_raw(&c);
    let opened = Instant::now();
    let rest = read_until_closed(&mut s, WAIT);
    let took = opened.elapsed();
    assert!(rest.closed && rest.bytes.is_empty(), "{:?}", rest.bytes);
    // tern's timer started as it passed the 101 on, a moment before this client read it.
    assert!(
        (Duration::from_millis(450)..Duration::from_secs(5)).contains(&took),
        "{took:?}"
    );
    // The stream was reset (CANCEL): HAProxy aborted the server's connection.
    assert_eq!(c.echo.closed_line(), "closed 1006 ");
    c.tern.stop_clean();
}

#[test]
fn an_idle_websocket_stream_to_an_h2_server_ends_after_the_tunnel_timeout() {
    let c = idle_chain(Bind::H2c);
    // The client's stream is reset with CANCEL.
    let lines = h2c_client(&c, "idle");
    let (how, took) = lines[1].split_once(" after ").unwrap();
    assert_eq!(how, "reset 8", "{lines:?}");
    let ms: u64 = took.trim_end_matches(" ms").parse().unwrap();
    assert!((500..5000).contains(&ms), "{ms} ms");
    assert_eq!(c.echo.closed_line(), "closed 1006 ");
    c.tern.stop_clean();
}

/// tern in `dir` with one server, nghttpd at `port`, and a JSON access log; its path.
fn tern_to_nghttpd(dir: &Path, port: u16, frontend: &[&str]) -> (Tern, PathBuf) {
    let server = format!("{{ name = \"h2\", address = \"127.0.0.1:{port}\", proto = \"h2\" }}");
    let log = dir.join(format!("access-{}.log", frontend.len()));
    let toml = format!(
        "{}\n[access_log]\ntarget = {:?}\nformat = \"json\"\n",
        Config::new()
            .raw_server(&server)
            .with_lines(frontend, &[])
            .toml(),
        log.to_str().unwrap()
    );
    (Tern::run_in(temp_dir("ws-h2-tern"), &toml), log)
}

#[test]
fn a_server_without_extended_connect_gets_no_websocket_and_the_client_a_502() {
    // nghttpd announces no SETTINGS_ENABLE_CONNECT_PROTOCOL.
    let dir = temp_dir("ws-h2-nghttpd");
    std::fs::write(dir.join("index.html"), "plain\n").unwrap();
    let port = free_port();
    let _nghttpd = Other::start(
        &dir,
        "nghttpd",
        &["--no-tls", "-d", dir.to_str().unwrap(), &port.to_string()],
        &[port],
    );
    // Over HTTP/1.1, on a new connection (tern waits for the server's settings) and again on
    // the same one.
    let (tern, log) = tern_to_nghttpd(&dir, port, &[]);
    for _ in 0..2 {
        let raw = raw_exchange(tern.addr(), UPGRADE, WAIT);
        let head = String::from_utf8_lossy(&raw.bytes).into_owned();
        assert!(head.starts_with("HTTP/1.1 502 "), "{head}");
    }
    // The server itself is fine: an ordinary request on the same connection, and one with
    // curl's `--http2` offer of h2c, which is no WebSocket and goes as a plain request.
    for head in [
        &b"GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"GET /index.html HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\n\
          Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n",
    ] {
        let mut s = TcpStream::connect(tern.addr()).unwrap();
        s.write_all(head).unwrap();
        let raw = read_response(&mut s, WAIT);
        let text = raw.head_text();
        assert!(text.starts_with("HTTP/1.1 200 "), "{text}");
        assert_eq!(raw.body_bytes(), b"plain\n", "{text}");
    }
    let counters = tern.stop_clean();
    // Not retried on new connections: one connection for the four requests.
    assert_eq!(counters.get("server app/h2", "connects"), 1);
    assert_eq!(counters.get("backend app", "upstream_errors"), 2);
    assert_eq!(counters.get("frontend web", "tunnels"), 0);
    let lines = json_log_lines(&log);
    assert_eq!(lines.len(), 4, "{lines:?}");
    for l in &lines[..2] {
        assert_eq!(l["status"], 502, "{l}");
        assert_eq!(l["termination"], "SH", "{l}");
    }

    // Over HTTP/2: a 502 on the stream.
    let (tern, _) = tern_to_nghttpd(&dir, port, &["http2 = { cleartext = true }"]);
    let port = tern.addr().port().to_string();
    let lines = run_client(
        "ws_h2_client.py",
        &["h2c", "127.0.0.1", &port, "answer", "/", "websocket"],
    );
    assert_eq!(lines[1], "status 502", "{lines:?}");
    let counters = tern.stop_clean();
    assert_eq!(counters.get("server app/h2", "connects"), 1);
    assert_eq!(counters.get("backend app", "upstream_errors"), 1);
}
