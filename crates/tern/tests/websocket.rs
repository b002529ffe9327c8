//! WebSocket (HTTP/1.1 `Upgrade`) through the real binary.
//!
//! With Python's `websockets` library on both sides (tests/clients/ws_echo_server.py as the
//! server, tests/clients/ws_client.py as the client; neither written against tern): echo of text,
//! binary and a 4 MiB message, ping/pong, a close code and reason from each side, over `ws://`
//! and `wss://`. With raw sockets, what a library would hide: bytes sent right behind the request
//! head and with the `101`, a half-close passed on while the other direction goes on, a reset
//! passed on, an upgrade the server declines (the connection stays HTTP), a `101` nobody asked
//! for (502), and the tunnel's inactivity timeout with and without `timeouts.tunnel`.
//!
//! The Python library must be installed (`.ci/run` installs it when missing).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::ws::{client_script, EchoServer};
use support::*;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// How long any step may take.
const WAIT: Duration = Duration::from_secs(10);

/// A WebSocket upgrade request head, as a browser would send it.
const UPGRADE: &[u8] = b"GET /chat HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
    Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    Sec-WebSocket-Version: 13\r\n\r\n";

/// A server's acceptance of it.
const SWITCHED: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
    Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";

/// Runs the Python client's scenario against `url`; panics with its output if a step failed.
fn run_client(url: &str, ca: Option<&str>) {
    let mut cmd = Command::new("python3");
    cmd.arg(client_script("ws_client.py")).arg(url);
    if let Some(ca) = ca {
        cmd.arg(ca);
    }
    let out = cmd.output().expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the WebSocket client failed against {url}:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().filter(|l| l.starts_with("ok ")).count(), 6);
}

/// The client's scenario through `tern` to `server`, and what the server saw of the closes; then
/// the counters, checked for the two tunnels the scenario opens.
fn echo_scenario(tern: Tern, server: &EchoServer, url: &str, ca: Option<&str>) {
    run_client(url, ca);
    // The client's close (code and reason) reached the server, and the server's reached the
    // client (checked by the client).
    assert_eq!(server.closed_line(), "closed 1000 client done");
    assert_eq!(server.closed_line(), "closed 4001 server says bye");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tunnels"), 2);
    assert_eq!(c.get("frontend web", "resp_1xx"), 2);
    assert_eq!(c.get("frontend web", "client_aborts"), 0);
    // The 4 MiB message went both ways, and is counted both ways.
    for section in ["frontend web", "backend app", "server app/ws"] {
        assert!(c.get(section, "bytes_in") > 4 << 20, "{section}");
        assert!(c.get(section, "bytes_out") > 4 << 20, "{section}");
    }
    // A tunnel's server connection is never pooled: the second WebSocket opened its own.
    assert_eq!(c.get("server app/ws", "connects"), 2);
    assert_eq!(c.get("server app/ws", "reused"), 0);
}

#[test]
fn websocket_echo_ping_and_close_codes_over_ws() {
    let server = EchoServer::start();
    let tern = Tern::run(
        &Config::new()
            .server("ws", &server.addr.to_string(), 1)
            .toml(),
    );
    let url = format!("ws://{}/echo", tern.addr());
    echo_scenario(tern, &server, &url, None);
}

#[test]
fn websocket_echo_ping_and_close_codes_over_wss() {
    let server = EchoServer::start();
    let dir = temp_dir("wss");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let ca = dir.join("site.crt");
    let cfg = Config::new()
        .tls(&[&format!("{cert:?}")])
        .server("ws", &server.addr.to_string(), 1);
    let tern = Tern::run_in(dir, &cfg.toml());
    // The client verifies the certificate (as `localhost`) against the test's own.
    let url = format!("wss://{}/echo", tern.addr());
    echo_scenario(tern, &server, &url, Some(ca.to_str().unwrap()));
}

/// tern with one server at `addr` and extra backend lines.
fn tern_to(addr: SocketAddr, frontend: &[&str], backend: &[&str]) -> Tern {
    Tern::run(
        &Config::new()
            .server("s", &addr.to_string(), 1)
            .with_lines(frontend, backend)
            .toml(),
    )
}

/// Reads a request head (and whatever came with it) on a server's connection; (head, rest).
fn read_request(s: &mut TcpStream) -> (String, Vec<u8>) {
    let (got, found) = read_until_contains(s, b"\r\n\r\n", WAIT);
    assert!(found, "no request head: {}", String::from_utf8_lossy(&got));
    let end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    (
        String::from_utf8_lossy(&got[..end]).to_ascii_lowercase(),
        got[end..].to_vec(),
    )
}

