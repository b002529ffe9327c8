//! HTTP/2 clients through the real binary, with clients written by others: curl (ALPN `h2` on
//! TLS, and h2c with prior knowledge on a plain bind) and h2load (many streams per connection).
//! Each stream is one request to the HTTP/1.1 `tern term` servers: bodies both ways, HEAD,
//! routing rules and the monitor URI per stream, one access log line per stream with its id,
//! the frontend's HTTP/2 counters, and a graceful stop that lets a stream in flight finish.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use tern_tls::KeyKind;

/// Runs curl with `args` (bounded by `--max-time`), returns its output.
fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("curl runs (the tests need it: .ci/run installs it)")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// tern with one TLS bind (ECDSA) offering `h2`, over `terms`, with extra frontend lines.
fn tern_h2(tag: &str, terms: &[&Term], frontend: &[&str], access_log: Option<&Path>) -> Tern {
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let mut cfg = Config::new()
        .frontend(&format!(
            "tls = {{ certs = [{cert:?}], alpn = [\"h2\", \"http/1.1\"] }}"
        ))
        .terms(terms);
    for line in frontend {
        cfg = cfg.frontend(line);
    }
    let mut toml = cfg.toml();
    if let Some(path) = access_log {
        toml.push_str(&format!(
            "\n[access_log]\ntarget = {:?}\nformat = \"json\"\n",
            path.to_str().unwrap()
        ));
    }
    Tern::run_in(dir, &toml)
}

fn https(tern: &Tern, path: &str) -> String {
    format!("https://localhost:{}{path}", tern.addr().port())
}

fn resolve(tern: &Tern) -> String {
    format!("localhost:{}:127.0.0.1", tern.addr().port())
}

#[test]
fn curl_negotiates_h2_and_gets_bodies_both_ways() {
    let term = Term::start("h2-a");
    let tern = tern_h2("h2-basic", &[&term], &[], None);
    let resolve = resolve(&tern);

    // A GET: HTTP/2 negotiated, the server's response relayed.
    let out = curl(&[
        "-k",
        "--http2",
        "--resolve",
        &resolve,
        "-w",
        "\n%{http_version} %{http_code}",
        &https(&tern, "/?s=2000"),
    ]);
    let body = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(body.ends_with("\n2 200"), "{body}");
    assert_eq!(body.len(), 2000 + "\n2 200".len());

    // A 16 MiB download: flow control over many windows, every byte there.
    let dir = temp_dir("h2-download");
    let file = dir.join("big");
    let out = curl(&[
        "-k",
        "--http2",
        "--resolve",
        &resolve,
        "-o",
        file.to_str().unwrap(),
        "-w",
        "%{http_version} %{size_download}",
        &https(&tern, "/?s=16m"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("2 {}", 16 << 20));
    let got = std::fs::read(&file).unwrap();
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, &b)| b == tern_term::fill_byte(i as u64)));

    // An upload without content-length (sent chunked to the server) echoed back.
    let upload = dir.join("up");
    let sent: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&upload, &sent).unwrap();
    let echoed = dir.join("echoed");
    let out = curl(&[
        "-k",
        "--http2",
        "--resolve",
        &resolve,
        "-H",
        "Transfer-Encoding: chunked",
        "--data-binary",
        &format!("@{}", upload.to_str().unwrap()),
        "-o",
        echoed.to_str().unwrap(),
        "-w",
        "%{http_version} %{http_code}",
        &https(&tern, "/?e=1"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "2 200");
    assert!(std::fs::read(&echoed).unwrap() == sent, "echo differs");

    // HEAD: the headers of a GET, no body, the stream ends at once.
    let out = curl(&[
        "-k",
        "--http2",
        "--resolve",
        &resolve,
        "-I",
        &https(&tern, "/?s=5000"),
    ]);
    let head = text(&out.stdout).to_ascii_lowercase();
    assert!(head.starts_with("http/2 200"), "{head}");
    assert!(head.contains("content-length: 5000"), "{head}");

    let c = tern.stop();
    let fe = |k| c.get("frontend web", k);
    assert_eq!(fe("h2_sessions"), 4, "{c:?}");
    assert_eq!(fe("h2_streams"), 4, "{c:?}");
    assert_eq!(fe("requests"), 4, "{c:?}");
    assert_eq!(fe("h2_errors"), 0, "{c:?}");
}

#[test]
fn h2c_with_prior_knowledge_on_a_plain_bind() {
    let term = Term::start("h2c");
    let cfg = Config::new()
        .frontend("http2 = { cleartext = true }")
        .terms(&[&term]);
    let tern = Tern::run(&cfg.toml());
    let out = curl(&[
        "--http2-prior-knowledge",
        "-w",
        "\n%{http_version} %{http_code}",
        &format!("http://{}/?s=10", tern.addr()),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).ends_with("\n2 200"),
        "{}",
        text(&out.stdout)
    );
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "h2_sessions"), 1);
}

