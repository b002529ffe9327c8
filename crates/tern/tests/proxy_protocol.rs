//! Server keys `proxy_protocol` and `disabled` through the real binary.
//!
//! `tern term --accept-proxy` backends refuse connections that do not open with a PROXY
//! header and echo what the header said (`x-proxy-version`, `x-proxy-src`, `x-proxy-dst`), so a
//! test sees exactly what tern told its server: the client's address as the client saw it,
//! before the TLS handshake for TLS servers, and a pooled connection reused only by the client
//! connection it was opened for. Health checks of such servers pass only because they open with
//! a header too. A `disabled` server takes no traffic and is not checked until `tern ctl`
//! enables it, and a reload keeps the operator's word over a file that did not change.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::collections::HashMap;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Long enough for any response on a loaded machine.
const WAIT: Duration = Duration::from_secs(10);

/// A server table for `term` named `name` with `keys` added.
fn server(name: &str, term: &Term, keys: &str) -> String {
    format!(
        "{{ name = \"{name}\", address = \"{}\", {keys} }}",
        term.addr
    )
}

/// GET / on the open connection `s`; the response must be a 200.
fn get_on(s: &mut TcpStream) -> Raw {
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let got = read_response(s, WAIT);
    assert_eq!(got.status(), Some(200), "{}", got.text());
    got
}

/// What the server's PROXY header said, as `term` echoed it: (version, source, destination).
fn said(got: &Raw) -> (String, String, String) {
    let value = |name: &str| {
        got.head_value(name)
            .unwrap_or_else(|| panic!("no {name} in {}", got.head_text()))
    };
    (
        value("x-proxy-version"),
        value("x-proxy-src"),
        value("x-proxy-dst"),
    )
}

#[test]
fn plain_servers_see_the_client_address_and_pooled_connections_keep_to_their_client() {
    let term = Term::start_with("s1", &["--accept-proxy"]);
    for (version, number) in [("v1", "1"), ("v2", "2")] {
        let keys = format!("proxy_protocol = \"{version}\"");
        let tern = Tern::run(&Config::new().raw_server(&server("s1", &term, &keys)).toml());
        let mut first = TcpStream::connect(tern.addr()).unwrap();
        let me = first.local_addr().unwrap().to_string();
        let front = tern.addr().to_string();
        let expected = (number.to_owned(), me.clone(), front.clone());
        assert_eq!(said(&get_on(&mut first)), expected, "{version}");
        // The same client connection reuses the server connection its header named.
        assert_eq!(said(&get_on(&mut first)), expected, "{version}");
        // Another client connection gets a server connection of its own.
        let mut second = TcpStream::connect(tern.addr()).unwrap();
        let other = second.local_addr().unwrap().to_string();
        assert_ne!(other, me);
        assert_eq!(
            said(&get_on(&mut second)),
            (number.to_owned(), other, front),
            "{version}"
        );
        drop((first, second));
        let c = tern.stop();
        assert_eq!(
            c.get("server app/s1", "connects"),
            2,
            "{version}: {:?}",
            c.0
        );
        assert_eq!(c.get("server app/s1", "reused"), 1, "{version}");
    }
}

#[test]
fn tls_servers_get_the_header_before_the_handshake() {
    let dir = temp_dir("pp-tls");
    let pem = write_cert(&dir, "backend", tern_tls::KeyKind::EcdsaP256);
    let term = Term::start_with("t", &["--accept-proxy", "--tls-cert", &pem]);
    let tls = format!(
        "tls = {{ ca = \"{}\", sni = \"localhost\" }}",
        dir.join("backend.crt").display()
    );
    let config = Config::new()
        .raw_server(&server(
            "one",
            &term,
            &format!("{tls}, proxy_protocol = \"v1\""),
        ))
        .raw_server(&server(
            "two",
            &term,
            &format!("{tls}, proxy_protocol = \"v2\""),
        ));
    let tern = Tern::run_in(dir, &config.toml());
    let mut versions = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(tern.addr()).unwrap();
        let me = s.local_addr().unwrap().to_string();
        let (version, source, destination) = said(&get_on(&mut s));
        assert_eq!(source, me);
        assert_eq!(destination, tern.addr().to_string());
        versions.push(version);
    }
    versions.sort();
    assert_eq!(versions, ["1", "2"], "round robin reached both servers");
    let c = tern.stop();
    assert_eq!(c.get("server app/one", "connect_errors"), 0, "{:?}", c.0);
    assert_eq!(c.get("server app/two", "connect_errors"), 0);
}

/// A tern with a control socket; its configuration file is `<dir>/tern.toml`.
fn tern_with_control(servers: &[String], backend: &str) -> (Tern, PathBuf) {
    let dir = temp_dir("pp-ctl");
    let socket = dir.join("tern.sock");
    let toml = config_with_control(&socket, servers, backend);
    (Tern::run_in(dir, &toml), socket)
}

