//! WebSocket over HTTP/2 (RFC 8441 extended CONNECT) through the real binary, to an HTTP/1.1
//! WebSocket server.
//!
//! The client is tests/clients/ws_h2_client.py: Python's `h2` for the connection and the
//! sans-I/O protocol of `websockets` for the frames (neither written against tern); the server
//! is the `websockets` echo server of the HTTP/1.1 tests. Over TLS (ALPN h2) and h2c: the
//! SETTINGS that announce the extended CONNECT, echo of text, binary and a 1 MiB message (many
//! flow-control windows both ways), ping/pong, a close code from each side, the access log line
//! of each stream. Then what a library would hide: a non-101 answer passed back, a `101` whose
//! `Sec-WebSocket-Accept` does not answer tern's key (502), other `:protocol` values and plain
//! CONNECT refused, resets passed on both ways, the tunnel timeout, and the setting turned off.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::ws::{json_log_lines, run_client, EchoServer};
use support::*;

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use tern_tls::KeyKind;

/// How long any step may take.
const WAIT: Duration = Duration::from_secs(10);

/// How the client reaches tern.
#[derive(Clone, Copy)]
enum Mode {
    /// TLS, ALPN h2.
    Tls,
    /// HTTP/2 with prior knowledge on a plain bind.
    Cleartext,
}

/// tern in front of `server` (raw TOML item), HTTP/2 on its one bind as `mode` says, with
/// extra frontend and backend lines and, when `log` is given, a JSON access log there.
fn tern(mode: Mode, server: &str, frontend: &[&str], backend: &[&str], log: Option<&Path>) -> Tern {
    let dir = temp_dir("ws-h2");
    let mut cfg = Config::new()
        .raw_server(server)
        .with_lines(frontend, backend);
    cfg = match mode {
        Mode::Tls => {
            let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
            cfg.frontend(&format!(
                "tls = {{ certs = [{cert:?}], alpn = [\"h2\", \"http/1.1\"] }}"
            ))
        }
        Mode::Cleartext if frontend.iter().any(|l| l.starts_with("http2")) => cfg,
        Mode::Cleartext => cfg.frontend("http2 = { cleartext = true }"),
    };
    let mut toml = cfg.toml();
    if let Some(path) = log {
        toml.push_str(&format!(
            "\n[access_log]\ntarget = {:?}\nformat = \"json\"\n",
            path.to_str().unwrap()
        ));
    }
    Tern::run_in(dir, &toml)
}

fn server_at(addr: SocketAddr) -> String {
    format!("{{ name = \"ws\", address = \"{addr}\" }}")
}

/// Runs one scenario of the client against tern; its output lines (it must succeed).
fn client(mode: Mode, tern: &Tern, scenario: &str, path: &str, protocol: &str) -> Vec<String> {
    let mode = match mode {
        Mode::Tls => "h2",
        Mode::Cleartext => "h2c",
    };
    let port = tern.addr().port().to_string();
    run_client(
        "ws_h2_client.py",
        &[mode, "127.0.0.1", &port, scenario, path, protocol],
    )
}

/// The echo scenario over `mode`: two WebSocket streams on one connection.
fn echo_over(mode: Mode) {
    let server = EchoServer::start();
    let log_dir = temp_dir("ws-h2-log");
    let log = log_dir.join("access.log");
    let tern = tern(mode, &server_at(server.addr), &[], &[], Some(&log));
    let lines = client(mode, &tern, "echo", "/echo", "websocket");
    assert_eq!(lines[0], "settings enable_connect_protocol 1");
    let steps: Vec<&str> = lines[1..].iter().map(String::as_str).collect();
    assert_eq!(
        steps,
        [
            "ok text echo",
            "ok binary echo",
            "ok 1 MiB echo",
            "ok ping pong",
            "ok client close",
            "ok server close 4001",
        ]
    );
    // Each close reached the other side with its code and reason.
    assert_eq!(server.closed_line(), "closed 1000 client done");
    assert_eq!(server.closed_line(), "closed 4001 server says bye");

    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "h2_sessions"), 1);
    assert_eq!(c.get("frontend web", "h2_streams"), 2);
    assert_eq!(c.get("frontend web", "tunnels"), 2);
    assert_eq!(c.get("frontend web", "resp_1xx"), 2);
    assert_eq!(c.get("frontend web", "client_aborts"), 0);
    assert_eq!(c.get("frontend web", "h2_errors"), 0);
    for section in ["frontend web", "backend app", "server app/ws"] {
        assert!(c.get(section, "bytes_in") > 1 << 20, "{section}");
        assert!(c.get(section, "bytes_out") > 1 << 20, "{section}");
    }
    assert_eq!(c.get("server app/ws", "connects"), 2);

    // One line per stream: the upgrade as the server saw it, ended in order by both sides.
    let lines = json_log_lines(&log);
    assert_eq!(lines.len(), 2, "{lines:?}");
    for (l, stream) in lines.iter().zip([1, 3]) {
        assert_eq!(l["stream"], stream, "{l}");
        assert_eq!(l["version"], "HTTP/2.0", "{l}");
        assert_eq!(l["method"], "GET", "{l}");
        assert_eq!(l["path"], "/echo", "{l}");
        assert_eq!(l["status"], 101, "{l}");
        assert_eq!(l["termination"], "--", "{l}");
        assert_eq!(l["server"], "ws", "{l}");
    }
    assert!(
        lines[0]["bytes_in"].as_u64().unwrap() > 1 << 20,
        "{}",
        lines[0]
    );
    assert!(
        lines[0]["bytes_out"].as_u64().unwrap() > 1 << 20,
        "{}",
        lines[0]
    );
}

#[test]
fn websocket_over_h2_echo_ping_and_close_codes() {
    echo_over(Mode::Tls);
}

