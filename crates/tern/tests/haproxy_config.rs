//! HAProxy configuration files through the real binary: `tern check -c haproxy.cfg` exits 0
//! (valid), 1 (valid with warnings) or 2 (invalid, errors naming the `.cfg` file, line and
//! keyword); `tern convert` prints TOML that `tern check` accepts; `tern run -c haproxy.cfg`
//! balances over `tern term` backends, answers `monitor-uri` and terminates TLS, exactly as the
//! converted TOML does; SIGHUP re-reads the `.cfg`; and the configurations collected under
//! `tests/data/haproxy/` get the result their `expected.toml` gives.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `check` and `convert` exit on their own; generous for a loaded CI machine.
const LIMIT: Duration = Duration::from_secs(20);

/// HTTP mode and every timeout, so that a test's warnings are its own.
const DEFAULTS: &str =
    "defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn check(path: &str) -> Finished {
    tern_finish(&["check", "-c", path], LIMIT)
}

/// Runs `tern run -c NAME` on `text` written to `dir/NAME`, waiting for `ready:`.
fn run_file(dir: PathBuf, name: &str, text: &str) -> Tern {
    let path = write(&dir, name, text);
    let mut proc = Proc::spawn(&["run", "-c", &path], &dir);
    proc.wait_line("ready:");
    let binds = proc.listening();
    Tern { proc, dir, binds }
}

/// Sends `n` GETs of `path` on one connection and counts them by answering server.
fn spread(addr: std::net::SocketAddr, tls: bool, n: usize) -> HashMap<String, usize> {
    block_on(async {
        let mut conn = connect(addr, tls).await;
        let mut by_server = HashMap::new();
        for _ in 0..n {
            let got = send(&mut conn, get_req("/")).await;
            assert_eq!(got.status, 200, "{}", got.text());
            let server = got.header("x-term-server").unwrap_or("?").to_owned();
            *by_server.entry(server).or_default() += 1;
        }
        by_server
    })
}

/// A `.cfg` balancing over two `tern term` servers, with a monitor URI and a plain bind.
fn two_servers_cfg(a: &Term, b: &Term, extra_frontend: &str) -> String {
    format!(
        "global\n  nbthread 1\n{DEFAULTS}frontend web\n  bind 127.0.0.1:0\n  monitor-uri /alive\n{extra_frontend}  default_backend app\n\
         backend app\n  balance roundrobin\n  server a {}\n  server b {}\n",
        a.addr, b.addr
    )
}

#[test]
fn check_exits_0_1_or_2() {
    let dir = temp_dir("hap-check");
    let clean = format!("{DEFAULTS}frontend web\n  bind 127.0.0.1:0\n  default_backend app\nbackend app\n  server s1 127.0.0.1:1\n");
    let path = write(&dir, "clean.cfg", &clean);
    let out = check(&path);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains(&format!(
            "{path}: ok: 1 frontend (1 bind, 0 with TLS), 1 backend, 1 server"
        )),
        "{out:?}"
    );
    assert!(out.stderr.trim().is_empty(), "{out:?}");

    let path = write(
        &dir,
        "warned.cfg",
        &format!("global\n  daemon\n  user haproxy\n{clean}"),
    );
    let out = check(&path);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains(": ok: "), "{out:?}");
    let warning: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        warning[0],
        format!("warning: {path}: 2 keywords with no effect in tern or mapped approximately:")
    );
    assert!(
        warning[1].starts_with(&format!(
            "  {path}:2: global: 'daemon' has no effect in tern"
        )),
        "{out:?}"
    );
    assert!(
        warning[2].starts_with(&format!("  {path}:3: global: 'user' has no effect in tern")),
        "{out:?}"
    );

    let path = write(
        &dir,
        "broken.cfg",
        &format!("{clean}  foo bar\n  server s2 127.0.0.1:2 send-proxy-v3\n"),
    );
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr.lines().collect::<Vec<_>>(),
        [
            format!("{path}:11: backend app: unknown keyword 'foo'"),
            format!("{path}:12: backend app: unknown keyword 'send-proxy-v3'"),
        ]
    );
}

