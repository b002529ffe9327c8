//! The control API on its Unix socket, against a fake proxy.

#![allow(clippy::unwrap_used)]

mod support;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::sync::Arc;

use support::fake::{socket_settings, temp_dir, FakeControl, Session};
use tern_admin::api::{self, wire::MAX_LINE, ApiError, Options};
use tern_admin::Control;

fn start(name: &str) -> (Arc<FakeControl>, api::ApiHandle, std::path::PathBuf) {
    let dir = temp_dir(name);
    let fake = FakeControl::new();
    let handle = api::spawn(fake.clone() as Arc<dyn Control>, &socket_settings(&dir)).unwrap();
    let path = handle.socket_path().unwrap().to_path_buf();
    (fake, handle, path)
}

#[test]
fn socket_file_is_0600_by_default_and_removed_on_stop() {
    let (_fake, handle, path) = start("mode");
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    handle.stop();
    assert!(!path.exists(), "the socket file is removed on stop");
}

#[test]
fn configured_mode_is_applied() {
    let dir = temp_dir("mode-0660");
    let mut settings = socket_settings(&dir);
    settings.socket_mode = 0o660;
    let handle = api::spawn(FakeControl::new() as Arc<dyn Control>, &settings).unwrap();
    let meta = std::fs::metadata(handle.socket_path().unwrap()).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o660);
}

#[test]
fn show_commands_answer_text_and_json() {
    let (fake, _handle, path) = start("show");
    let mut s = Session::connect(&path);
    let info = s.ask("show info");
    assert!(info.contains("version: 0.1.0-fake"), "{info}");
    assert!(info.contains("connections: 7"), "{info}");
    assert!(info.contains("uptime: 1h 2m 3s (3723s)"), "{info}");
    let servers = s.ask("show servers app");
    assert!(servers.starts_with("server"), "{servers}");
    assert!(servers.contains("app/s2"), "{servers}");
    assert!(!servers.contains("other/o1"), "{servers}");
    let stat = s.ask("show stat");
    assert!(stat.contains("frontend") && stat.contains("web"), "{stat}");
    let header: Vec<&str> = stat.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header[header.len() - 6..],
        [
            "denied",
            "returned",
            "no_backend",
            "tunnels",
            "tcp_sessions",
            "proxy_err"
        ]
    );
    let web = stat.lines().find(|l| l.starts_with("web ")).unwrap();
    assert_eq!(web.split_whitespace().count(), header.len(), "{stat}");
    let json: serde_json::Value = serde_json::from_str(&s.ask("json show servers")).unwrap();
    assert_eq!(json["ok"], true);
    assert_eq!(json["output"].as_array().unwrap().len(), 3);
    // An empty line inside an answer is sent as a space, so it cannot end the answer early.
    let profiling = s.ask("show profiling");
    assert_eq!(profiling, "kind  calls\naccept  3\n \nrequest  9");
    assert!(s.ask("help").contains("set weight BACKEND/SERVER WEIGHT"));
    assert_eq!(
        fake.calls(),
        Vec::<String>::new(),
        "reading changes nothing"
    );
}

#[test]
fn pipelined_commands_are_answered_in_order() {
    let (fake, _handle, path) = start("pipeline");
    let mut s = Session::connect(&path);
    s.send(b"set weight app/s1 5\r\nbogus\nshow info\nset weight app/s2 7");
    s.finish();
    let first = s.answer().unwrap();
    assert_eq!(first, ["server app/s1 weight set to 5"]);
    let second = s.answer().unwrap();
    assert!(
        second[0].starts_with("error: unknown command `bogus`"),
        "{second:?}"
    );
    let third = s.answer().unwrap();
    assert!(third[0].starts_with("version: "), "{third:?}");
    // The last line has no line ending: at the end of input it is a command all the same.
    let fourth = s.answer().unwrap();
    assert_eq!(fourth, ["server app/s2 weight set to 7"]);
    assert_eq!(s.answer(), None, "end of stream after the last answer");
    assert_eq!(fake.calls(), ["set_weight app/s1 5", "set_weight app/s2 7"]);
}