#[test]
fn websocket_over_h2c_echo_ping_and_close_codes() {
    echo_over(Mode::Cleartext);
}

#[test]
fn a_non_101_answer_comes_back_as_its_status() {
    let term = Term::start("t");
    let server = format!("{{ name = \"t\", address = \"{}\" }}", term.addr);
    let tern = tern(Mode::Tls, &server, &[], &[], None);
    // tern term answers 404 with the request head it got as the body.
    let lines = client(Mode::Tls, &tern, "answer", "/chat?r=404&h=1", "websocket");
    assert_eq!(lines[1], "status 404", "{lines:?}");
    assert_eq!(lines.last().unwrap(), "end", "{lines:?}");
    // The server saw an HTTP/1.1 WebSocket opening, with a key tern made up.
    let body = lines
        .iter()
        .find_map(|l| l.strip_prefix("body "))
        .unwrap()
        .to_ascii_lowercase();
    assert!(body.starts_with("get /chat?r=404&h=1 http/1.1|"), "{body}");
    for field in [
        "|upgrade: websocket|",
        "|connection: upgrade|",
        "|sec-websocket-version: 13|",
        "|sec-websocket-key: ",
    ] {
        assert!(body.contains(field), "{field} in {body}");
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tunnels"), 0);
    assert_eq!(c.get("frontend web", "resp_4xx"), 1);
}

#[test]
fn other_protocols_and_plain_connect_are_refused() {
    let server = EchoServer::start();
    let tern = tern(Mode::Cleartext, &server_at(server.addr), &[], &[], None);
    for protocol in ["connect-udp", "-"] {
        let lines = client(Mode::Cleartext, &tern, "answer", "/echo", protocol);
        assert_eq!(lines[1], "status 501", "{protocol}: {lines:?}");
        assert_eq!(lines.last().unwrap(), "end", "{protocol}: {lines:?}");
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "bad_requests"), 2);
    assert_eq!(c.get("server app/ws", "connects"), 0);
}

#[test]
fn a_101_that_does_not_answer_the_key_is_a_502() {
    let (addr, backend) = raw_backend(WAIT, |mut s| {
        let (head, found) = read_until_contains(&mut s, b"\r\n\r\n", WAIT);
        assert!(found);
        // The accept value of RFC 6455's sample key, not of the key tern sent.
        s.write_all(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
              Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
        )
        .unwrap();
        read_until_closed(&mut s, WAIT);
        String::from_utf8_lossy(&head).to_ascii_lowercase()
    });
    let tern = tern(Mode::Cleartext, &server_at(addr), &[], &[], None);
    let lines = client(Mode::Cleartext, &tern, "answer", "/chat", "websocket");
    assert_eq!(lines[1], "status 502", "{lines:?}");
    let head = backend.join().unwrap().expect("tern connected");
    assert!(head.contains("sec-websocket-key: "), "{head}");
    assert!(!head.contains("dghlihnhbxbszsbub25jzq=="), "{head}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tunnels"), 0);
    assert_eq!(c.get("backend app", "upstream_errors"), 1);
}

#[test]
fn resets_are_passed_on_both_ways() {
    let server = EchoServer::start();
    let tern = tern(Mode::Tls, &server_at(server.addr), &[], &[], None);
    // The client resets its stream: the server's connection is reset (no close frame), and
    // another stream of the same connection still works.
    let lines = client(Mode::Tls, &tern, "reset", "/echo", "websocket");
    assert_eq!(
        lines[1..],
        ["ok echo before the reset", "ok echo on a new stream"]
    );
    assert_eq!(server.closed_line(), "closed 1006 ");
    // The second stream ended with the client's connection.
    assert_eq!(server.closed_line(), "closed 1006 ");
    // The server resets its connection: the stream is reset with CANCEL (RFC 8441 §5).
    let lines = client(Mode::Tls, &tern, "abort", "/echo", "websocket");
    assert_eq!(lines[1], "reset 8", "{lines:?}");
    assert_eq!(server.closed_line(), "closed 1006 ");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tunnels"), 3);
    assert!(c.get("frontend web", "client_aborts") >= 1);
}

#[test]
fn an_idle_websocket_stream_ends_after_the_tunnel_timeout() {
    let server = EchoServer::start();
    // The client and server timeouts are long: only `tunnel` can end it.
    let tern = tern(
        Mode::Cleartext,
        &server_at(server.addr),
        &["timeouts = { client = \"1m\" }"],
        &["timeouts = { server = \"1m\", tunnel = \"500ms\" }"],
        None,
    );
    let lines = client(Mode::Cleartext, &tern, "idle", "/echo", "websocket");
    let (how, took) = lines[1].split_once(" after ").unwrap();
    assert_eq!(how, "reset 8", "{lines:?}");
    let ms: u64 = took.trim_end_matches(" ms").parse().unwrap();
    assert!((500..5000).contains(&ms), "{ms} ms");
    assert_eq!(server.closed_line(), "closed 1006 ");
    tern.stop_clean();
}

#[test]
fn the_extended_connect_can_be_turned_off() {
    let server = EchoServer::start();
    let tern = tern(
        Mode::Cleartext,
        &server_at(server.addr),
        &["http2 = { cleartext = true, websocket = false }"],
        &[],
        None,
    );
    let lines = client(Mode::Cleartext, &tern, "answer", "/echo", "websocket");
    assert_eq!(lines[0], "settings enable_connect_protocol -", "{lines:?}");
    // A client that sends `:protocol` anyway gets its stream reset (PROTOCOL_ERROR).
    assert_eq!(lines[1], "reset 1", "{lines:?}");
    let c = tern.stop_clean();
    assert_eq!(c.get("server app/ws", "connects"), 0);
}
