//! A server's `ws` (HAProxy's `ws auto|h1|h2`), through the real binary: WebSockets over
//! another HTTP version than the server's other requests.
//!
//! The server is Debian's HAProxy 2.6 on a plain bind, which takes HTTP/1.1 and HTTP/2 with
//! prior knowledge alike (it detects the HTTP/2 preface) and WebSockets over both (RFC 8441 on
//! HTTP/2), in front of the `websockets` echo server of the other WebSocket tests; its log
//! says which version each request came in. Clients: Python's `websockets`
//! (tests/clients/ws_client.py: echo of text, binary and a large message, ping/pong, close
//! codes) and a plain request.

#![allow(clippy::unwrap_used)]

mod support;
use support::others::{free_port, Other};
use support::ws::{run_client, EchoServer};
use support::*;

use std::time::{Duration, Instant};

/// How long any step may take.
const WAIT: Duration = Duration::from_secs(10);

/// A plain request, which the echo server answers without a WebSocket.
const GET: &[u8] = b"GET /plain HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// HAProxy on a bind with `tls` (its options, e.g. `ssl crt X alpn h2,http/1.1`) in front of
/// `echo`, with an HTTP log on its stdout.
fn haproxy(dir: &std::path::Path, echo: std::net::SocketAddr, tls: &str) -> (Other, u16) {
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode http\n  log stdout format raw local0\n  option httplog\n\
         \x20 timeout connect 5s\n  timeout client 1m\n  timeout server 1m\n  timeout tunnel 1m\n\
         frontend any\n  bind 127.0.0.1:{port}{tls}\n  log global\n  default_backend ws\n\
         backend ws\n  server echo {echo}\n"
    );
    (Other::haproxy(dir, &cfg, &[port]), port)
}

/// Waits until HAProxy's log has `n` lines that contain each of `needles`; the log.
fn wait_lines(haproxy: &Other, needles: &[&str], n: usize) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let log = haproxy.log_text();
        let seen = log
            .lines()
            .filter(|l| needles.iter().all(|needle| l.contains(needle)))
            .count();
        if seen >= n {
            return log;
        }
        assert!(
            Instant::now() < deadline,
            "{n} of {needles:?} not in: {log}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// tern in front of HAProxy (plain, or over TLS with ALPN h2 and http/1.1), its server given
/// `keys`: the WebSocket scenario and a plain request through it reach HAProxy over
/// `websocket_version` and `request_version`.
fn through(keys: &str, websocket_version: &str, request_version: &str) {
    through_tls(false, keys, websocket_version, request_version);
}

fn through_tls(tls: bool, keys: &str, websocket_version: &str, request_version: &str) {
    if !have("haproxy") {
        eprintln!("skipped: haproxy is not installed");
        return;
    }
    let echo = EchoServer::start();
    let dir = temp_dir("ws-keyword");
    let bind = if tls {
        let cert = write_cert(&dir, "hap", tern_tls::KeyKind::EcdsaP256);
        format!(" ssl crt {cert} alpn h2,http/1.1")
    } else {
        String::new()
    };
    let (haproxy, port) = haproxy(&dir, echo.addr, &bind);
    let server = format!("{{ name = \"hap\", address = \"127.0.0.1:{port}\"{keys} }}");
    let tern = Tern::run_in(dir, &Config::new().raw_server(&server).toml());
    let url = format!("ws://{}/echo", tern.addr());
    let lines = run_client("ws_client.py", &[&url]);
    assert_eq!(lines.iter().filter(|l| l.starts_with("ok ")).count(), 6);
    assert_eq!(echo.closed_line(), "closed 1000 client done");
    assert_eq!(echo.closed_line(), "closed 4001 server says bye");
    let raw = raw_exchange(tern.addr(), GET, WAIT);
    assert!(raw.status().is_some(), "{}", raw.text());
    wait_lines(&haproxy, &[" 101 ", &format!("{websocket_version}\"")], 2);
    wait_lines(&haproxy, &["/plain", &format!("{request_version}\"")], 1);
    let counters = tern.stop_clean();
    assert_eq!(counters.get("frontend web", "tunnels"), 2);
    assert_eq!(counters.get("backend app", "upstream_errors"), 0);
}

#[test]
fn ws_h1_sends_websockets_over_http1_to_an_h2_server() {
    through(", proto = \"h2\", ws = \"h1\"", "HTTP/1.1", "HTTP/2.0");
}

#[test]
fn ws_h2_sends_websockets_as_extended_connect_to_an_http1_server() {
    through(", ws = \"h2\"", "HTTP/2.0", "HTTP/1.1");
}

#[test]
fn ws_auto_follows_the_servers_protocol() {
    through(", proto = \"h2\", ws = \"auto\"", "HTTP/2.0", "HTTP/2.0");
    through("", "HTTP/1.1", "HTTP/1.1");
}

#[test]
fn ws_h1_on_a_tls_server_offers_http1_only_for_websockets() {
    // Requests negotiate h2 from the ALPN offer; WebSockets offer http/1.1 alone.
    let tls = ", tls = { verify = \"none\", alpn = [\"h2\", \"http/1.1\"] }";
    through_tls(true, &format!("{tls}, ws = \"h1\""), "HTTP/1.1", "HTTP/2.0");
    through_tls(true, tls, "HTTP/2.0", "HTTP/2.0");
}