#[test]
fn rules_monitor_uri_and_access_log_apply_per_stream() {
    let (a, b) = (Term::start("h2-rule-a"), Term::start("h2-rule-b"));
    let log_dir = temp_dir("h2-log");
    let log = log_dir.join("access.log");
    // Requests under /b go to the second backend: a rule evaluated per stream.
    let dir = temp_dir("h2-rules");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let toml = format!(
        "[global]\nworkers = 1\n\n[[frontend]]\nname = \"web\"\nbind = [\"127.0.0.1:0\"]\n\
         monitor_uri = \"/test\"\ndefault_backend = \"a\"\n\
         tls = {{ certs = [{cert:?}], alpn = [\"h2\", \"http/1.1\"] }}\n\
         use_backend = [ {{ backend = \"b\", if = \"{{ path_beg /b }}\" }} ]\n\n\
         [[backend]]\nname = \"a\"\nservers = [ {{ name = \"a\", address = \"{}\" }} ]\n\n\
         [[backend]]\nname = \"b\"\nservers = [ {{ name = \"b\", address = \"{}\" }} ]\n\n\
         [access_log]\ntarget = {:?}\nformat = \"json\"\n",
        a.addr,
        b.addr,
        log.to_str().unwrap()
    );
    let tern = Tern::run_in(dir, &toml);
    let resolve = resolve(&tern);
    // Three streams on one connection (curl multiplexes URLs given together).
    let out = curl(&[
        "-k",
        "--http2",
        "--resolve",
        &resolve,
        "-D",
        "-",
        &https(&tern, "/a"),
        &https(&tern, "/b/x"),
        &https(&tern, "/test"),
    ]);
    let all = text(&out.stdout).to_ascii_lowercase();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(all.contains("x-term-server: h2-rule-a"), "{all}");
    assert!(all.contains("x-term-server: h2-rule-b"), "{all}");
    assert_eq!(all.matches("http/2 200").count(), 3, "{all}");

    let c = tern.stop();
    assert_eq!(c.get("frontend web", "h2_sessions"), 1, "{c:?}");
    assert_eq!(c.get("frontend web", "h2_streams"), 3, "{c:?}");
    assert_eq!(c.get("frontend web", "monitor"), 1, "{c:?}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let mut streams: Vec<u64> = lines
        .iter()
        .map(|l| l["stream"].as_u64().unwrap())
        .collect();
    streams.sort();
    assert_eq!(streams, [1, 3, 5], "{lines:?}");
    for l in &lines {
        assert_eq!(l["version"], "HTTP/2.0", "{l}");
        assert_eq!(l["status"], 200, "{l}");
    }
    let by_path = |p: &str| lines.iter().find(|l| l["path"] == p).unwrap().clone();
    assert_eq!(by_path("/b/x")["backend"], "b");
    assert_eq!(by_path("/a")["backend"], "a");
}

#[test]
fn h2load_runs_many_streams_per_connection_without_errors() {
    if !have("h2load") {
        // Debian's nghttp2-client; .ci/run installs it.
        panic!("h2load is needed: apt-get install nghttp2-client");
    }
    let term = Term::start("h2load");
    let tern = tern_h2("h2-load", &[&term], &[], None);
    let out = Command::new("h2load")
        .args([
            "-n",
            "2000",
            "-c",
            "4",
            "-m",
            "32",
            &format!("https://127.0.0.1:{}/?s=1k", tern.addr().port()),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", text(&out.stderr));
    assert!(report.contains("Application protocol: h2"), "{report}");
    assert!(
        report.contains("2000 succeeded, 0 failed, 0 errored"),
        "{report}"
    );
    assert!(report.contains("2000 2xx"), "{report}");
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "h2_streams"), 2000, "{c:?}");
    assert_eq!(c.get("frontend web", "h2_errors"), 0, "{c:?}");
}

#[test]
fn a_stop_lets_a_stream_in_flight_finish() {
    let term = Term::start("h2-stop");
    let tern = tern_h2("h2-stop", &[&term], &[], None);
    let resolve = resolve(&tern);
    let url = https(&tern, "/?t=700&s=100");
    let slow = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "20",
            "-k",
            "--http2",
            "--resolve",
            &resolve,
            "-w",
            "\n%{http_version} %{http_code}",
            &url,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The request is on its way once the server holds it (t=700 ms); stop tern meanwhile.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let c = tern.stop();
    let out = slow.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).ends_with("\n2 200"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(c.get("frontend web", "h2_streams"), 1, "{c:?}");
}

#[test]
fn rapid_reset_ends_the_connection_with_enhance_your_calm() {
    let term = Term::start("h2-reset");
    let tern = tern_h2("h2-reset", &[&term], &[], None);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/clients/h2_rapid_reset.py"
    );
    let out = Command::new("python3")
        .args([script, "127.0.0.1", &tern.addr().port().to_string(), "2000"])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}\n{} (Python's h2 package: .ci/run installs it)",
        text(&out.stdout),
        text(&out.stderr)
    );
    // ENHANCE_YOUR_CALM (0xb).
    assert_eq!(text(&out.stdout).trim(), "goaway 11");
    // Another client is served meanwhile.
    let out = curl(&[
        "-k",
        "--http2",
        "--resolve",
        &resolve(&tern),
        "-w",
        "%{http_version} %{http_code}",
        "-o",
        "/dev/null",
        &https(&tern, "/?s=10"),
    ]);
    assert_eq!(text(&out.stdout), "2 200", "{}", text(&out.stderr));
    let c = tern.stop();
    assert!(c.get("frontend web", "h2_errors") >= 1, "{c:?}");
    // At most the streams of one connection's limit reached the server.
    assert!(c.get("backend app", "requests") <= 101, "{c:?}");
}