#[test]
fn early_bytes_cross_first_and_a_half_close_is_passed_on() {
    let (addr, backend) = raw_backend(WAIT, |mut s| {
        let (head, mut up) = read_request(&mut s);
        // Frames the server sends with its 101 (as a server may).
        let mut answer = SWITCHED.to_vec();
        answer.extend_from_slice(b"with-101");
        s.write_all(&answer).unwrap();
        // Everything the client sends, up to its end of stream, which tern passes on.
        let rest = read_until_closed(&mut s, WAIT);
        up.extend_from_slice(&rest.bytes);
        // The other direction is still open: the server talks after the client's FIN.
        s.write_all(b"after-eof").unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        (head, up, rest.closed)
    });
    let tern = tern_to(addr, &[], &[]);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    // The client's first frame right behind the request head, in the same write.
    let mut request = UPGRADE.to_vec();
    request.extend_from_slice(b"early");
    s.write_all(&request).unwrap();
    let (got, found) = read_until_contains(&mut s, b"with-101", WAIT);
    let text = String::from_utf8_lossy(&got).into_owned();
    assert!(found, "{text}");
    let head = text.to_ascii_lowercase();
    assert!(
        head.starts_with("http/1.1 101 switching protocols\r\n"),
        "{text}"
    );
    assert!(head.contains("\r\nupgrade: websocket\r\n"), "{text}");
    assert!(head.contains("\r\nconnection: upgrade\r\n"), "{text}");
    assert!(head.contains("sec-websocket-accept: "), "{text}");
    assert!(!head.contains("connection: close"), "{text}");
    assert!(text.ends_with("\r\n\r\nwith-101"), "{text}");
    s.write_all(b"+more").unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    let rest = read_until_closed(&mut s, WAIT);
    assert!(rest.closed, "tern did not close after both ends closed");
    assert_eq!(rest.text(), "after-eof");

    let (head, up, server_saw_eof) = backend.join().unwrap().expect("tern connected");
    // The upgrade reached the server as one, other hop-by-hop options gone.
    assert!(head.contains("\r\nupgrade: websocket\r\n"), "{head}");
    assert!(head.contains("\r\nconnection: upgrade\r\n"), "{head}");
    assert!(!head.contains("keep-alive"), "{head}");
    assert!(head.contains("sec-websocket-key: "), "{head}");
    assert_eq!(String::from_utf8_lossy(&up), "early+more");
    assert!(
        server_saw_eof,
        "the client's end of stream was not passed on"
    );
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tunnels"), 1);
    assert_eq!(c.get("frontend web", "resp_1xx"), 1);
    assert_eq!(
        c.get("server app/s", "bytes_in"),
        (request.len() + 5) as u64
    );
    assert_eq!(c.get("server app/s", "bytes_out"), (got.len() + 9) as u64);
}

#[test]
fn a_reset_on_one_end_resets_the_other() {
    let (addr, backend) = raw_backend(WAIT, |mut s| {
        read_request(&mut s);
        s.write_all(SWITCHED).unwrap();
        let (got, _) = read_until_contains(&mut s, b"ping", WAIT);
        assert!(got.ends_with(b"ping"));
        // Bytes the client will not read: closing on them makes its kernel reset.
        s.write_all(b"unread").unwrap();
        s.set_read_timeout(Some(WAIT)).unwrap();
        s.read(&mut [0u8; 16]).map_err(|e| e.kind())
    });
    let tern = tern_to(addr, &[], &[]);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(UPGRADE).unwrap();
    let (got, found) = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
    assert!(found, "{}", String::from_utf8_lossy(&got));
    s.write_all(b"ping").unwrap();
    // Waits (without taking them) for the bytes that make the close a reset.
    s.set_read_timeout(Some(WAIT)).unwrap();
    assert!(s.peek(&mut [0u8; 1]).unwrap() > 0);
    drop(s);
    let server_read = backend.join().unwrap().expect("tern connected");
    assert_eq!(server_read, Err(ErrorKind::ConnectionReset));
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tunnels"), 1);
    assert_eq!(c.get("frontend web", "client_aborts"), 1);
}