#[test]
fn errors_of_the_toml_stage_name_the_cfg_line() {
    let dir = temp_dir("hap-toml-errors");
    let text = format!(
        "{DEFAULTS}frontend web\n  bind 127.0.0.1:0\n  default_backend nope\nbackend app\n  server s1 127.0.0.1:1 weight 300\n"
    );
    let path = write(&dir, "haproxy.cfg", &text);
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "{path}:8: frontend web: default_backend: no backend named `nope`"
        )),
        "{out:?}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "{path}:10: backend app: servers[0].weight: 300 is out of range"
        )),
        "{out:?}"
    );
    // `tern run` refuses it the same way, without ever being ready.
    let out = tern_finish(&["run", "-c", &path], LIMIT);
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("{path}:10: backend app: servers[0].weight")),
        "{out:?}"
    );
    assert!(!out.stdout.contains("ready:"), "{out:?}");
}

#[test]
fn convert_prints_toml_that_check_accepts() {
    let dir = temp_dir("hap-convert");
    write_cert(&dir, "site", tern_tls::KeyKind::EcdsaP256);
    let text = format!(
        "global\n  nbthread 2\n  maxconn 500\n  daemon\n  ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets\n\
         ssl-default-bind-ciphers ECDHE-ECDSA-AES128-GCM-SHA256:DHE-RSA-AES128-GCM-SHA256\n{DEFAULTS}  option forwardfor\n\
         frontend web\n  bind 127.0.0.1:0\n  bind 127.0.0.1:0 ssl crt site.pem alpn h2,http/1.1\n  monitor-uri /alive\n\
         acl api path_beg /api/\n  use_backend api if api\n  http-request set-header X-Via tern\n  default_backend app\n\
         backend app\n  balance leastconn\n  option httpchk GET /health\n  http-check expect status 200\n\
         cookie SRV insert indirect nocache\n  server a 127.0.0.1:1 check inter 1s cookie a\n  server b 127.0.0.1:2 check cookie b\n\
         backend api\n  stick-table type ip size 1k expire 5m\n  stick on src\n  server c 127.0.0.1:3\n"
    );
    let cfg = write(&dir, "haproxy.cfg", &text);
    let out = tern_finish(&["convert", &cfg], LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .starts_with("# Converted from haproxy.cfg by `tern convert`."),
        "{}",
        out.stdout
    );
    // tern speaks HTTP/2 to clients: HAProxy's ALPN list is kept as it is.
    assert!(
        out.stdout.contains("alpn = [\"h2\", \"http/1.1\"]"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("# approximated: alpn: "),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .starts_with(&format!("warning: {cfg}: 2 keywords")),
        "{}",
        out.stderr
    );
    let toml = write(&dir, "converted.toml", &out.stdout);
    let checked = check(&toml);
    assert_eq!(checked.code, Some(0), "{checked:?}\n{}", out.stdout);
    // The same summary as the .cfg's.
    let original = check(&cfg);
    assert_eq!(original.code, Some(1), "{original:?}");
    let summary = |s: &str| s.split_once(": ok: ").map(|(_, rest)| rest.to_owned());
    assert_eq!(summary(&checked.stdout), summary(&original.stdout));

    // Errors: exit 2, nothing on stdout.
    let bad = write(&dir, "bad.cfg", "frontend web\n  bind :80\n  mode health\n");
    let out = tern_finish(&["convert", &bad], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "{bad}:3: frontend web: keyword 'mode health' is not supported yet"
        )),
        "{out:?}"
    );
}

#[test]
fn haproxy_syntax_is_recognised_by_content_too() {
    let dir = temp_dir("hap-content");
    let text =
        format!("# haproxy\n{DEFAULTS}listen web\n  bind 127.0.0.1:0\n  server s1 127.0.0.1:1\n");
    let path = write(&dir, "haproxy.conf", &text);
    let out = check(&path);
    assert_eq!(out.code, Some(0), "{out:?}");
    // A .toml file is TOML whatever it holds.
    let path = write(&dir, "haproxy.toml", &text);
    assert_eq!(check(&path).code, Some(2));
}

#[test]
fn roundrobin_spreads_evenly_and_monitor_uri_answers() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let tern = run_file(
        temp_dir("hap-rr"),
        "haproxy.cfg",
        &two_servers_cfg(&a, &b, ""),
    );
    let by_server = spread(tern.addr(), false, 10);
    assert_eq!(
        by_server,
        HashMap::from([("a".to_owned(), 5), ("b".to_owned(), 5)])
    );
    block_on(async {
        let alive = get(tern.addr(), false, "/alive").await;
        assert_eq!(alive.status, 200);
        // HAProxy adds no X-Forwarded-* header without `option forwardfor`.
        let dump = get(tern.addr(), false, "/?h=1")
            .await
            .text()
            .to_ascii_lowercase();
        assert!(!dump.contains("x-forwarded-for"), "{dump}");
        assert!(!dump.contains("x-forwarded-proto"), "{dump}");
    });
    let counters = tern.stop_clean();
    assert_eq!(counters.get("frontend web", "requests"), 12);
}

