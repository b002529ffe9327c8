//! `[control]`: socket, mode, HTTP listener, token and stats refresh.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::ControlSettings;
use crate::test_support::{assert_error, parse_ok, MINIMAL};

/// `MINIMAL` with a `[control]` table holding `lines`; its first key is on line 11.
fn with_control(lines: &str) -> String {
    format!("{MINIMAL}\n[control]\n{lines}\n")
}

fn control(lines: &str) -> ControlSettings {
    parse_ok(&with_control(lines)).control
}

/// A file holding `text`, unique to this test.
fn token_file(name: &str, text: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("tern-config-token-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn absent_means_no_api() {
    let config = parse_ok(MINIMAL);
    assert_eq!(config.control, ControlSettings::default());
    assert_eq!(config.control.socket, None);
    assert_eq!(config.control.http, None);
    assert_eq!(config.control.socket_mode, 0o600);
    assert_eq!(config.control.stats_refresh, Duration::from_secs(10));
}

#[test]
fn full_table() {
    let c = control(
        "socket = \"run/tern.sock\"\nsocket_mode = \"0660\"\nhttp = \"127.0.0.1:9000\"\n\
         token = \"0123456789abcdef0123\"\nstats_refresh = \"30s\"",
    );
    // Relative to the configuration file's directory.
    assert_eq!(
        c.socket.as_deref(),
        Some(Path::new("/etc/tern/run/tern.sock"))
    );
    assert_eq!(c.socket_mode, 0o660);
    assert_eq!(c.http, Some("127.0.0.1:9000".parse().unwrap()));
    assert_eq!(c.token.as_ref().unwrap().expose(), "0123456789abcdef0123");
    assert_eq!(c.stats_refresh, Duration::from_secs(30));
}

#[test]
fn socket_mode_forms() {
    for (text, mode) in [
        ("\"0600\"", 0o600),
        ("\"640\"", 0o640),
        ("\"0o660\"", 0o660),
        ("0o600", 0o600),
    ] {
        let c = control(&format!("socket = \"/run/t.sock\"\nsocket_mode = {text}"));
        assert_eq!(c.socket_mode, mode, "{text}");
    }
}

#[test]
fn bad_socket_modes() {
    let socket = "socket = \"/run/t.sock\"\n";
    let cases = [
        ("\"rw\"", "not an octal mode"),
        ("\"0800\"", "not an octal mode"),
        ("600", "bits beyond 0777"),
        ("\"01777\"", "bits beyond 0777"),
        ("\"0400\"", "does not let the owner write"),
        ("-1", "not a mode"),
    ];
    for (text, needle) in cases {
        let config = with_control(&format!("{socket}socket_mode = {text}"));
        assert_error(&config, 12, "control.socket_mode", needle);
    }
    assert_error(
        &with_control("socket_mode = \"0600\""),
        11,
        "control.socket_mode",
        "has no effect without `socket`",
    );
}

#[test]
fn socket_path_too_long() {
    let long = format!("/run/{}.sock", "x".repeat(120));
    assert_error(
        &with_control(&format!("socket = \"{long}\"")),
        11,
        "control.socket",
        "at most 107",
    );
    assert_error(
        &with_control("socket = \"\""),
        11,
        "control.socket",
        "must not be empty",
    );
}

#[test]
fn http_address() {
    assert_eq!(
        control("http = \"[::1]:9000\"").http,
        Some("[::1]:9000".parse().unwrap())
    );
    assert_error(
        &with_control("http = \"localhost:9000\""),
        11,
        "control.http",
        "invalid address `localhost:9000`",
    );
    // The frontend of MINIMAL binds port 0, which never clashes; a fixed port does.
    let clash = MINIMAL.replace("127.0.0.1:0", "127.0.0.1:9000");
    assert_error(
        &format!("{clash}\n[control]\nhttp = \"127.0.0.1:9000\"\n"),
        11,
        "control.http",
        "already used by frontend[0].bind[0]",
    );
}

#[test]
fn token_rules() {
    let http = "http = \"127.0.0.1:9000\"\n";
    assert_error(
        &with_control(&format!("{http}token = \"short\"")),
        12,
        "control.token",
        "at least 16",
    );
    assert_error(
        &with_control(&format!("{http}token = \"with a space inside it\"")),
        12,
        "control.token",
        "' '",
    );
    assert_error(
        &with_control("token = \"0123456789abcdef0123\""),
        11,
        "control.token",
        "has no effect without `http`",
    );
    assert_error(
        &with_control(&format!(
            "{http}token = \"0123456789abcdef0123\"\ntoken_file = \"/x\""
        )),
        13,
        "control.token_file",
        "not both",
    );
}

#[test]
fn token_file_is_read_and_trimmed() {
    let file = token_file("ok", "0123456789abcdef0123\n");
    let c = control(&format!(
        "http = \"127.0.0.1:9000\"\ntoken_file = \"{}\"",
        file.display()
    ));
    assert_eq!(c.token.unwrap().expose(), "0123456789abcdef0123");
    let empty = token_file("empty", "\n");
    assert_error(
        &with_control(&format!(
            "http = \"127.0.0.1:9000\"\ntoken_file = \"{}\"",
            empty.display()
        )),
        12,
        "control.token_file",
        "is empty",
    );
    assert_error(
        &with_control("http = \"127.0.0.1:9000\"\ntoken_file = \"/nonexistent/tern-token\""),
        12,
        "control.token_file",
        "cannot read `/nonexistent/tern-token`",
    );
    let _ = std::fs::remove_file(file);
    let _ = std::fs::remove_file(empty);
}

#[test]
fn token_is_hidden_from_debug() {
    let c = control("http = \"127.0.0.1:9000\"\ntoken = \"0123456789abcdef0123\"");
    assert!(!format!("{c:?}").contains("0123456789"));
}

#[test]
fn stats_refresh_whole_seconds() {
    assert_eq!(
        control("stats_refresh = \"1m\"").stats_refresh,
        Duration::from_secs(60)
    );
    assert_error(
        &with_control("stats_refresh = \"1500ms\""),
        11,
        "control.stats_refresh",
        "whole number of seconds",
    );
    assert_error(
        &with_control("stats_refresh = 5"),
        11,
        "control.stats_refresh",
        "needs a unit",
    );
}

#[test]
fn unknown_key_is_named() {
    assert_error(
        &with_control("sokcet = \"/run/t.sock\""),
        11,
        "control.sokcet",
        "unknown field `sokcet`",
    );
}
