//! Helpers shared by the unit tests: a minimal valid config and assertions on located errors.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::{parse, Config, ConfigError};

/// The smallest valid config; tests add or replace lines in it. Line numbers matter to tests:
/// `[[frontend]]` is line 1, `[[backend]]` line 6, the server line 8.
pub(crate) const MINIMAL: &str = r#"[[frontend]]
name = "web"
bind = ["127.0.0.1:0"]
default_backend = "app"

[[backend]]
name = "app"
servers = [ { name = "s1", address = "127.0.0.1:8080" } ]
"#;

/// The servers line of `MINIMAL` (line 8).
pub(crate) const SERVERS_LINE: &str =
    "servers = [ { name = \"s1\", address = \"127.0.0.1:8080\" } ]";

/// The file name tests pretend to have read.
pub(crate) const FILE: &str = "/etc/tern/tern.toml";

pub(crate) fn parse_ok(text: &str) -> Config {
    match parse(text, Path::new(FILE)) {
        Ok(config) => config,
        Err(errors) => panic!("expected a valid config, got:\n{errors}\n--- config:\n{text}"),
    }
}

pub(crate) fn parse_err(text: &str) -> Vec<ConfigError> {
    match parse(text, Path::new(FILE)) {
        Ok(config) => panic!("expected errors, got {config:?}\n--- config:\n{text}"),
        Err(errors) => {
            assert!(!errors.is_empty());
            for error in &errors {
                assert_eq!(error.file, Path::new(FILE));
            }
            errors.0
        }
    }
}

/// Asserts that `text` fails with an error at `line` and `key_path` whose message contains
/// `needle`.
#[track_caller]
pub(crate) fn assert_error(text: &str, line: usize, key_path: &str, needle: &str) {
    let errors = parse_err(text);
    let found = errors
        .iter()
        .any(|e| e.line == Some(line) && e.key_path == key_path && e.message.contains(needle));
    let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(
        found,
        "no error at line {line}, path `{key_path}` containing {needle:?}; got:\n{}\n--- config:\n{text}",
        listed.join("\n")
    );
}

/// `MINIMAL` with `extra` lines appended to the first frontend (after line 4).
pub(crate) fn with_frontend_lines(extra: &str) -> String {
    MINIMAL.replacen(
        "default_backend = \"app\"\n",
        &format!("default_backend = \"app\"\n{extra}\n"),
        1,
    )
}

/// `MINIMAL` with `extra` lines appended to the first backend (after its name, line 7).
pub(crate) fn with_backend_lines(extra: &str) -> String {
    MINIMAL.replacen("name = \"app\"\n", &format!("name = \"app\"\n{extra}\n"), 1)
}

/// `MINIMAL` with a `[global]` section holding `lines` appended at the end.
pub(crate) fn with_global(lines: &str) -> String {
    format!("{MINIMAL}\n[global]\n{lines}\n")
}

/// The first backend of `MINIMAL` with `lines` added to it.
pub(crate) fn parse_backend(lines: &str) -> crate::Backend {
    let mut config = parse_ok(&with_backend_lines(lines));
    config.backends.remove(0)
}

/// All errors of `MINIMAL` with `lines` added to its backend, one per line of text.
pub(crate) fn backend_error(lines: &str) -> String {
    let errors: Vec<String> = parse_err(&with_backend_lines(lines))
        .iter()
        .map(ToString::to_string)
        .collect();
    errors.join("\n")
}

/// `MINIMAL` with `lines` added to its backend from line 8, then its servers replaced by
/// `servers` (when not empty): `servers = [` on the line after `lines`, then one server a line.
pub(crate) fn backend_with_servers(lines: &str, servers: &[&str]) -> String {
    let mut backend = String::new();
    for line in lines.lines() {
        backend.push_str(line);
        backend.push('\n');
    }
    if servers.is_empty() {
        backend.push_str(SERVERS_LINE);
        backend.push('\n');
    } else {
        backend.push_str("servers = [\n");
        for server in servers {
            backend.push_str(&format!("  {server},\n"));
        }
        backend.push_str("]\n");
    }
    MINIMAL.replacen(&format!("{SERVERS_LINE}\n"), &backend, 1)
}