#[test]
fn tls_bind_with_a_generated_certificate() {
    let term = Term::start("t");
    let dir = temp_dir("hap-tls");
    write_cert(&dir, "site", tern_tls::KeyKind::EcdsaP256);
    let text = format!(
        "{DEFAULTS}frontend web\n  bind 127.0.0.1:0 ssl crt site.pem\n  option forwardfor\n  default_backend app\n\
         backend app\n  server t {}\n",
        term.addr
    );
    let tern = run_file(dir, "haproxy.cfg", &text);
    assert!(tern.is_tls(0), "{:?}", tern.binds);
    block_on(async {
        let got = get(tern.addr(), true, "/?h=1").await;
        assert_eq!(got.status, 200);
        assert_eq!(got.header("x-term-server"), Some("t"));
        assert!(
            got.text()
                .to_ascii_lowercase()
                .contains("x-forwarded-for: 127.0.0.1"),
            "{}",
            got.text()
        );
    });
    tern.stop_clean();
}

/// The answering server, status and forwarded headers of a few requests.
fn behaviour(addr: std::net::SocketAddr) -> Vec<String> {
    block_on(async {
        let mut conn = connect(addr, false).await;
        let mut seen = Vec::new();
        for path in ["/", "/", "/api/x", "/", "/alive", "/?h=1"] {
            let got = send(&mut conn, get_req(path)).await;
            let dump = got.text().to_ascii_lowercase();
            seen.push(format!(
                "{path} {} {} xff={} via={}",
                got.status,
                got.header("x-term-server").unwrap_or("-"),
                dump.contains("x-forwarded-for"),
                dump.contains("x-via: tern"),
            ));
        }
        seen
    })
}

#[test]
fn the_cfg_and_its_converted_toml_behave_the_same() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let extra = "  acl api path_beg /api/\n  use_backend api if api\n  http-request set-header X-Via tern\n";
    let text = format!(
        "{}backend api\n  server c {}\n",
        two_servers_cfg(&a, &b, extra),
        c.addr
    );
    let dir = temp_dir("hap-same");
    let cfg = write(&dir, "haproxy.cfg", &text);
    let converted = tern_finish(&["convert", &cfg], LIMIT);
    assert_eq!(converted.code, Some(0), "{converted:?}");

    let from_cfg = run_file(dir.clone(), "haproxy.cfg", &text);
    let cfg_seen = behaviour(from_cfg.addr());
    from_cfg.stop_clean();
    let from_toml = run_file(dir, "converted.toml", &converted.stdout);
    let toml_seen = behaviour(from_toml.addr());
    from_toml.stop_clean();
    assert_eq!(cfg_seen, toml_seen);
    assert_eq!(
        cfg_seen,
        [
            "/ 200 a xff=false via=false",
            "/ 200 b xff=false via=false",
            "/api/x 200 c xff=false via=false",
            "/ 200 a xff=false via=false",
            "/alive 200 - xff=false via=false",
            "/?h=1 200 b xff=false via=true",
        ]
    );
}

#[test]
fn sighup_rereads_the_cfg() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let dir = temp_dir("hap-reload");
    let mut tern = run_file(dir.clone(), "haproxy.cfg", &two_servers_cfg(&a, &b, ""));
    assert_eq!(spread(tern.addr(), false, 4).len(), 2);
    // Server b drained (weight 0) by the new file.
    let text = two_servers_cfg(&a, &b, "").replace(
        &format!("server b {}", b.addr),
        &format!("server b {} weight 0", b.addr),
    );
    write(&dir, "haproxy.cfg", &text);
    tern.proc.signal("HUP");
    tern.proc.wait_line("reloaded:");
    assert_eq!(
        spread(tern.addr(), false, 4),
        HashMap::from([("a".to_owned(), 4)])
    );
    tern.stop_clean();
}

