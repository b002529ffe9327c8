//! Error pages (issue 18) through the real binary: `error_pages` in TOML and `errorfile`,
//! `errorfiles` + `http-errors`, `http-error` in `.cfg` replace tern's own 400, 403, 503
//! (no server) and a `deny` status, with tern's framing (a length, `connection: close` when it
//! closes) whatever the file said; `return ... file` serves a file. Over HTTP/1.1 (curl and a
//! raw socket for the malformed request) and HTTP/2 over TLS (curl).

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tern_tls::KeyKind;

const DOWN: &str = "HTTP/1.0 503 Service Unavailable\nCache-Control: no-cache\nConnection: close\n\
                    Content-Type: text/html\nContent-Length: 15\n\n<p>we-are-down\n";
const BAD: &str = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\r\nbad-request-page";

/// curl's response head and body for `url`.
fn fetch(args: &[&str], url: &str) -> (String, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "-k", "-D", "/dev/stderr"])
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .expect("curl runs (the tests need it: .ci/run installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stderr).to_ascii_lowercase(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn files(dir: &Path) {
    std::fs::create_dir_all(dir.join("errors")).unwrap();
    std::fs::write(dir.join("errors/503.http"), DOWN).unwrap();
    std::fs::write(dir.join("errors/400.http"), BAD).unwrap();
    std::fs::write(dir.join("errors/teapot.html"), "<p>file-body</p>").unwrap();
}

fn toml(cert: &str) -> String {
    format!(
        r#"[global]
workers = 1

[[frontend]]
name = "web"
bind = [{{ address = "127.0.0.1:0", tls = false }}, "127.0.0.1:0"]
tls = {{ certs = ["{cert}"], alpn = ["h2", "http/1.1"] }}
default_backend = "app"
error_pages = {{ 400 = {{ errorfile = "errors/400.http" }}, 429 = {{ content_type = "text/plain", body = "slow-down" }} }}
http_request = [
  {{ action = "deny", status = 429, if = "{{ path /limited }}" }},
  {{ action = "return", status = 200, content_type = "text/html", file = "errors/teapot.html", if = "{{ path /file }}" }},
]

[[backend]]
name = "app"
error_pages = {{ 503 = {{ errorfile = "errors/503.http" }} }}
servers = [{{ name = "none", address = "127.0.0.1:1" }}]
"#
    )
}

const CFG: &str = "global\n  nbthread 1\n\
    defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n  \
    errorfile 400 errors/400.http\n\
    http-errors site\n  errorfile 503 errors/503.http\n\
    frontend web\n  bind 127.0.0.1:0\n  bind 127.0.0.1:0 ssl crt site.pem alpn h2,http/1.1\n  \
    http-error status 429 content-type text/plain string slow-down\n  \
    http-request deny deny_status 429 if { path /limited }\n  \
    http-request return status 200 content-type text/html file errors/teapot.html if { path /file }\n  \
    default_backend app\n\
    backend app\n  errorfiles site\n  server none 127.0.0.1:1\n";

#[test]
fn configured_pages_replace_terns_own_in_both_syntaxes() {
    let toml_dir = temp_dir("ep-toml");
    files(&toml_dir);
    let cert = write_cert(&toml_dir, "site", KeyKind::EcdsaP256);
    let cfg_dir = temp_dir("ep-cfg");
    files(&cfg_dir);
    write_cert(&cfg_dir, "site", KeyKind::EcdsaP256);
    for tern in [
        Tern::run_file(&toml_dir, "tern.toml", &toml(&cert)),
        Tern::run_file(&cfg_dir, "haproxy.cfg", CFG),
    ] {
        let plain = tern.binds[0].1;
        // No server: the backend's 503 page (sent as HTTP/1.1), its own length.
        let (head, body) = fetch(&[], &format!("http://{plain}/x"));
        assert!(
            head.starts_with("http/1.1 503 service unavailable\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\ncache-control: no-cache\r\n"), "{head}");
        assert!(head.contains("\r\ncontent-length: 15\r\n"), "{head}");
        assert_eq!(body, "<p>we-are-down\n");
        // A deny status with a page; a return with a file.
        let (head, body) = fetch(&[], &format!("http://{plain}/limited"));
        assert!(
            head.starts_with("http/1.1 429 too many requests\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\ncontent-type: text/plain\r\n"), "{head}");
        assert_eq!(body, "slow-down");
        let (_, body) = fetch(&[], &format!("http://{plain}/file"));
        assert_eq!(body, "<p>file-body</p>");
        // A malformed request: the frontend's 400 page, then the close.
        let raw = raw_exchange(
            plain,
            b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            Duration::from_secs(5),
        );
        assert!(
            raw.head_text().starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{}",
            raw.text()
        );
        assert_eq!(raw.head_value("connection").as_deref(), Some("close"));
        assert_eq!(raw.body_bytes(), b"bad-request-page");
        // HTTP/2 over TLS: the same pages.
        let port = tern.binds[1].1.port();
        let resolve = format!("localhost:{port}:127.0.0.1");
        let h2 = ["--http2", "--resolve", resolve.as_str()];
        let (head, body) = fetch(&h2, &format!("https://localhost:{port}/x"));
        assert!(head.starts_with("http/2 503"), "{head}");
        assert_eq!(body, "<p>we-are-down\n");
        let (head, body) = fetch(&h2, &format!("https://localhost:{port}/limited"));
        assert!(head.starts_with("http/2 429"), "{head}");
        assert_eq!(body, "slow-down");
        tern.stop();
    }
}

#[test]
fn a_malformed_page_stops_the_start_with_its_file_and_line() {
    let dir = temp_dir("ep-bad");
    std::fs::create_dir_all(dir.join("errors")).unwrap();
    std::fs::write(
        dir.join("errors/503.http"),
        "HTTP/1.1 503 x\nContent-Length: 99\n\nshort",
    )
    .unwrap();
    let cfg = CFG.replace("  errorfile 400 errors/400.http\n", "");
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, &cfg).unwrap();
    let out = tern_finish(
        &["check", "-c", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("haproxy.cfg:18: backend app: error_pages.503.errorfile: errors/503.http:2: Content-Length 99 but the body has 5 bytes"),
        "{out:?}"
    );
}
