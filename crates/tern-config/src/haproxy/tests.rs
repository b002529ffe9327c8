//! Whole-file conversions: what a `.cfg` becomes, and how its mistakes are reported.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod compression;
mod connection;
mod counters;
mod error_pages;
mod errors;
mod keywords;
mod logging;
mod proxies;
mod resolvers;
mod rewrite;
mod tcp;
mod userlist;

use std::path::{Path, PathBuf};

use super::{convert_with_env, Converted, Warning};
use crate::error::ConfigErrors;

pub(super) fn env(name: &str) -> Option<String> {
    (name == "PORT").then(|| "8080".to_owned())
}

/// A directory for files a test needs (certificates, crt-lists), unique per call.
pub(super) fn temp_dir(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tern-haproxy-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(super) fn convert_in(dir: &Path, text: &str) -> Result<Converted, ConfigErrors> {
    convert_with_env(text, &dir.join("haproxy.cfg"), &env)
}

/// Converts `text`, which must be free of HAProxy-stage errors.
pub(super) fn convert(text: &str) -> Converted {
    convert_in(Path::new(""), text).unwrap_or_else(|e| panic!("{e}"))
}

/// The HAProxy-stage errors of `text`, one string each.
pub(super) fn errors(text: &str) -> Vec<String> {
    match convert_in(Path::new(""), text) {
        Ok(c) => panic!("no error; converted to:\n{}", c.toml),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

/// The converted TOML without comments and blank lines.
pub(super) fn settings(c: &Converted) -> Vec<String> {
    c.toml
        .lines()
        .map(|l| l.split("  # ").next().unwrap_or(l).trim().to_owned())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// Whether the settings contain `line` exactly.
pub(super) fn has(c: &Converted, line: &str) -> bool {
    settings(c).iter().any(|l| l == line)
}

pub(super) fn assert_has(c: &Converted, line: &str) {
    assert!(has(c, line), "no line {line:?} in:\n{}", c.toml);
}

/// The warnings as `LINE: KEYWORD`.
pub(super) fn warned(warnings: &[Warning]) -> Vec<String> {
    warnings
        .iter()
        .map(|w| format!("{}: {}", w.line, w.keyword))
        .collect()
}

/// A valid head: HTTP mode and every timeout, so tests only see what they are about.
pub(super) const HEAD: &str =
    "defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n";

/// Both stages, as `tern check` runs them: the errors, one string each.
pub(super) fn check_errors(text: &str) -> Vec<String> {
    match super::parse(text, Path::new("haproxy.cfg")) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

/// Validates converted TOML with the TOML stage (no file access needed by the test configs).
pub(super) fn validate(c: &Converted) -> crate::Config {
    crate::parse(&c.toml, Path::new("haproxy.cfg")).unwrap_or_else(|e| panic!("{e}\n{}", c.toml))
}