#[test]
fn bad_input_is_refused_with_no_change() {
    let (fake, _handle, path) = start("bad");
    let mut s = Session::connect(&path);
    let cases = [
        (
            "frobnicate",
            "error: unknown command `frobnicate`: expected one of help, show",
        ),
        (
            "set weight app/s1 300",
            "error: weight 300 is out of range: expected 0 to 256",
        ),
        (
            "set weight app/s1",
            "error: expected BACKEND/SERVER and WEIGHT",
        ),
        (
            "set weight app/nope 3",
            "error: no server named 'nope' in backend 'app'",
        ),
        ("disable server nope/s1", "error: no backend named 'nope'"),
        (
            "set server app/s1 addr example.com:80",
            "error: `example.com:80` is not an address",
        ),
        (
            "add server app/s1 10.0.0.1:80",
            "error: backend 'app' already has a server named 's1'",
        ),
        (
            "del server app/s1",
            "error: server app/s1 is not in maintenance",
        ),
        ("upgrade", "error: the fake cannot upgrade"),
        ("show servers nope", "error: no backend named 'nope'"),
        ("", "error: empty command"),
    ];
    for (line, expected) in cases {
        let answer = s.ask(line);
        assert!(answer.starts_with(expected), "`{line}` → {answer:?}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&s.ask("json set weight app/s1 300")).unwrap();
    assert_eq!(json["ok"], false);
    assert!(json["error"].as_str().unwrap().contains("out of range"));
    assert_eq!(fake.calls(), Vec::<String>::new());
}

#[test]
fn state_changes_reach_the_proxy() {
    let (fake, _handle, path) = start("changes");
    let mut s = Session::connect(&path);
    assert_eq!(s.ask("drain server app/s1"), "server app/s1 is now drain");
    assert_eq!(
        s.ask("set server app/s2 state maint"),
        "server app/s2 is now maint"
    );
    assert_eq!(s.ask("enable server app/s2"), "server app/s2 is now ready");
    assert_eq!(
        s.ask("set server app/s1 addr [::1]:8088"),
        "server app/s1 address set to [::1]:8088"
    );
    assert!(s
        .ask("add server app/s3 127.0.0.1:8083 weight 2 check")
        .starts_with("server app/s3 added"));
    assert_eq!(s.ask("reload"), "configuration reloaded: generation 2");
    assert_eq!(s.ask("set profiling on"), "profiling on");
    assert_eq!(
        fake.calls(),
        [
            "set_admin app/s1 drain",
            "set_admin app/s2 maint",
            "set_admin app/s2 ready",
            "set_addr app/s1 [::1]:8088",
            "add_server app/s3 127.0.0.1:8083",
            "reload",
            "set_profiling true",
        ]
    );
}

#[test]
fn an_oversized_line_is_refused_and_the_connection_closed_cleanly() {
    let (fake, _handle, path) = start("long");
    let mut s = Session::connect(&path);
    let mut long = "set weight app/s1 1 ".repeat(MAX_LINE / 10).into_bytes();
    long.push(b'\n');
    s.send(&long);
    let answer = s.answer().unwrap();
    assert_eq!(
        answer,
        [format!(
            "error: command line longer than {MAX_LINE} bytes; closing"
        )]
    );
    assert_eq!(s.answer(), None, "closed after the error");
    assert_eq!(fake.calls(), Vec::<String>::new());
    // A line of exactly the limit (line ending included) is fine, and the server still serves.
    let mut s = Session::connect(&path);
    let padded = format!("show info{}", " ".repeat(MAX_LINE - "show info".len() - 1));
    assert!(s.ask(&padded).starts_with("version: "));
}

#[test]
fn non_utf8_is_an_error_and_the_session_goes_on() {
    let (_fake, _handle, path) = start("utf8");
    let mut s = Session::connect(&path);
    s.send(b"show \xff\xfe\n");
    assert_eq!(
        s.answer().unwrap(),
        ["error: the command is not UTF-8 text"]
    );
    assert!(s.ask("show info").starts_with("version: "));
}

#[test]
fn a_stale_socket_is_replaced_and_a_live_one_refused() {
    let dir = temp_dir("stale");
    let settings = socket_settings(&dir);
    let path = settings.socket.clone().unwrap();
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    let first = api::spawn(FakeControl::new() as Arc<dyn Control>, &settings).unwrap();
    assert!(Session::connect(&path)
        .ask("show info")
        .starts_with("version: "));
    let err = api::spawn(FakeControl::new() as Arc<dyn Control>, &settings).unwrap_err();
    assert!(matches!(err, ApiError::Socket { .. }));
    assert!(err.to_string().contains("another process answers"), "{err}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
    // A takeover (binary upgrade) gets the path; the first one's stop leaves it alone.
    let options = Options {
        replace_live_socket: true,
        ..Options::default()
    };
    let second =
        api::spawn_with(FakeControl::new() as Arc<dyn Control>, &settings, options).unwrap();
    first.stop();
    assert!(Session::connect(&path)
        .ask("show info")
        .starts_with("version: "));
    second.stop();
    assert!(!path.exists());
}

#[test]
fn a_file_in_the_way_is_not_deleted() {
    let dir = temp_dir("file");
    let settings = socket_settings(&dir);
    let path = settings.socket.clone().unwrap();
    std::fs::write(&path, "precious").unwrap();
    let err = api::spawn(FakeControl::new() as Arc<dyn Control>, &settings).unwrap_err();
    assert!(err.to_string().contains("not a socket"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
}

#[test]
fn nothing_configured_starts_nothing() {
    let handle = api::spawn(
        FakeControl::new() as Arc<dyn Control>,
        &tern_config::ControlSettings::default(),
    )
    .unwrap();
    assert_eq!(handle.socket_path(), None);
    assert_eq!(handle.http_addr(), None);
}

#[test]
fn connections_beyond_the_limit_are_refused_with_an_answer() {
    let (_fake, _handle, path) = start("limit");
    // Each session is served (answered) before the next connects, so all hold a slot.
    let mut sessions: Vec<Session> = (0..api::unix::MAX_CONNECTIONS)
        .map(|_| {
            let mut s = Session::connect(&path);
            assert!(s.ask("show info").starts_with("version: "));
            s
        })
        .collect();
    let mut extra = Session::connect(&path);
    let answer = extra.answer().unwrap();
    assert!(
        answer[0].starts_with("error: too many control connections"),
        "{answer:?}"
    );
    assert_eq!(extra.answer(), None);
    // A slot freed is a slot for the next client.
    drop(sessions.pop());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mut s = Session::connect(&path);
        s.send(b"show info\n");
        let answer = s.answer().unwrap();
        if answer[0].starts_with("version: ") {
            break;
        }
        // The server may not have seen the close yet.
        assert!(
            std::time::Instant::now() < deadline,
            "no slot freed: {answer:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