fn config_with_control(socket: &Path, servers: &[String], backend: &str) -> String {
    let mut config = Config::new()
        .global(&format!(
            "\n[control]\nsocket = {:?}",
            socket.to_str().unwrap()
        ))
        .backend(backend);
    for s in servers {
        config = config.raw_server(s);
    }
    config.toml()
}

fn ctl_ok(socket: &Path, words: &str) -> String {
    let mut args = vec!["ctl", "-s", socket.to_str().unwrap()];
    args.extend(words.split_whitespace());
    let (code, out, err) = tern_output(&args);
    assert_eq!(code, 0, "`{words}` failed: {out}{err}");
    out
}

/// A server's counter from `json show stat`.
fn counter(socket: &Path, server: &str, name: &str) -> u64 {
    let out = ctl_ok(socket, "json show stat");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let backends = v["output"]["backends"].as_array().unwrap();
    let s = backends[0]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == server)
        .unwrap_or_else(|| panic!("no server {server} in {out}"));
    s["counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name} in {s}"))
}

/// Waits (bounded) until `server`'s counter `name` reaches `at_least`.
fn wait_counter(socket: &Path, server: &str, name: &str, at_least: u64) {
    let deadline = Instant::now() + WAIT;
    while counter(socket, server, name) < at_least {
        assert!(
            Instant::now() < deadline,
            "{server} {name} stayed below {at_least}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How many of `n` GETs, each on a new connection, each server answered.
fn spread(addr: SocketAddr, n: usize) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for _ in 0..n {
        let mut s = TcpStream::connect(addr).unwrap();
        let got = get_on(&mut s);
        let name = got.head_value("x-term-server").unwrap();
        *seen.entry(name).or_default() += 1;
    }
    seen
}

fn reload(tern: &mut Tern, toml: &str) {
    std::fs::write(tern.dir.join("tern.toml"), toml).unwrap();
    tern.proc.signal("HUP");
    tern.proc.wait_line("reloaded:");
}

#[test]
fn a_disabled_server_is_neither_used_nor_checked_until_enabled() {
    let (a, b) = (
        Term::start_with("a", &["--accept-proxy"]),
        Term::start_with("b", &["--accept-proxy"]),
    );
    // Both expect a PROXY header: the checks pass only because they send one.
    let check = "check = { type = \"http\", interval = \"100ms\" }";
    let servers = [
        server("a", &a, "proxy_protocol = \"v2\", disabled = true"),
        server("b", &b, "proxy_protocol = \"v1\""),
    ];
    let (mut tern, socket) = tern_with_control(&servers, check);
    let addr = tern.addr();

    wait_counter(&socket, "b", "checks_passed", 3);
    assert_eq!(counter(&socket, "b", "checks_failed"), 0);
    assert_eq!(
        counter(&socket, "a", "checks_passed"),
        0,
        "a is not checked"
    );
    assert_eq!(
        counter(&socket, "a", "checks_failed"),
        0,
        "a is not checked"
    );
    let shown = ctl_ok(&socket, "show servers");
    assert!(shown.contains("MAINT"), "{shown}");
    assert_eq!(spread(addr, 4), HashMap::from([("b".to_owned(), 4)]));

    // Enabled, a is checked at once and takes its share.
    ctl_ok(&socket, "enable server app/a");
    wait_counter(&socket, "a", "checks_passed", 1);
    assert_eq!(counter(&socket, "a", "checks_failed"), 0);
    let seen = spread(addr, 4);
    assert_eq!((seen["a"], seen["b"]), (2, 2), "{seen:?}");

    // A reload of the same file keeps what the operator did.
    let same = config_with_control(&socket, &servers, check);
    reload(&mut tern, &same);
    assert_eq!(spread(addr, 4).len(), 2, "a stays enabled");

    // A file that changes `disabled` wins over a state nobody changed at runtime.
    let changed = [
        server("a", &a, "proxy_protocol = \"v2\""),
        server("b", &b, "proxy_protocol = \"v1\", disabled = true"),
    ];
    reload(&mut tern, &config_with_control(&socket, &changed, check));
    assert_eq!(spread(addr, 4), HashMap::from([("a".to_owned(), 4)]));
    tern.stop_clean();
}

#[test]
fn an_unknown_version_is_a_config_error() {
    let dir = temp_dir("pp-check");
    let path = dir.join("tern.toml");
    let toml = Config::new()
        .raw_server("{ name = \"s1\", address = \"127.0.0.1:1\", proxy_protocol = \"v3\" }")
        .toml();
    std::fs::write(&path, toml).unwrap();
    let done = tern_finish(&["check", "-c", path.to_str().unwrap()], WAIT);
    assert_eq!(done.code, Some(2), "{done:?}");
    assert!(
        done.stderr.contains("backend[0].servers[0].proxy_protocol")
            && done.stderr.contains("expected \"v1\" or \"v2\""),
        "{}",
        done.stderr
    );
}
