//! The runtime API through the real binary: `tern ctl` on the control socket changes a running
//! tern — server states, weights, addresses, servers added and deleted — the traffic follows,
//! bad commands change nothing, and what was set at runtime survives a reload. The HTTP
//! listener serves metrics and refuses state changes without a token.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A tern with a control socket (and an HTTP listener on an ephemeral port) in front of
/// `terms`.
fn tern_with_control(terms: &[&Term]) -> (Tern, PathBuf) {
    let dir = temp_dir("ctl");
    let socket = dir.join("tern.sock");
    let config = Config::new()
        .global(&format!(
            "\n[control]\nsocket = {:?}\nhttp = \"127.0.0.1:0\"",
            socket.to_str().unwrap()
        ))
        .terms(terms);
    (Tern::run_in(dir, &config.toml()), socket)
}

/// Runs `tern ctl -s SOCKET WORDS...`; (exit code, stdout + stderr).
fn ctl(socket: &Path, words: &str) -> (i32, String) {
    let mut args = vec!["ctl", "-s", socket.to_str().unwrap()];
    args.extend(words.split_whitespace());
    let (code, out, err) = tern_output(&args);
    (code, format!("{out}{err}"))
}

fn ctl_ok(socket: &Path, words: &str) -> String {
    let (code, out) = ctl(socket, words);
    assert_eq!(code, 0, "`{words}` failed: {out}");
    out
}

/// How many of `n` GETs each server answered.
fn spread(addr: std::net::SocketAddr, n: usize) -> HashMap<String, usize> {
    block_on(async {
        let mut seen = HashMap::new();
        for _ in 0..n {
            let got = get(addr, false, "/").await;
            assert_eq!(got.status, 200, "{}", got.text());
            let server = got.header("x-term-server").unwrap_or("?").to_owned();
            *seen.entry(server).or_default() += 1;
        }
        seen
    })
}

#[test]
fn states_and_weights_steer_traffic_and_survive_a_reload() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let (mut tern, socket) = tern_with_control(&[&a, &b]);
    let addr = tern.addr();
    assert_eq!(spread(addr, 4).len(), 2);

    ctl_ok(&socket, "disable server app/b");
    assert_eq!(spread(addr, 6), HashMap::from([("a".to_owned(), 6)]));
    ctl_ok(&socket, "enable server app/b");
    ctl_ok(&socket, "drain server app/a");
    assert_eq!(spread(addr, 6), HashMap::from([("b".to_owned(), 6)]));
    ctl_ok(&socket, "enable server app/a");
    ctl_ok(&socket, "set weight app/a 3");
    let seen = spread(addr, 8);
    assert_eq!((seen["a"], seen["b"]), (6, 2), "weights 3:1");

    // Refused commands change nothing.
    let (code, out) = ctl(&socket, "set weight app/a 999");
    assert_eq!(code, 1, "{out}");
    let (code, out) = ctl(&socket, "disable server app/nope");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("nope"), "{out}");
    let (code, out) = ctl(&socket, "frobnicate");
    assert_eq!(code, 1, "{out}");

    // What was set at runtime carries over a reload of an unchanged file.
    ctl_ok(&socket, "disable server app/b");
    let reloaded = ctl_ok(&socket, "reload");
    assert!(reloaded.contains("generation 1"), "{reloaded}");
    tern.proc.wait_line("reloaded:");
    let servers = ctl_ok(&socket, "show servers");
    assert!(servers.contains("MAINT"), "{servers}");
    assert_eq!(spread(addr, 4), HashMap::from([("a".to_owned(), 4)]));
    // Profiling switched on at runtime records the requests that follow.
    ctl_ok(&socket, "set profiling on");
    spread(addr, 3);
    let profile = ctl_ok(&socket, "show profiling");
    assert!(profile.contains("profiling on"), "{profile}");
    assert!(profile.contains("request"), "{profile}");
    ctl_ok(&socket, "set profiling off");
    let info = ctl_ok(&socket, "json show info");
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["output"]["generation"], 1, "{info}");
    tern.stop_clean();
}

