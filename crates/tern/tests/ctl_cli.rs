//! `tern ctl` as a program: exit status 2 with the path named when the socket cannot be
//! reached, 1 when the answer is an error, 0 when it is not; the command line is sent as one
//! line. A small fake server stands in for tern here; the end-to-end tests through `tern run`
//! live with the runtime API's other tests.

#![allow(clippy::unwrap_used)]

#[allow(unused_imports)]
mod support;
use support::*;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

/// Serves one connection on `path`: reads one line, answers `answer` (framed), and returns the
/// line it read.
fn fake_server(path: &Path, answer: &'static str) -> std::thread::JoinHandle<String> {
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(&stream).read_line(&mut line).unwrap();
        (&stream).write_all(answer.as_bytes()).unwrap();
        line
    })
}

#[test]
fn an_unreachable_socket_exits_2_naming_the_path() {
    let dir = temp_dir("ctl-missing");
    let path = dir.join("no.sock");
    let path_text = path.to_str().unwrap();
    let out = tern_finish(&["ctl", "-s", path_text, "show", "info"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains(path_text), "{out:?}");
    assert!(
        out.stderr.contains("cannot reach the control socket"),
        "{out:?}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    // A socket file nobody listens on is unreachable too.
    drop(UnixListener::bind(&path).unwrap());
    let out = tern_finish(&["ctl", "-s", path_text, "show", "info"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains(path_text), "{out:?}");
}

#[test]
fn an_unreachable_http_listener_exits_2() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let out = tern_finish(&["ctl", "--http", &url, "show", "info"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains(&format!("127.0.0.1:{port}")), "{out:?}");
}

#[test]
fn answers_decide_the_exit_status() {
    let dir = temp_dir("ctl-answers");
    let path = dir.join("ctl.sock");
    let path_text = path.to_str().unwrap();

    let server = fake_server(&path, "server app/s1 weight set to 0\n\n");
    let out = tern_finish(
        &["ctl", "-s", path_text, "set", "weight", "app/s1", "0"],
        LIMIT,
    );
    assert_eq!(server.join().unwrap(), "set weight app/s1 0\n");
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "server app/s1 weight set to 0\n");

    std::fs::remove_file(&path).unwrap();
    let server = fake_server(&path, "error: no server named 'x' in backend 'app'\n\n");
    let out = tern_finish(
        &["ctl", "-s", path_text, "set", "weight", "app/x", "0"],
        LIMIT,
    );
    server.join().unwrap();
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("no server named 'x'"), "{out:?}");

    std::fs::remove_file(&path).unwrap();
    let server = fake_server(
        &path,
        "{\"ok\":false,\"output\":null,\"error\":\"nope\"}\n\n",
    );
    let out = tern_finish(&["ctl", "-s", path_text, "--json", "reload"], LIMIT);
    assert_eq!(server.join().unwrap(), "json reload\n");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.contains("\"error\":\"nope\""),
        "JSON goes to stdout: {out:?}"
    );
}

#[test]
fn the_socket_comes_from_tern_socket_by_default() {
    let dir = temp_dir("ctl-env");
    let path = dir.join("env.sock");
    let server = fake_server(&path, "version: x\n\n");
    // `output` waits for the exit; the fake server answers at once, so it cannot hang.
    let out = std::process::Command::new(tern_bin())
        .args(["ctl", "--timeout", "10", "show", "info"])
        .env("TERN_SOCKET", &path)
        .output()
        .unwrap();
    assert_eq!(server.join().unwrap(), "show info\n");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "version: x\n");
}

#[test]
fn a_command_is_required() {
    let out = tern_finish(&["ctl"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("Usage: tern ctl"), "{out:?}");
}