/// The configurations of `tests/data/haproxy/` and their expected `tern check` results.
#[test]
fn collected_configurations_get_their_expected_result() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/haproxy");
    let expected: toml::Table =
        toml::from_str(&std::fs::read_to_string(data.join("expected.toml")).unwrap()).unwrap();
    let configs = expected["config"].as_array().unwrap();
    assert!(!configs.is_empty());
    let mut failures = Vec::new();
    for entry in configs {
        let file = entry["file"].as_str().unwrap();
        let want = entry["exit"].as_integer().unwrap();
        let path = data.join(file);
        let out = check(path.to_str().unwrap());
        let output = format!("{}{}", out.stdout, out.stderr);
        if out.code != Some(i32::try_from(want).unwrap()) {
            failures.push(format!(
                "{file}: exit {:?}, expected {want}:\n{output}",
                out.code
            ));
            continue;
        }
        let contains = entry
            .get("error_contains")
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default();
        for needle in contains.iter().filter_map(|n| n.as_str()) {
            if !output.contains(needle) {
                failures.push(format!("{file}: output lacks {needle:?}:\n{output}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The directory of the collected configurations.
fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/haproxy")
}

/// A collected configuration made runnable here: every bind on an ephemeral loopback port,
/// the servers (in file order) on `servers`, the certificates copied next to it.
fn localized(file: &str, servers: &[std::net::SocketAddr], dir: &Path) -> String {
    copy_dir(&data_dir().join("certs"), &dir.join("certs"));
    let text = std::fs::read_to_string(data_dir().join(file)).unwrap();
    let mut servers = servers.iter();
    let mut out = String::new();
    for line in text.lines() {
        let mut words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        match words.first().map(String::as_str) {
            Some("bind") => words[1] = "127.0.0.1:0".to_owned(),
            Some("server") => {
                words[2] = servers.next().expect("a server for each line").to_string()
            }
            _ => {
                out.push_str(line);
                out.push('\n');
                continue;
            }
        }
        out.push_str(&format!("  {}\n", words.join(" ")));
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn seed_000_answers_its_monitor_uri_over_tls() {
    let dir = temp_dir("hap-seed000");
    // Nothing listens on the server: `/test` is answered by tern itself, as in the paper's runs.
    let closed: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
    let text = localized("seed000-figure2-complete.cfg", &[closed], &dir)
        // 56 processes on the paper's machine; two worker threads are enough here.
        .replace("nbproc 56", "nbproc 2");
    let tern = run_file(dir, "haproxy.cfg", &text);
    assert!(tern.is_tls(0));
    block_on(async {
        let mut conn = connect(tern.addr(), true).await;
        for _ in 0..3 {
            let got = send(&mut conn, get_req("/test")).await;
            assert_eq!(got.status, 200);
        }
    });
    // The warnings, once, at start.
    let stderr = tern.proc.stderr_text();
    assert_eq!(
        stderr
            .matches("with no effect in tern or mapped approximately")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("haproxy.cfg:2: global: 'pidfile' has no effect in tern"),
        "{stderr}"
    );
    tern.stop_clean();
}

#[test]
fn cookie_stickiness_keeps_a_client_on_its_server() {
    let terms = [Term::start("s1"), Term::start("s2"), Term::start("s3")];
    let dir = temp_dir("hap-cookie");
    let addrs: Vec<_> = terms.iter().map(|t| t.addr).collect();
    let tern = run_file(
        dir.clone(),
        "haproxy.cfg",
        &localized("cookie-stickiness.cfg", &addrs, &dir),
    );
    block_on(async {
        let first = get(tern.addr(), false, "/").await;
        assert_eq!(first.status, 200);
        let server = first.header("x-term-server").unwrap().to_owned();
        let cookie = first.header("set-cookie").expect("set-cookie").to_owned();
        let index = ["s1", "s2", "s3"]
            .iter()
            .position(|s| *s == server)
            .unwrap();
        assert!(
            cookie.starts_with(&format!("SERVERID=web{}", index + 1)),
            "{cookie}"
        );
        assert_eq!(first.header("x-frame-options"), Some("DENY"));
        let pair = cookie.split(';').next().unwrap().to_owned();
        for _ in 0..4 {
            let mut conn = connect(tern.addr(), false).await;
            let req = hyper::Request::get("/?h=1")
                .header("host", "localhost")
                .header("cookie", &pair)
                .body(Body::default())
                .unwrap();
            let got = send(&mut conn, req).await;
            assert_eq!(got.header("x-term-server"), Some(server.as_str()));
            let dump = got.text().to_ascii_lowercase();
            // `indirect`: the server never sees the cookie; `option forwardfor`, `add-header`.
            assert!(!dump.contains("serverid"), "{dump}");
            assert!(dump.contains("x-forwarded-for: 127.0.0.1"), "{dump}");
            assert!(dump.contains("x-via: tern"), "{dump}");
        }
        assert_eq!(get(tern.addr(), false, "/ping").await.text(), "pong");
        assert_eq!(get(tern.addr(), false, "/admin/x").await.status, 403);
    });
    tern.stop_clean();
}
