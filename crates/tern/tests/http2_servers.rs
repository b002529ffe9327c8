//! HTTP/2 to servers (`proto = "h2"`, and `h2` in a TLS server's `alpn`) through the real
//! binary, with servers and clients written by others:
//! - `nghttpd` (Debian's nghttp2-server, which speaks nothing but HTTP/2) with `--echo-upload`,
//!   as an h2c server and as a TLS server picking `h2` by ALPN: HTTP/1.1 clients (curl, h2load)
//!   through tern get files, HEAD, errors, uploads by length and chunked, and many concurrent
//!   requests share one connection, or several when the server's stream limit is low;
//! - Python's `grpcio` (tests/clients/grpc_server.py and grpc_client.py, raw-bytes methods, no
//!   code generation) for gRPC end to end, h2c on both sides and TLS on both sides: unary and
//!   streaming calls each way and both ways, trailers (`grpc-status`, `grpc-message`, custom
//!   trailing metadata), deadlines, and a cancellation that must reach the server;
//! - server resets: before the response head (`tern term`'s `x=N` over HTTP/2: a 502) and in
//!   the middle of the body (tests/clients/h2_reset_server.py, on Python's h2): the client's
//!   stream is reset or its connection cut, never a short body taken for a whole one.
//!
//! `.ci/run` installs nghttp2-server and grpcio.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use tern_tls::KeyKind;

