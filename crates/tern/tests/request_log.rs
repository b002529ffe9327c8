//! Request ids, captured fields and `log_format` (issue 18) through the real binary, with curl
//! as the client over HTTP/1.1 and HTTP/2 (TLS, ALPN `h2`): the id a `unique_id_format`
//! makes reaches the server in `unique_id_header` (read back from what a `tern term` received:
//! `h=1` echoes its request head), is read by `%[unique-id]` in a response rule, and is the
//! `%ID` of the access log line, which follows the frontend's `log_format` with its captured
//! request and response fields. A frontend without `log_format` writes its captures into tern's
//! own text line, as HAProxy's httplog does; a TCP frontend's `log_format` writes its sessions.
//! The same policy is written in TOML and in
//! HAProxy's `.cfg` syntax (converted by `tern convert`, to which the test adds the
//! `[access_log]` table: HAProxy's `log` targets are not converted). HAProxy itself, where
//! installed, runs the same `.cfg` beside tern: the lines of both, for the same requests, are
//! the same byte for byte (with a format of the variables that do not depend on timing or
//! ports). Mistakes are refused by `tern check` with file, line and key.

#![allow(clippy::unwrap_used)]

mod support;
use support::others::{free_port, Other};
use support::*;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use tern_tls::KeyKind;

const ID_FORMAT: &str = "%{+X}o %ci:%cp_%fi:%fp_%Ts_%rt:%pid";
const TCP_FORMAT: &str = "%ci %ft %b/%s %Tw/%Tc/%Tt %ts %rc %HM";
const LOG_FORMAT: &str = "%ci [%tr] %ft %b/%s %ST %tsc %rc %hr %hs %{+Q}r id=%ID \
                          ua=%[req.hdr(user-agent)] %HM %HP %HQ %HV %{+Q}[hdr(x-none)]";

/// Runs curl with `args` (bounded by `--max-time`), returns its output.
fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("curl runs (the tests need it: .ci/run installs it)")
}