#[test]
fn a_response_head_larger_than_the_request_limit_reaches_an_h2_client() {
    // A server whose response head (20 KiB of one field) is within what tern accepts from
    // servers but above the frontend's 16 KiB request-head limit.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let big = "a".repeat(20 * 1024);
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut s, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "the request never came whole");
            got.extend_from_slice(&buf[..n]);
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\nx-big: {big}\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
        );
        s.write_all(head.as_bytes()).unwrap();
    });
    let dir = temp_dir("h2-big-head");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg = Config::new()
        .frontend(&format!(
            "tls = {{ certs = [{cert:?}], alpn = [\"h2\", \"http/1.1\"] }}"
        ))
        .server("raw", &addr.to_string(), 1);
    let tern = Tern::run_in(dir, &cfg.toml());
    let out = curl(&[
        "-k",
        "--http2",
        "--resolve",
        &resolve(&tern),
        "-D",
        "-",
        &https(&tern, "/big"),
    ]);
    let text = text(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("HTTP/2 200"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(text.contains(&format!("x-big: {}", "a".repeat(20 * 1024))));
    assert!(
        text.ends_with("ok"),
        "{}",
        &text[text.len().saturating_sub(100)..]
    );
    server.join().unwrap();
    tern.stop();
}

/// Runs `clients/h2_idle.py` against `addr` (`tls` or `h2c`): requests with idle times past the
/// second after which a connection gives back its buffers (`http2/idle.rs`) between them.
fn idle_client(addr: std::net::SocketAddr, mode: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/h2_idle.py");
    let out = Command::new("python3")
        .args([script, "127.0.0.1", &addr.port().to_string(), mode, "1.5"])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}\n{} (Python's h2 package: .ci/run installs it)",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[test]
fn a_connection_serves_again_after_giving_back_its_idle_buffers() {
    let term = Term::start("h2-idle");
    let tern = tern_h2("h2-idle", &[&term], &[], None);
    let h2c = Tern::run(
        &Config::new()
            .frontend("http2 = { cleartext = true }")
            .terms(&[&term])
            .toml(),
    );
    // The same steps over TLS and over h2c: after a release the first byte is read alone, from
    // a decrypted record or from the socket.
    let expected = "get 200 100\nping acked\npost 200 7\nget 200 20000\n";
    assert_eq!(idle_client(tern.addr(), "tls"), expected);
    assert_eq!(idle_client(h2c.addr(), "h2c"), expected);
    for c in [tern.stop(), h2c.stop()] {
        assert_eq!(c.get("frontend web", "h2_streams"), 3, "{c:?}");
        assert_eq!(c.get("frontend web", "h2_errors"), 0, "{c:?}");
    }
}