fn script(name: &str) -> String {
    format!("{}/tests/clients/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("curl runs (the tests need it: .ci/run installs it)")
}

/// A child process killed on drop, its stdout lines on a channel.
struct Server {
    child: Child,
    lines: Receiver<String>,
}

impl Server {
    fn spawn(cmd: &mut Command, what: &str) -> Server {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} runs (.ci/run installs it): {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server { child, lines }
    }

    /// Waits for a line starting with `prefix`; returns the rest.
    fn wait_line(&self, prefix: &str, limit: Duration) -> Option<String> {
        let until = std::time::Instant::now() + limit;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return Some(rest.to_owned());
                    }
                }
                Err(_) => return None,
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port (the listener is closed before the server binds it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `nghttpd` serving `dir` with uploads echoed: h2c, or TLS with `cert` (`.crt` and `.key`
/// beside it) and extra options.
fn nghttpd(dir: &Path, tls: Option<&Path>, extra: &[&str]) -> (Server, u16) {
    let port = free_port();
    let mut cmd = Command::new("nghttpd");
    cmd.args(["--echo-upload", "-d", dir.to_str().unwrap()])
        .args(extra)
        .arg(port.to_string());
    match tls {
        None => {
            cmd.arg("--no-tls");
        }
        Some(cert) => {
            cmd.arg(cert.with_extension("key"))
                .arg(cert.with_extension("crt"));
        }
    }
    let server = Server::spawn(&mut cmd, "nghttpd");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (server, port);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nghttpd did not listen on {port}");
}

/// A directory with `index.html` (6 bytes) and `big` (1 MiB of noise).
fn site(tag: &str) -> (PathBuf, Vec<u8>) {
    let dir = temp_dir(tag).join("www");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.html"), "hello\n").unwrap();
    let big = garbage(1 << 20, 7);
    std::fs::write(dir.join("big"), &big).unwrap();
    (dir, big)
}

/// tern (one worker, so connection counts are exact) over one server `server` (a TOML
/// table's fields) and extra frontend lines.
fn tern(tag: &str, server: &str, frontend: &[&str]) -> Tern {
    let mut cfg = Config::new().raw_server(&format!("{{ name = \"s1\", {server} }}"));
    for line in frontend {
        cfg = cfg.frontend(line);
    }
    Tern::run_in(temp_dir(tag), &cfg.toml())
}

fn url(tern: &Tern, path: &str) -> String {
    format!("http://127.0.0.1:{}{path}", tern.addr().port())
}

#[test]
fn http1_clients_reach_an_h2c_server() {
    let (dir, big) = site("h2s-h2c");
    let (_server, port) = nghttpd(&dir, None, &[]);
    let t = tern(
        "h2s-h2c-tern",
        &format!("address = \"127.0.0.1:{port}\", proto = \"h2\""),
        &[],
    );

    let out = curl(&["-i", &url(&t, "/index.html")]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains("server: nghttpd"), "{text}");
    assert!(text.ends_with("\r\n\r\nhello\n"), "{text}");

    assert_eq!(curl(&[&url(&t, "/big")]).stdout, big, "1 MiB download");

    let head = curl(&["-I", &url(&t, "/big")]);
    let head = String::from_utf8_lossy(&head.stdout).into_owned();
    assert!(head.contains("content-length: 1048576"), "{head}");

    let missing = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &url(&t, "/nothing"),
    ]);
    assert_eq!(String::from_utf8_lossy(&missing.stdout), "404");

    // Uploads, by length and chunked, come back whole (nghttpd echoes them).
    let upload = dir.join("big");
    let upload = format!("@{}", upload.display());
    let by_length = curl(&["--data-binary", &upload, &url(&t, "/echo")]);
    assert_eq!(by_length.stdout, big, "upload with a length");
    let chunked = curl(&[
        "-H",
        "Transfer-Encoding: chunked",
        "--data-binary",
        &upload,
        &url(&t, "/echo"),
    ]);
    assert_eq!(chunked.stdout, big, "chunked upload");

    let c = t.stop();
    assert_eq!(c.get("server app/s1", "requests"), 6, "{:?}", c.0);
    assert_eq!(
        c.get("server app/s1", "connects"),
        1,
        "one connection for all"
    );
    assert_eq!(c.get("server app/s1", "reused"), 5);
}

#[test]
fn concurrent_requests_share_connections_within_the_stream_limit() {
    if !have("h2load") {
        panic!("h2load is needed (.ci/run installs nghttp2-client)");
    }
    let (dir, _) = site("h2s-limit");
    // The server allows 4 streams per connection; 32 clients fetch 1 MiB at once.
    let (_server, port) = nghttpd(&dir, None, &["-m", "4"]);
    let t = tern(
        "h2s-limit-tern",
        &format!("address = \"127.0.0.1:{port}\", proto = \"h2\""),
        &[],
    );
    let out = Command::new("h2load")
        .args([
            "--h1",
            "-c",
            "32",
            "-n",
            "320",
            "-T",
            "20",
            &url(&t, "/big"),
        ])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(report.contains("320 succeeded, 0 failed"), "{report}");
    let c = t.stop();
    let connects = c.get("server app/s1", "connects");
    // At least 32 / 4 connections were needed at the busiest moment; each carries streams.
    assert!(
        (8..320).contains(&connects),
        "connects = {connects}: {:?}",
        c.0
    );
    assert_eq!(c.get("server app/s1", "requests"), 320);
}

#[test]
fn a_tls_server_picking_h2_by_alpn_gets_http2() {
    let (dir, big) = site("h2s-alpn");
    let cert_dir = temp_dir("h2s-alpn-cert");
    write_cert(&cert_dir, "origin", KeyKind::EcdsaP256);
    let (_server, port) = nghttpd(&dir, Some(&cert_dir.join("origin.pem")), &[]);
    // nghttpd speaks only HTTP/2: a successful exchange means h2 was negotiated.
    let t = tern(
        "h2s-alpn-tern",
        &format!(
            "address = \"127.0.0.1:{port}\", \
             tls = {{ verify = \"none\", alpn = [\"h2\", \"http/1.1\"] }}"
        ),
        &[],
    );
    let out = curl(&["-i", &url(&t, "/index.html")]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("server: nghttpd"), "{text}");
    assert_eq!(curl(&[&url(&t, "/big")]).stdout, big);
    let c = t.stop();
    assert_eq!(c.get("server app/s1", "connects"), 1, "{:?}", c.0);
}

#[test]
fn a_tls_server_picking_http1_by_alpn_gets_http1() {
    let cert_dir = temp_dir("h2s-alpn-h1-cert");
    write_cert(&cert_dir, "origin", KeyKind::EcdsaP256);
    // Python's standard library server, offering only http/1.1.
    let origin = Server::spawn(
        Command::new("python3")
            .arg(script("https_origin.py"))
            .arg(cert_dir.join("origin.crt"))
            .arg(cert_dir.join("origin.key")),
        "python3",
    );
    let port = origin
        .wait_line("port ", Duration::from_secs(20))
        .expect("the HTTPS origin printed no port");
    let t = tern(
        "h2s-alpn-h1-tern",
        &format!(
            "address = \"127.0.0.1:{port}\", \
             tls = {{ verify = \"none\", alpn = [\"h2\", \"http/1.1\"] }}"
        ),
        &[],
    );
    for _ in 0..3 {
        let out = curl(&[&url(&t, "/")]);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "origin\n");
    }
    let c = t.stop();
    assert_eq!(c.get("server app/s1", "connects"), 1, "pooled as HTTP/1.1");
    assert_eq!(c.get("server app/s1", "reused"), 2);
}

/// The gRPC server, started (plain, or TLS with `cert`'s `.crt` and `.key`); its port.
fn grpc_server(cert: Option<&Path>) -> (Server, u16) {
    let mut cmd = Command::new("python3");
    cmd.arg(script("grpc_server.py"));
    if let Some(cert) = cert {
        cmd.arg("--tls")
            .arg(cert.with_extension("crt"))
            .arg(cert.with_extension("key"));
    }
    let server = Server::spawn(&mut cmd, "python3 with grpcio");
    let port = server
        .wait_line("port ", Duration::from_secs(30))
        .expect("the gRPC server printed no port (is grpcio installed?)");
    (server, port.parse().unwrap())
}

