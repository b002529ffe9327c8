//! Global keywords, one line at a time.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::*;

fn apply_all(text: &str) -> (GlobalCfg, Diag) {
    let mut diag = Diag::new(Path::new("h.cfg"));
    let mut g = GlobalCfg::default();
    for (i, line) in text.lines().enumerate() {
        let words: Vec<String> = super::super::lexer::split(line, &|_| None).unwrap();
        if !words.is_empty() {
            apply(&Line { no: i + 1, words }, &mut g, &mut diag);
        }
    }
    (g, diag)
}

fn messages(diag: &Diag) -> Vec<String> {
    diag.errors.iter().map(ToString::to_string).collect()
}

#[test]
fn stats_socket_path_mode_and_level() {
    let (g, diag) = apply_all("stats socket /run/haproxy/admin.sock mode 660 level admin");
    assert!(diag.errors.is_empty() && diag.warnings.is_empty());
    assert_eq!(g.socket.unwrap().v, "/run/haproxy/admin.sock");
    assert_eq!(g.socket_mode.as_deref(), Some("0660"));
    // Without `level admin`, HAProxy restricts the commands; tern does not.
    let (g, diag) = apply_all("stats socket unix@/run/x.sock mode 0600 user haproxy");
    assert_eq!(g.socket.unwrap().v, "/run/x.sock");
    let keywords: Vec<&str> = diag.warnings.iter().map(|w| w.keyword.as_str()).collect();
    assert_eq!(keywords, ["user", "stats socket"]);
}

#[test]
fn stats_socket_refusals() {
    let (_, diag) = apply_all("stats socket ipv4@127.0.0.1:9999 level admin\nstats socket /a level admin\nstats socket /b\n");
    assert_eq!(
        messages(&diag),
        [
            "h.cfg:1: global: keyword 'stats socket' is not supported yet: tern's control socket is a Unix socket; \
             a 'listen' section with 'stats enable' gives the HTTP listener",
            "h.cfg:3: global: keyword 'stats socket' is not supported yet: tern has one control socket",
        ]
    );
    let (_, diag) = apply_all("stats socket /a accept-proxy level");
    assert_eq!(
        messages(&diag),
        [
            "h.cfg:1: global: keyword 'accept-proxy' is not supported yet",
            "h.cfg:1: global: 'stats socket': 'level' needs an argument",
        ]
    );
}

#[test]
fn no_effect_unsupported_and_unknown() {
    let (_, diag) = apply_all("daemon\nmaster-worker\ntune.maxaccept 64\nlua-load x.lua\nfrobnicate 1\nstats timeout 30s\n");
    let warned: Vec<(usize, &str)> = diag
        .warnings
        .iter()
        .map(|w| (w.line, w.keyword.as_str()))
        .collect();
    assert_eq!(
        warned,
        [
            (1, "daemon"),
            (2, "master-worker"),
            (3, "tune.maxaccept"),
            (6, "stats timeout")
        ]
    );
    assert_eq!(
        messages(&diag),
        [
            "h.cfg:4: global: keyword 'lua-load' is not supported yet",
            "h.cfg:5: global: unknown keyword 'frobnicate'",
        ]
    );
}

#[test]
fn values_are_checked() {
    let (_, diag) = apply_all("nbthread x\nmaxconn 1 2\nhard-stop-after 5y\ncpu-map auto:1/1-3 0-1\nssl-server-verify maybe\n");
    assert_eq!(
        messages(&diag),
        [
            "h.cfg:1: global: 'nbthread': invalid number 'x': a non-negative integer expected",
            "h.cfg:2: global: 'maxconn' takes exactly one argument",
            "h.cfg:3: global: 'hard-stop-after': invalid time '5y': a number with an optional unit (us, ms, s, m, h, d) expected",
            "h.cfg:4: global: 'auto:' pairs threads with CPUs, but the thread set has 3 and the CPU set 2",
            "h.cfg:5: global: 'ssl-server-verify': 'none' or 'required' expected, not 'maybe'",
        ]
    );
}

#[test]
fn default_bind_options_and_profiling() {
    let (g, diag) = apply_all(
        "ssl-default-bind-options no-sslv3 ssl-min-ver TLSv1.2 no-tls-tickets bogus\nprofiling.tasks auto\ndefault-path config\n",
    );
    assert_eq!(g.bind_tls.min_version, Some("1.2"));
    assert_eq!(g.bind_tls.tickets, Some(false));
    assert_eq!(
        messages(&diag),
        ["h.cfg:1: global: unknown option 'bogus' in 'ssl-default-bind-options'"]
    );
    assert!(!g.profiling.unwrap().v);
    assert_eq!(diag.warnings.len(), 1);
}