#[test]
fn servers_move_and_are_added_and_deleted_at_runtime() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let (mut tern, socket) = tern_with_control(&[&a]);
    let addr = tern.addr();

    // `set server addr`: the server's new connections go to c.
    ctl_ok(&socket, &format!("set server app/a addr {}", c.addr));
    assert_eq!(spread(addr, 3), HashMap::from([("c".to_owned(), 3)]));
    let servers = ctl_ok(&socket, "show servers");
    assert!(servers.contains(&c.addr.to_string()), "{servers}");

    // `add server`: b starts in maintenance and takes its share once enabled.
    let added = ctl_ok(&socket, &format!("add server app/b {}", b.addr));
    assert!(!added.contains("error"), "{added}");
    tern.proc.wait_line("reloaded:");
    assert_eq!(spread(addr, 3), HashMap::from([("c".to_owned(), 3)]));
    let servers = ctl_ok(&socket, "show servers");
    assert!(
        servers
            .lines()
            .any(|l| l.contains("app/b") && l.to_ascii_lowercase().contains("maint")),
        "{servers}"
    );
    ctl_ok(&socket, "enable server app/b");
    let seen = spread(addr, 6);
    assert_eq!(seen.get("b"), Some(&3), "{seen:?}");
    assert_eq!(
        seen.get("c"),
        Some(&3),
        "the moved address carried over: {seen:?}"
    );

    // `del server` needs maintenance first.
    let (code, out) = ctl(&socket, "del server app/b");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("maintenance"), "{out}");
    ctl_ok(&socket, "disable server app/b");
    ctl_ok(&socket, "del server app/b");
    tern.proc.wait_line("reloaded:");
    let servers = ctl_ok(&socket, "show servers");
    assert!(!servers.contains("app/b"), "{servers}");
    assert_eq!(spread(addr, 3), HashMap::from([("c".to_owned(), 3)]));
    tern.stop_clean();
}

#[test]
fn show_tls_lists_the_loaded_certificates() {
    let a = Term::start("a");
    let dir = temp_dir("ctl-tls");
    let cert = write_cert(&dir, "site", tern_tls::KeyKind::EcdsaP256);
    let socket = dir.join("tern.sock");
    let config = Config::new()
        .global(&format!(
            "\n[control]\nsocket = {:?}",
            socket.to_str().unwrap()
        ))
        .tls(&[&format!("{cert:?}")])
        .terms(&[&a]);
    let tern = Tern::run_in(dir, &config.toml());
    let out = ctl_ok(&socket, "json show tls");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let text = json.to_string();
    assert!(text.contains("site.pem"), "{text}");
    assert!(text.contains("ECDSA P-256"), "{text}");
    assert!(
        text.contains("days_until_expiry") || text.contains("expiry"),
        "{text}"
    );
    tern.stop_clean();
}

#[test]
fn the_http_listener_serves_metrics_and_refuses_changes_without_a_token() {
    let a = Term::start("a");
    let (tern, socket) = tern_with_control(&[&a]);
    assert_eq!(spread(tern.addr(), 2).len(), 1);
    // Printed before `ready:`, so already among the lines seen.
    let line = tern
        .proc
        .seen
        .iter()
        .find(|l| l.starts_with("control: http "))
        .cloned()
        .expect("a control: http line before ready:");
    let http: std::net::SocketAddr = line
        .trim_start_matches("control: http http://")
        .parse()
        .unwrap();
    let metrics = block_on(get(http, false, "/metrics"));
    assert_eq!(metrics.status, 200);
    let text = metrics.text();
    assert!(text.contains("tern_frontend_requests_total"), "{text}");
    let page = block_on(get(http, false, "/stats"));
    assert_eq!(page.status, 200);
    assert!(page.text().contains("<html"), "{}", page.text());
    // A state change over HTTP without a configured token: refused, nothing changed.
    let raw = raw_exchange(
        http,
        b"POST /v1/command HTTP/1.1\r\nHost: x\r\nContent-Length: 21\r\nConnection: close\r\n\r\ndisable server app/a\n",
        std::time::Duration::from_secs(5),
    );
    assert_eq!(raw.status(), Some(403), "{}", raw.text());
    let servers = ctl_ok(&socket, "show servers");
    assert!(!servers.contains("MAINT"), "{servers}");
    tern.stop_clean();
}