/// Runs the gRPC client in `mode` against `target`; asserts it printed "ok".
fn grpc_client(mode: &str, target: &str, ca: Option<&Path>) {
    let mut cmd = Command::new("timeout");
    cmd.args(["60", "python3", &script("grpc_client.py"), mode, target]);
    if let Some(ca) = ca {
        cmd.arg("--ca").arg(ca);
    }
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stdout.trim_end().ends_with("ok"),
        "gRPC client ({mode}) failed:\n{stdout}\n{stderr}"
    );
}

/// Every gRPC check, then a cancellation the server must see.
fn grpc_through(t: &Tern, server: &Server, ca: Option<&Path>) {
    let target = format!("127.0.0.1:{}", t.addr().port());
    grpc_client("calls", &target, ca);
    // The deadline test let a call expire: its cancellation is not the one checked below.
    while server
        .wait_line("cancelled", Duration::from_millis(500))
        .is_some()
    {}
    grpc_client("cancel", &target, ca);
    assert!(
        server
            .wait_line("cancelled Hold", Duration::from_secs(5))
            .is_some(),
        "the client's cancellation did not reach the server"
    );
}

#[test]
fn grpc_over_h2c_on_both_sides() {
    let (server, port) = grpc_server(None);
    let t = tern(
        "h2s-grpc-h2c",
        &format!("address = \"127.0.0.1:{port}\", proto = \"h2\""),
        &["http2 = { cleartext = true }"],
    );
    grpc_through(&t, &server, None);
    let c = t.stop();
    assert_eq!(c.get("server app/s1", "connects"), 1, "{:?}", c.0);
    // Nine calls, each a stream; the expired and the cancelled one are client aborts.
    assert_eq!(c.get("frontend web", "h2_streams"), 9, "{:?}", c.0);
    assert_eq!(c.get("server app/s1", "requests"), 9);
    assert_eq!(c.get("frontend web", "client_aborts"), 2);
}

#[test]
fn grpc_over_tls_on_both_sides() {
    let dir = temp_dir("h2s-grpc-tls");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    write_cert(&dir, "origin", KeyKind::EcdsaP256);
    let (server, port) = grpc_server(Some(&dir.join("origin.pem")));
    let cfg = Config::new()
        .frontend(&format!(
            "tls = {{ certs = [{cert:?}], alpn = [\"h2\", \"http/1.1\"] }}"
        ))
        .raw_server(&format!(
            "{{ name = \"s1\", address = \"127.0.0.1:{port}\", proto = \"h2\", \
             tls = {{ verify = \"required\", ca = {:?}, sni = \"localhost\" }} }}",
            dir.join("origin.crt").to_str().unwrap()
        ));
    let t = Tern::run_in(dir.clone(), &cfg.toml());
    grpc_through(&t, &server, Some(&dir.join("site.crt")));
    let c = t.stop();
    assert_eq!(c.get("server app/s1", "connects"), 1, "{:?}", c.0);
}

/// tern with a TLS bind offering h2 and http/1.1, over one HTTP/2 server at `addr` (h2c).
fn tern_h2_both(tag: &str, addr: &str) -> Tern {
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg = Config::new()
        .frontend(&format!(
            "tls = {{ certs = [{cert:?}], alpn = [\"h2\", \"http/1.1\"] }}"
        ))
        .raw_server(&format!(
            "{{ name = \"s1\", address = \"{addr}\", proto = \"h2\" }}"
        ));
    Tern::run_in(dir, &cfg.toml())
}

