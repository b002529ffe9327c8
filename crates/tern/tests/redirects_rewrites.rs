//! Redirects and rewrites (issue 18) through the real binary, with curl as the client: the
//! same policy written in TOML and in HAProxy's `.cfg` syntax gives the same answers, over
//! HTTP/1.1 and HTTP/2 over TLS (ALPN `h2`). Rewritten requests are read back from what a
//! `tern term` received (`h=1` echoes its request head); a response rule's status and header
//! from what curl got, and a response a rule denies or replaces. Mistakes are refused by `tern check` with file, line and key.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

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

/// curl's response head (`-D -`) and body for `url`, with extra `args`.
fn fetch(args: &[&str], url: &str) -> (String, String) {
    let mut all = vec!["-k", "-D", "/dev/stderr"];
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

/// The TOML policy: a plain frontend redirecting to https, a TLS one (h2) with redirects,
/// request rewrites and a backend with response rewrites.
fn toml(cert: &str, term: &Term) -> String {
    format!(
        r#"[global]
workers = 1

[[frontend]]
name = "plain"
bind = ["127.0.0.1:0"]
default_backend = "app"
http_request = [
  {{ action = "redirect", scheme = "https", code = 301, unless = "{{ ssl_fc }}" }},
]

[[frontend]]
name = "secure"
bind = ["127.0.0.1:0"]
tls = {{ certs = ["{cert}"], alpn = ["h2", "http/1.1"] }}
default_backend = "app"
use_backend = [
  {{ backend = "st", if = "{{ path_beg /st/ }}" }},
  {{ backend = "dn", if = "{{ path_beg /dn/ }}" }},
  {{ backend = "rt", if = "{{ path_beg /rt/ }}" }},
]
http_response = [{{ action = "set-header", name = "X-Orig-Path", value = "%[var(txn.orig)]" }}]
http_request = [
  {{ action = "set-var", name = "txn.orig", value = "%[path]" }},
  {{ action = "redirect", prefix = "https://new.test", code = 308, drop_query = true, set_cookie = "MOVED=1", if = "{{ path_beg /old/ }}" }},
  {{ action = "redirect", location = "/login?from=%[path]", if = "{{ path /private }}" }},
  {{ action = "replace-path", regex = "^/api/(.*)", value = "/v2/\\1" }},
  {{ action = "set-query", value = "h=1&m=%[method]", if = "{{ path_beg /api/ }}" }},
  {{ action = "replace-header", name = "X-Forward-Me", regex = "^(.*)-secret$", value = "\\1-public" }},
  {{ action = "del-header", name = "X-Debug-", match = "beg" }},
  {{ action = "replace-value", name = "X-List", regex = "^b$", value = "B" }},
  {{ action = "set-method", value = "PUT", if = "{{ path_beg /m/ }}" }},
  {{ action = "set-path", value = "/set%[path]", if = "{{ path_beg /sp/ }}" }},
  {{ action = "set-uri", value = "/uri?h=1", if = "{{ path_beg /u/ }}" }},
  {{ action = "replace-uri", regex = "^/ru/(.*)$", value = "/r/\\1" }},
]

[[backend]]
name = "app"
servers = [{{ name = "t", address = "{addr}" }}]

[[backend]]
name = "st"
http_response = [
  {{ action = "set-status", status = 410, reason = "Gone Away" }},
  {{ action = "replace-header", name = "X-Term-Server", regex = "(.*)", value = "was-\\1" }},
]
servers = [{{ name = "t", address = "{addr}" }}]

[[backend]]
name = "dn"
http_response = [{{ action = "deny", status = 403, if = "{{ hdr(x-term-server) -m found }}" }}]
servers = [{{ name = "t", address = "{addr}" }}]

[[backend]]
name = "rt"
http_response = [{{ action = "return", status = 200, content_type = "text/plain", body = "replaced" }}]
servers = [{{ name = "t", address = "{addr}" }}]
"#,
        addr = term.addr
    )
}

/// The same policy in HAProxy's syntax.
fn cfg(term: &Term) -> String {
    format!(
        "global\n  nbthread 1\n\
         defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
         frontend plain\n  bind 127.0.0.1:0\n  redirect scheme https code 301 unless {{ ssl_fc }}\n  default_backend app\n\
         frontend secure\n  bind 127.0.0.1:0 ssl crt site.pem alpn h2,http/1.1\n\
         \x20 http-request set-var(txn.orig) path\n\
         \x20 http-response set-header X-Orig-Path %[var(txn.orig)]\n\
         \x20 http-request redirect prefix https://new.test code 308 drop-query set-cookie MOVED=1 if {{ path_beg /old/ }}\n\
         \x20 http-request redirect location /login?from=%[path] if {{ path /private }}\n\
         \x20 http-request replace-path ^/api/(.*) /v2/\\1\n\
         \x20 http-request set-query h=1&m=%[method] if {{ path_beg /api/ }}\n\
         \x20 http-request replace-header X-Forward-Me ^(.*)-secret$ \\1-public\n\
         \x20 http-request del-header X-Debug- -m beg\n\
         \x20 http-request replace-value X-List ^b$ B\n\
         \x20 http-request set-method PUT if {{ path_beg /m/ }}\n\
         \x20 http-request set-path /set%[path] if {{ path_beg /sp/ }}\n\
         \x20 http-request set-uri /uri?h=1 if {{ path_beg /u/ }}\n\
         \x20 http-request replace-uri ^/ru/(.*)$ /r/\\1\n\
         \x20 use_backend st if {{ path_beg /st/ }}\n  use_backend dn if {{ path_beg /dn/ }}\n  use_backend rt if {{ path_beg /rt/ }}\n  default_backend app\n\
         backend app\n  server t {addr}\n\
         backend st\n  http-response set-status 410 reason \"Gone Away\"\n\
         \x20 http-response replace-header X-Term-Server (.*) was-\\1\n  server t {addr}\n\
         backend dn\n  http-response deny deny_status 403 if {{ hdr(x-term-server) -m found }}\n  server t {addr}\n\
         backend rt\n  http-response return status 200 content-type text/plain string replaced\n  server t {addr}\n",
        addr = term.addr
    )
}

/// Both syntaxes, each with its running tern.
fn both(tag: &str, term: &Term) -> Vec<Tern> {
    let dir = temp_dir(&format!("{tag}-toml"));
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let toml_tern = Tern::run_file(&dir, "tern.toml", &toml(&cert, term));
    let dir = temp_dir(&format!("{tag}-cfg"));
    write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg_tern = Tern::run_file(&dir, "haproxy.cfg", &cfg(term));
    vec![toml_tern, cfg_tern]
}

fn https(tern: &Tern, path: &str) -> String {
    format!("https://localhost:{}{path}", tern.binds[1].1.port())
}

fn resolve(tern: &Tern) -> String {
    format!("localhost:{}:127.0.0.1", tern.binds[1].1.port())
}

#[test]
fn redirects_answer_over_http1_and_h2_in_both_syntaxes() {
    let term = Term::start("rdr");
    for tern in both("rdr", &term) {
        let plain = format!("http://{}/a/b?x=1", tern.binds[0].1);
        // HTTP/1.1 to the plain frontend: to https, same host, path and query.
        let (head, body) = fetch(&["-H", "Host: ex.test"], &plain);
        assert!(
            head.starts_with("http/1.1 301 moved permanently\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\nlocation: https://ex.test/a/b?x=1\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\ncontent-length: 0\r\n"), "{head}");
        assert!(
            !head.contains("cache-control") && !head.contains("connection: close"),
            "{head}"
        );
        assert!(body.is_empty());
        // HTTP/2 over TLS: prefix with drop-query and a cookie, then a location with a sample.
        let resolve = resolve(&tern);
        let h2 = [
            "--http2",
            "--resolve",
            resolve.as_str(),
            "-w",
            "%{http_version}",
        ];
        let (head, body) = fetch(&h2, &https(&tern, "/old/page?q=1"));
        assert_eq!(body, "2");
        assert!(head.starts_with("http/2 308"), "{head}");
        assert!(
            head.contains("\r\nlocation: https://new.test/old/page\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\nset-cookie: moved=1; path=/;\r\n"),
            "{head}"
        );
        let (head, _) = fetch(&h2, &https(&tern, "/private"));
        assert!(head.starts_with("http/2 302"), "{head}");
        assert!(
            head.contains("\r\nlocation: /login?from=/private\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\ncache-control: no-cache\r\n"), "{head}");
        // No rule holds: the server answers.
        let (head, _) = fetch(&h2, &https(&tern, "/?s=3"));
        assert!(head.starts_with("http/2 200"), "{head}");
        let counters = tern.stop();
        assert_eq!(counters.get("frontend plain", "intercepted"), 1);
        assert_eq!(counters.get("frontend secure", "intercepted"), 2);
    }
}

#[test]
fn rewrites_change_what_the_server_gets_and_what_the_client_gets() {
    let term = Term::start("rw");
    for tern in both("rw", &term) {
        let resolve = resolve(&tern);
        for proto in ["--http1.1", "--http2"] {
            let args = [
                proto,
                "--resolve",
                resolve.as_str(),
                "-H",
                "X-Forward-Me: abc-secret",
                "-H",
                "X-Debug-Token: 1",
                "-H",
                "x-debug-other: 2",
            ];
            let (head, body) = fetch(&args, &https(&tern, "/api/things?old=1"));
            assert!(head.contains(" 200"), "{head}");
            let first = body.lines().next().unwrap_or_default();
            assert_eq!(first, "GET /v2/things?h=1&m=GET HTTP/1.1", "{body}");
            assert!(body.contains("x-forward-me: abc-public\n"), "{body}");
            // The other request-line and value rewrites.
            let list = ["-H", "X-List: a, b"];
            let with_list: Vec<&str> = args.iter().copied().chain(list).collect();
            for (path, line) in [
                ("/m/x?h=1", "PUT /m/x?h=1 HTTP/1.1"),
                ("/sp/x?h=1", "GET /set/sp/x?h=1 HTTP/1.1"),
                ("/u/x", "GET /uri?h=1 HTTP/1.1"),
                ("/ru/x?h=1", "GET /r/x?h=1 HTTP/1.1"),
            ] {
                let (_, got) = fetch(&with_list, &https(&tern, path));
                assert_eq!(got.lines().next(), Some(line), "{got}");
                assert!(got.contains("x-list: a, B\n"), "{got}");
            }
            // A variable set on the request, read by a response rule.
            assert!(head.contains("\r\nx-orig-path: /api/things\r\n"), "{head}");
            assert!(!body.contains("x-debug"), "{body}");
            let (head, _) = fetch(&args, &https(&tern, "/st/x"));
            if proto == "--http2" {
                assert!(head.starts_with("http/2 410"), "{head}");
            } else {
                assert!(head.starts_with("http/1.1 410 gone away\r\n"), "{head}");
            }
            assert!(head.contains("\r\nx-term-server: was-rw\r\n"), "{head}");
            // A response a rule denies: tern's 403 instead, nothing of the server's.
            let (head, body) = fetch(&args, &https(&tern, "/dn/x"));
            assert!(head.contains(" 403"), "{head}");
            assert!(!head.contains("x-term-server"), "{head}");
            assert!(body.contains("403 Forbidden"), "{body}");
            // A response a rule replaces.
            let (head, body) = fetch(&args, &https(&tern, "/rt/x?s=100"));
            assert!(head.contains(" 200"), "{head}");
            assert!(!head.contains("x-term-server"), "{head}");
            assert_eq!(body, "replaced");
        }
        let counters = tern.stop();
        assert_eq!(counters.get("frontend secure", "denied"), 2);
        assert_eq!(counters.get("frontend secure", "intercepted"), 2);
    }
}

#[test]
fn check_refuses_bad_rules_with_file_line_and_key() {
    let dir = temp_dir("rw-check");
    let toml = "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\
                http_request = [\n  { action = \"redirect\", scheme = \"https\", code = 305 },\n]\n\n\
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
            .contains("bad.toml:6: frontend[0].http_request[0].code: 305 is not a redirect code"),
        "{out:?}"
    );
    let cfg = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
               frontend f\n  bind 127.0.0.1:0\n  http-request replace-path ^/(x /y\n  default_backend b\n\
               backend b\n  server s 127.0.0.1:1\n";
    let path = dir.join("bad.cfg");
    std::fs::write(&path, cfg).unwrap();
    let out = tern_finish(
        &["check", "-c", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("bad.cfg:8:"), "{out:?}");
    assert!(out.stderr.contains("bad regular expression"), "{out:?}");
}