#[test]
fn an_upgrade_the_server_declines_leaves_the_connection_http() {
    let term = Term::start("s1");
    let tern = Tern::run(&Config::new().terms(&[&term]).toml());
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    let request = String::from_utf8_lossy(UPGRADE).replace("/chat", "/?h=1");
    s.write_all(request.as_bytes()).unwrap();
    let r = read_response(&mut s, WAIT);
    assert_eq!(r.status(), Some(200), "{}", r.text());
    assert!(!r.closed, "{}", r.text());
    // The server saw the upgrade offer (and answered 200 regardless).
    let dump = String::from_utf8_lossy(r.body_bytes()).to_ascii_lowercase();
    assert!(dump.contains("upgrade: websocket"), "{dump}");
    assert!(dump.contains("connection: upgrade"), "{dump}");
    // Still HTTP: tern reads the next request itself (its monitor URI answers it).
    s.write_all(b"GET /test HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, WAIT);
    assert_eq!(r.status(), Some(200), "{}", r.text());
    drop(s);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tunnels"), 0);
    assert_eq!(c.get("frontend web", "monitor"), 1);
}

/// What a client gets when a raw server answers its `request` with `answer`.
fn answered_with(request: &[u8], answer: &'static [u8]) -> (Raw, Counters) {
    let (addr, backend) = raw_backend(WAIT, move |mut s| {
        read_request(&mut s);
        s.write_all(answer).unwrap();
        // Until tern drops the connection.
        read_until_closed(&mut s, WAIT);
    });
    let tern = tern_to(addr, &[], &[]);
    let r = raw_exchange(tern.addr(), request, WAIT);
    backend.join().unwrap().expect("tern connected");
    (r, tern.stop_clean())
}

#[test]
fn a_101_nobody_asked_for_is_a_502() {
    let (r, c) = answered_with(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", SWITCHED);
    assert_eq!(r.status(), Some(502), "{}", r.text());
    assert_eq!(c.get("frontend web", "tunnels"), 0);
    assert_eq!(c.get("backend app", "upstream_errors"), 1);
    // A 101 that does not say what it switches to is no acceptance either.
    let (r, c) = answered_with(
        UPGRADE,
        b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n\r\n",
    );
    assert_eq!(r.status(), Some(502), "{}", r.text());
    assert_eq!(c.get("frontend web", "tunnels"), 0);
}

/// How much sooner than its timeout an idle tunnel may be seen to close from the client (see
/// `idle_tunnel`).
const EARLY: Duration = Duration::from_millis(50);

/// Opens a tunnel through tern (frontend and backend lines given) and leaves it idle; how long
/// tern took to close it, and whether the server saw the close.
fn idle_tunnel(frontend: &[&str], backend: &[&str]) -> (Duration, bool) {
    let (addr, server) = raw_backend(WAIT, |mut s| {
        read_request(&mut s);
        s.write_all(SWITCHED).unwrap();
        read_until_closed(&mut s, WAIT).closed
    });
    let tern = tern_to(addr, frontend, backend);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(UPGRADE).unwrap();
    let (got, found) = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
    assert!(found, "{}", String::from_utf8_lossy(&got));
    // tern's timer started when it passed the 101 on, a moment before this client read it: the
    // time measured here may fall short of the timeout by that delivery, so the callers allow
    // EARLY of it.
    let opened = Instant::now();
    let rest = read_until_closed(&mut s, WAIT);
    let took = opened.elapsed();
    assert!(rest.closed, "the idle tunnel was not closed");
    assert!(rest.bytes.is_empty());
    let server_closed = server.join().unwrap().expect("tern connected");
    tern.stop_clean();
    (took, server_closed)
}

#[test]
fn an_idle_tunnel_closes_after_the_tunnel_timeout() {
    // The client and server timeouts are long: only `tunnel` can close it.
    let (took, server_closed) = idle_tunnel(
        &["timeouts = { client = \"1m\" }"],
        &["timeouts = { server = \"1m\", tunnel = \"500ms\" }"],
    );
    assert!(took >= Duration::from_millis(500) - EARLY, "{took:?}");
    assert!(server_closed);
}

#[test]
fn without_a_tunnel_timeout_the_shorter_of_client_and_server_applies() {
    let (took, server_closed) = idle_tunnel(
        &["timeouts = { client = \"700ms\" }"],
        &["timeouts = { server = \"1m\" }"],
    );
    assert!(took >= Duration::from_millis(700) - EARLY, "{took:?}");
    assert!(server_closed);
}

#[test]
fn a_graceful_stop_lets_a_tunnel_run_until_the_grace_ends() {
    let (addr, backend) = raw_backend(WAIT, |mut s| {
        read_request(&mut s);
        s.write_all(SWITCHED).unwrap();
        // Echoes until tern closes the tunnel.
        let mut buf = [0u8; 1024];
        s.set_read_timeout(Some(WAIT)).unwrap();
        while let Ok(n @ 1..) = s.read(&mut buf) {
            if s.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let mut tern = Tern::run(
        &Config::new()
            .server("s", &addr.to_string(), 1)
            .global("grace = \"1s\"")
            .toml(),
    );
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(UPGRADE).unwrap();
    let (got, found) = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
    assert!(found, "{}", String::from_utf8_lossy(&got));
    // A keep-alive connection between requests: a stop closes it at once, which tells when
    // the worker is stopping.
    let mut idle = TcpStream::connect(tern.addr()).unwrap();
    idle.write_all(b"GET /test HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut idle, WAIT).status(), Some(200));
    tern.proc.signal("TERM");
    assert!(read_until_closed(&mut idle, WAIT).closed);
    // Stopping, and the tunnel still carries bytes both ways...
    s.write_all(b"still here").unwrap();
    let (got, found) = read_until_contains(&mut s, b"still here", WAIT);
    assert!(found, "{}", String::from_utf8_lossy(&got));
    // ...until the grace period ends.
    let rest = read_until_closed(&mut s, WAIT);
    assert!(rest.closed, "the tunnel outlived the grace period");
    assert!(tern.proc.wait_exit(WAIT).success());
    backend.join().unwrap().expect("tern connected");
}