/// curl over TLS to `path` on tern, with `version` (`--http2`, `--http1.1`): its exit code and
/// the status it printed.
fn curl_status(t: &Tern, version: &str, path: &str) -> (Option<i32>, String) {
    let port = t.addr().port();
    let resolve = format!("localhost:{port}:127.0.0.1");
    let url = format!("https://localhost:{port}{path}");
    let out = curl(&[
        "-k",
        version,
        "--resolve",
        &resolve,
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &url,
    ]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A server that resets a stream before its response (`tern term`'s `x=N` over HTTP/2, whose
/// reset comes before the head): the client gets a 502, whatever it speaks.
#[test]
fn a_server_reset_before_the_response_is_a_502() {
    let term = Term::start("h2s-reset-head");
    let t = tern_h2_both("h2s-reset-head-tern", &term.addr.to_string());
    for version in ["--http2", "--http1.1"] {
        let (code, status) = curl_status(&t, version, "/?s=100k&x=1000");
        assert_eq!((code, status.as_str()), (Some(0), "502"), "{version}");
    }
    assert_eq!(curl_status(&t, "--http2", "/?s=1k").1, "200");
    let c = t.stop();
    assert_eq!(c.get("backend app", "upstream_errors"), 2, "{:?}", c.0);
}

/// A server that resets a stream in the middle of its response (a Python h2 server: a 200 with
/// a length, 1000 bytes, RST_STREAM): an HTTP/2 client sees its own stream reset (curl's exit
/// 92), an HTTP/1.1 client its connection cut (exit 18, partial file); never a short body
/// taken for a whole one.
#[test]
fn a_server_reset_mid_response_reaches_the_client() {
    let server = Server::spawn(
        Command::new("python3").arg(script("h2_reset_server.py")),
        "python3 with h2",
    );
    let port = server
        .wait_line("port ", Duration::from_secs(20))
        .expect("the reset server printed no port (is h2 installed?)");
    let t = tern_h2_both("h2s-reset-body", &format!("127.0.0.1:{port}"));
    for (version, expected) in [("--http2", 92), ("--http1.1", 18)] {
        let (code, _) = curl_status(&t, version, "/");
        assert_eq!(code, Some(expected), "{version}");
    }
    let c = t.stop();
    assert_eq!(c.get("backend app", "aborted_responses"), 2, "{:?}", c.0);
}

/// Three servers on one HTTP/2-only origin: one whose checks follow its `proto = "h2"`, one
/// whose checks are told to speak HTTP/1.1 (nghttpd cannot answer them), one on an HTTP/1.1
/// path (`check.proto = "h2"` on a server spoken to in HTTP/1.1 by requests).
fn h2_checks(tag: &str, port: u16, tls: &str, kind: &str) {
    let check = |extra: &str| {
        format!(
            "check = {{ type = \"{kind}\", interval = \"500ms\", path = \"/index.html\", \
             expect_body = \"hello\", fall = 1, rise = 1{extra} }}"
        )
    };
    let cfg = Config::new()
        .raw_server(&format!(
            "{{ name = \"follows\", address = \"127.0.0.1:{port}\", proto = \"h2\"{tls}, {} }}",
            check("")
        ))
        .raw_server(&format!(
            "{{ name = \"h1\", address = \"127.0.0.1:{port}\", proto = \"h2\"{tls}, {} }}",
            check(", proto = \"h1\"")
        ))
        .raw_server(&format!(
            "{{ name = \"told\", address = \"127.0.0.1:{port}\", weight = 0{tls}, {} }}",
            check(", proto = \"h2\"")
        ));
    let t = Tern::run_in(temp_dir(tag), &cfg.toml());
    // Bounded wait for the failing server's verdict, then time for a few more checks.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let down = |t: &Tern| {
        t.proc
            .stderr_text()
            .lines()
            .any(|l| l.contains("server is DOWN") && l.contains("server=h1") && l.contains("L7RSP"))
    };
    while !down(&t) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(down(&t), "{}", t.proc.stderr_text());
    std::thread::sleep(Duration::from_millis(1200));
    // The server whose checks pass serves: nghttpd answers through tern.
    let out = curl(&[&url(&t, "/index.html")]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    let log = t.proc.stderr_text();
    let c = t.stop();
    // A check in flight when tern stops may count as failed: the verdicts are read from the
    // transitions logged before the stop, and the passes from the counters.
    for server in ["follows", "told"] {
        let passed = c.get(&format!("server app/{server}"), "checks_passed");
        let went_down = log
            .lines()
            .any(|l| l.contains("server is DOWN") && l.contains(&format!("server={server}")));
        assert!(
            passed >= 2 && !went_down,
            "{server}: {passed} passed:\n{log}"
        );
    }
    assert_eq!(c.get("server app/h1", "checks_passed"), 0);
}

#[test]
fn checks_of_an_h2c_server_speak_http2() {
    let (dir, _) = site("h2s-check");
    let (_server, port) = nghttpd(&dir, None, &[]);
    h2_checks("h2s-check-tern", port, "", "http");
}

#[test]
fn checks_of_an_h2_server_over_tls_offer_alpn_h2() {
    let (dir, _) = site("h2s-check-tls");
    let cert_dir = temp_dir("h2s-check-tls-cert");
    write_cert(&cert_dir, "origin", KeyKind::EcdsaP256);
    let (_server, port) = nghttpd(&dir, Some(&cert_dir.join("origin.pem")), &[]);
    h2_checks(
        "h2s-check-tls-tern",
        port,
        ", tls = { verify = \"none\" }",
        "https",
    );
}