/// curl's response head (lower-cased) and body for `url`, with extra `args`.
fn fetch(args: &[&str], url: &str) -> (String, String) {
    let mut all = vec!["-k", "-D", "/dev/stderr", "-A", "curl-test-agent"];
    all.extend_from_slice(args);
    all.push(url);
    let out = curl(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head = String::from_utf8_lossy(&out.stderr).to_ascii_lowercase();
    (head, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The TOML policy: a TLS frontend with an id, captures and a log format; a plain one with
/// captures only.
fn toml(cert: &str, term: &Term) -> String {
    format!(
        r#"[global]
workers = 1

[[frontend]]
name = "web"
bind = ["127.0.0.1:0"]
tls = {{ certs = ["{cert}"], alpn = ["h2", "http/1.1"] }}
default_backend = "app"
unique_id_format = "{ID_FORMAT}"
unique_id_header = "X-Unique-ID"
capture_request_headers = [{{ name = "Host", len = 9 }}, {{ name = "User-Agent", len = 8 }}]
capture_response_headers = [{{ name = "X-Term-Server", len = 2 }}]
log_format = "{LOG_FORMAT}"
http_response = [{{ action = "set-header", name = "X-ID", value = "%[unique-id]" }}]

[[frontend]]
name = "plain"
bind = ["127.0.0.1:0"]
default_backend = "app"
capture_request_headers = [{{ name = "User-Agent", len = 4 }}]

[[frontend]]
name = "raw"
mode = "tcp"
bind = ["127.0.0.1:0"]
default_backend = "tapp"
log_format = "{TCP_FORMAT}"

[[backend]]
name = "app"
servers = [{{ name = "t", address = "{addr}" }}]

[[backend]]
name = "tapp"
mode = "tcp"
servers = [{{ name = "t", address = "{addr}" }}]

[access_log]
target = "access.log"
"#,
        addr = term.addr
    )
}

/// The same policy in HAProxy's syntax (spaces of the formats escaped with `\`).
fn cfg(term: &Term) -> String {
    let escaped = |f: &str| f.replace(' ', "\\ ");
    format!(
        "global\n  nbthread 1\n\
         defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
         \x20 log-format {log}\n\
         frontend web\n  bind 127.0.0.1:0 ssl crt site.pem alpn h2,http/1.1\n\
         \x20 unique-id-format {id}\n  unique-id-header X-Unique-ID\n\
         \x20 capture request header Host len 9\n  capture request header User-Agent len 8\n\
         \x20 capture response header X-Term-Server len 2\n\
         \x20 http-response set-header X-ID %[unique-id]\n  default_backend app\n\
         frontend plain\n  bind 127.0.0.1:0\n  option httplog\n\
         \x20 capture request header User-Agent len 4\n  default_backend app\n\
         frontend raw\n  mode tcp\n  bind 127.0.0.1:0\n  log-format {tcp}\n  default_backend tapp\n\
         backend app\n  server t {addr}\n\
         backend tapp\n  mode tcp\n  server t {addr}\n",
        log = escaped(LOG_FORMAT),
        tcp = escaped(TCP_FORMAT),
        id = escaped(ID_FORMAT),
        addr = term.addr
    )
}

/// Runs tern on the TOML policy, and on the `.cfg` one converted (plus `[access_log]`).
fn both(term: &Term) -> Vec<Tern> {
    let dir = temp_dir("rlog-toml");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let toml_tern = Tern::run_in(dir, &toml(&cert, term));
    let dir = temp_dir("rlog-cfg");
    write_cert(&dir, "site", KeyKind::EcdsaP256);
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg(term)).unwrap();
    let out = tern_finish(
        &["convert", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let converted = format!("{}\n[access_log]\ntarget = \"access.log\"\n", out.stdout);
    let cfg_tern = Tern::run_in(dir, &converted);
    vec![toml_tern, cfg_tern]
}

/// The id a request got, as the server saw it (`x-unique-id` in the echoed head).
fn id_sent(body: &str) -> String {
    body.lines()
        .find_map(|l| l.strip_prefix("x-unique-id: "))
        .unwrap_or_else(|| panic!("no x-unique-id in {body}"))
        .to_owned()
}

#[test]
fn ids_reach_the_server_and_the_log_with_captures_over_http1_and_h2() {
    let term = Term::start("rlog");
    for tern in both(&term) {
        let port = tern.binds[0].1.port();
        let resolve = format!("localhost:{port}:127.0.0.1");
        let url = format!("https://localhost:{port}/x?h=1");
        let mut ids = Vec::new();
        for proto in ["--http1.1", "--http2"] {
            let (head, body) = fetch(&[proto, "--resolve", &resolve], &url);
            let id = id_sent(&body);
            // `%{+X}o %ci:%cp_%fi:%fp_%Ts_%rt:%pid`: hexadecimal addresses and numbers.
            let front = format!("_7F000001:{port:04X}_");
            assert!(id.starts_with("7F000001:"), "{id}");
            assert!(id.contains(&front), "{id}");
            assert!(id.ends_with(&format!(":{:04X}", tern.proc.pid())), "{id}");
            // `%[unique-id]` in a response rule reads the same id.
            let echoed = format!("\r\nx-id: {}\r\n", id.to_ascii_lowercase());
            assert!(head.contains(&echoed), "{head}");
            ids.push(id);
        }
        assert_ne!(ids[0], ids[1], "ids are unique");
        let plain = format!("http://127.0.0.1:{}/p", tern.binds[1].1.port());
        let (head, _) = fetch(&[], &plain);
        assert!(head.starts_with("http/1.1 200"), "{head}");
        let tcp = format!("http://127.0.0.1:{}/t", tern.binds[2].1.port());
        let (head, _) = fetch(&["-H", "Connection: close"], &tcp);
        assert!(head.starts_with("http/1.1 200"), "{head}");
        let dir = tern.dir.clone();
        tern.stop();
        let log = std::fs::read_to_string(dir.join("access.log")).unwrap();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 4, "{log}");
        // A TCP session's line: its timers, state and retries; HTTP variables have no request.
        assert!(
            lines[3].starts_with("127.0.0.1 raw tapp/t "),
            "{}",
            lines[3]
        );
        assert!(lines[3].ends_with(" -- 0 <BADREQ>"), "{}", lines[3]);
        for (line, (id, version)) in lines.iter().zip(ids.iter().zip(["1.1", "2.0"])) {
            assert!(line.starts_with("127.0.0.1 ["), "{line}");
            let middle = format!(
                " web~ app/t 200 ---- 0 {{localhost|curl-tes}} {{rl}} \"GET /x?h=1 HTTP/{version}\" \
                 id={id} ua=curl-test-agent GET /x ?h=1 HTTP/{version} \"\""
            );
            assert!(line.ends_with(&middle), "{line}\n{middle}");
        }
        // tern's own line, with the capture before the request as in httplog.
        assert!(
            lines[2].contains(" {curl} \"GET /p HTTP/1.1\" "),
            "{}",
            lines[2]
        );
    }
}

#[test]
fn check_refuses_what_tern_would_log_differently() {
    let dir = temp_dir("rlog-check");
    let toml = "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\
                log_format = \"%ci %ac\"\nunique_id_format = \"%ci-%ST\"\n\n\
                [[backend]]\nname = \"b\"\nservers = [{ name = \"s\", address = \"127.0.0.1:1\" }]\n";
    let path = dir.join("bad.toml");
    std::fs::write(&path, toml).unwrap();
    let out = tern_finish(
        &["check", "-c", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("bad.toml:5: frontend[0].log_format: `%ac` is not supported yet"),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("bad.toml:6: frontend[0].unique_id_format: `%ST` is not known yet"),
        "{out:?}"
    );
    let head =
        "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
                frontend f\n  bind 127.0.0.1:0\n";
    let tail = "  default_backend b\nbackend b\n  server s 127.0.0.1:1\n";
    let unknown = format!("{head}  log-format %ci\\ %zz\n{tail}");
    check_cfg(
        &dir,
        &unknown,
        &["bad.cfg:8:", "`%zz` is not a log-format variable"],
    );
    let len = format!("{head}  capture request header Host len x\n{tail}");
    check_cfg(&dir, &len, &["bad.cfg:8:", "'len x'"]);
    let unquoted = "defaults\n  mode http\nfrontend f\n  bind 127.0.0.1:0\n  log-format %ci %b\n\
                    \x20 default_backend b\nbackend b\n  server s 127.0.0.1:1\n";
    check_cfg(&dir, unquoted, &["bad.cfg:5:", "expects one argument"]);
}

/// `tern check` refuses `cfg` with each of `needles` in its errors.
fn check_cfg(dir: &Path, cfg: &str, needles: &[&str]) {
    let path = dir.join("bad.cfg");
    std::fs::write(&path, cfg).unwrap();
    let out = tern_finish(
        &["check", "-c", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    for needle in needles {
        assert!(out.stderr.contains(needle), "{needle}: {out:?}");
    }
}

/// The same `.cfg` for HAProxy and tern, but for `bind`: a format of the variables that do not
/// depend on the moment, the ports or the programs' own answers.
fn same_cfg(bind: &str, term: &Term) -> String {
    let format = "%ft %b/%s %ST %tsc %rc %hr %hs %hrl %hsl %{+Q}r %HM %HU %HP %HPO %HQ %HV %CC \
                  %CS %{+Q}[var(txn.none)] %[var(txn.none)] %{+E}HU %{+Q}HM id=%ID";
    format!(
        "global\n  log stdout format raw local0\n\
         defaults\n  mode http\n  log global\n  option dontlognull\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
         frontend web\n  bind {bind}\n  unique-id-format id-%HM-%HPO\n\
         \x20 capture request header X-Test len 9\n  capture request header X-None len 5\n\
         \x20 capture response header X-Term-Server len 4\n\
         \x20 log-format \"{format}\"\n  default_backend app\n\
         backend app\n  server t {addr}\n",
        addr = term.addr
    )
}

/// Sends `request` on a new connection to `addr` and reads the answer until the close.
fn send(addr: SocketAddr, request: &[u8]) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(request).unwrap();
    let _ = read_until_closed(&mut s, Duration::from_secs(10));
}

#[test]
fn lines_are_haproxy_s_for_the_same_cfg() {
    if !have("haproxy") {
        eprintln!("skipped: haproxy is not installed");
        return;
    }
    let term = Term::start("hx");
    let dir = temp_dir("rlog-haproxy");
    let port = free_port();
    let haproxy = Other::haproxy(
        &dir,
        &same_cfg(&format!("127.0.0.1:{port}"), &term),
        &[port],
    );
    let path = dir.join("tern.cfg");
    std::fs::write(&path, same_cfg("127.0.0.1:0", &term)).unwrap();
    let out = tern_finish(
        &["convert", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let toml = format!("{}\n[access_log]\ntarget = \"access.log\"\n", out.stdout);
    let tern = Tern::run_in(dir.clone(), &toml);
    let requests: [&[u8]; 3] = [
        b"GET /a%22b]?x=1 HTTP/1.1\r\nHost: h\r\nX-Test: a{|}\"#z\r\nConnection: close\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        b"BAD\r\n\r\n",
    ];
    for request in requests {
        send(SocketAddr::from(([127, 0, 0, 1], port)), request);
        send(tern.addr(), request);
    }
    let theirs = haproxy.wait_log("web web/<NOSRV>", Duration::from_secs(10));
    tern.stop();
    let ours = std::fs::read_to_string(dir.join("access.log")).unwrap();
    let theirs: Vec<&str> = theirs.lines().filter(|l| l.starts_with("web")).collect();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), 3);
}
