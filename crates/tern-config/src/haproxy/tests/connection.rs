//! `option http-keep-alive|http-server-close|httpclose` → `connection_mode`, as HAProxy's H1
//! layer applies them: a frontend's mode to its client side (and, for `server-close` and
//! `close`, to the server side of every request it passes on), a backend's to its servers.

use super::*;
use crate::ConnectionMode;

/// A frontend `f` and a backend `b`, with `fe` and `be` lines in them.
fn pair(defaults: &str, fe: &str, be: &str) -> Converted {
    convert(&format!(
        "{HEAD}{defaults}frontend f\n  bind :80\n{fe}  default_backend b\nbackend b\n{be}  server s 10.0.0.1:80\n"
    ))
}

/// The converted modes of the first frontend and the first backend.
fn modes(c: &Converted) -> (ConnectionMode, ConnectionMode) {
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let config = validate(c);
    (
        config.frontends[0].connection_mode,
        config.backends[0].connection_mode,
    )
}

#[test]
fn httpclose_on_a_frontend_closes_both_sides() {
    let c = pair("", "  option httpclose\n", "");
    assert_has(&c, "connection_mode = \"close\"");
    assert_eq!(
        modes(&c),
        (ConnectionMode::Close, ConnectionMode::KeepAlive)
    );
}

#[test]
fn httpclose_on_a_backend_closes_only_server_connections() {
    let c = pair("", "", "  option httpclose\n");
    assert_has(&c, "connection_mode = \"server-close\"");
    assert_eq!(
        modes(&c),
        (ConnectionMode::KeepAlive, ConnectionMode::ServerClose)
    );
}

#[test]
fn http_server_close_on_either_side() {
    let c = pair("", "  option http-server-close\n", "");
    assert_eq!(
        modes(&c),
        (ConnectionMode::ServerClose, ConnectionMode::KeepAlive)
    );
    let c = pair("", "", "  option http-server-close\n");
    assert_eq!(
        modes(&c),
        (ConnectionMode::KeepAlive, ConnectionMode::ServerClose)
    );
    // Nothing is copied to the backend: tern applies the frontend's mode to its servers.
    let c = pair("", "  option http-server-close\n", "");
    assert!(!c.toml.contains("max_idle_per_server"), "{}", c.toml);
}

#[test]
fn a_listen_section_is_both_sides() {
    let c = convert(&format!(
        "{HEAD}listen web\n  bind :80\n  option httpclose\n  server s 10.0.0.1:80\n"
    ));
    assert_eq!(
        modes(&c),
        (ConnectionMode::Close, ConnectionMode::ServerClose)
    );
}

#[test]
fn defaults_are_inherited_and_the_last_option_wins() {
    let c = pair("  option httpclose\n", "", "");
    assert_eq!(
        modes(&c),
        (ConnectionMode::Close, ConnectionMode::ServerClose)
    );
    let c = pair("  option httpclose\n", "  option http-keep-alive\n", "");
    assert_eq!(
        modes(&c),
        (ConnectionMode::KeepAlive, ConnectionMode::ServerClose)
    );
    let c = pair(
        "",
        "  option http-server-close\n  option httpclose\n",
        "  option httpclose\n  option http-server-close\n",
    );
    assert_eq!(
        modes(&c),
        (ConnectionMode::Close, ConnectionMode::ServerClose)
    );
}

#[test]
fn no_option_cancels_only_the_current_mode() {
    // Cancels the mode inherited from defaults.
    let c = pair("  option httpclose\n", "  no option httpclose\n", "");
    assert_eq!(
        modes(&c),
        (ConnectionMode::KeepAlive, ConnectionMode::ServerClose)
    );
    // Another mode is left alone.
    let c = pair(
        "  option httpclose\n",
        "  no option http-server-close\n",
        "  no option http-keep-alive\n",
    );
    assert_eq!(
        modes(&c),
        (ConnectionMode::Close, ConnectionMode::ServerClose)
    );
    let c = pair(
        "",
        "  option http-server-close\n  no option http-server-close\n",
        "",
    );
    assert_eq!(
        modes(&c),
        (ConnectionMode::KeepAlive, ConnectionMode::KeepAlive)
    );
}

#[test]
fn http_reuse_never_still_turns_the_pool_off() {
    let c = pair("", "", "  http-reuse never\n");
    assert_has(&c, "pool.max_idle_per_server = 0");
    assert!(!c.toml.contains("connection_mode"), "{}", c.toml);
    validate(&c);
}

#[test]
fn the_mode_options_take_no_argument() {
    let e = errors(&format!(
        "{HEAD}frontend f\n  bind :80\n  option httpclose now\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert_eq!(
        e,
        ["haproxy.cfg:8: frontend f: 'option httpclose' takes no argument, got 'now'"]
    );
}
