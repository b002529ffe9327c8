//! Errors and warnings, with file, line and keyword.

use super::*;

#[test]
fn unknown_and_unsupported_keywords_name_file_line_and_keyword() {
    let e = errors(&format!(
        "{HEAD}frontend web\n  bind :80\n  foo bar\n  default_backend app\nbackend app\n\
         server s1 10.0.0.1:80 check-send-proxy frobnicate\n  option abortonclose\n  compression algo-req gzip\n"
    ));
    assert_eq!(
        e,
        [
            "haproxy.cfg:8: frontend web: unknown keyword 'foo'",
            "haproxy.cfg:11: backend app: keyword 'check-send-proxy' is not supported yet",
            "haproxy.cfg:11: backend app: unknown keyword 'frobnicate'",
            "haproxy.cfg:12: backend app: keyword 'option abortonclose' is not supported yet",
            "haproxy.cfg:13: backend app: keyword 'compression algo-req' is not supported yet: tern compresses responses only",
        ]
    );
}

#[test]
fn modes_other_than_http_and_tcp_are_not_supported() {
    let e = errors("defaults\n  mode health\nfrontend f\n  bind :80\n  default_backend b\nbackend b\n  mode http\n  server s 10.0.0.1:80\n");
    assert_eq!(e, ["haproxy.cfg:2: frontend f: keyword 'mode health' is not supported yet: tern proxies in http and tcp mode"]);
}

#[test]
fn lexer_errors_and_bad_values() {
    let e = errors(&format!(
        "{HEAD}frontend f\n  bind \"127.0.0.1:80\n  bind :80 ssl\n  maxconn lots\n  timeout client 5x\n  default_backend b\n\
         backend b\n  server s 10.0.0.1\n  balance nope\n"
    ));
    assert_eq!(
        e,
        [
            "haproxy.cfg:7: unmatched double quote",
            "haproxy.cfg:8: frontend f: 'ssl' on a bind needs 'crt' or 'crt-list'",
            "haproxy.cfg:9: frontend f: 'maxconn': invalid number 'lots': a non-negative integer expected",
            "haproxy.cfg:10: frontend f: 'timeout': invalid time '5x': a number with an optional unit (us, ms, s, m, h, d) expected",
            "haproxy.cfg:13: backend b: server address '10.0.0.1' has no port: HAProxy then uses the port the client connected to, which tern does not support yet",
            "haproxy.cfg:14: backend b: unknown balance algorithm 'nope'",
        ]
    );
}

#[test]
fn stats_on_a_proxy_that_forwards_traffic_is_not_supported_yet() {
    let e = errors(&format!("{HEAD}listen web\n  bind :80\n  stats enable\n  stats auth admin:secret\n  server s 10.0.0.1:80\n"));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("haproxy.cfg:8: listen web: keyword 'stats' is not supported yet: a stats page on a proxy that forwards traffic"), "{e:?}");
}

#[test]
fn errors_of_the_toml_stage_point_at_the_cfg_line_and_section() {
    let e = check_errors(&format!(
        "{HEAD}frontend web\n  bind :80\n  default_backend nope\nbackend app\n  server s1 10.0.0.1:80 weight 300\n\
         server s1 10.0.0.2:80\n"
    ));
    println!("{e:#?}");
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(
        e[0].starts_with("haproxy.cfg:8: frontend web: default_backend: "),
        "{e:?}"
    );
    assert!(
        e[1].starts_with("haproxy.cfg:10: backend app: servers[0].weight: 300 is out of range"),
        "{e:?}"
    );
    assert!(
        e[2].starts_with("haproxy.cfg:11: backend app: servers[1].name: "),
        "{e:?}"
    );
}

#[test]
fn warnings_are_one_message_listing_every_keyword() {
    let c = convert(&format!(
        "global\n  daemon\n  log /dev/log local0\n{HEAD}  option httplog\nfrontend f\n  bind :80\n  default_backend b\n\
         backend b\n  server s 10.0.0.1:80\n"
    ));
    assert_eq!(
        super::super::format_warnings(&c.warnings),
        "warning: haproxy.cfg: 3 keywords with no effect in tern or mapped approximately:\n  \
         haproxy.cfg:2: global: 'daemon' has no effect in tern: tern runs in the foreground; let the service manager run it in the background\n  \
         haproxy.cfg:3: global: 'log' has no effect in tern: HAProxy's log lines are not converted; tern's access log is configured in [access_log]\n  \
         haproxy.cfg:9: defaults: 'option httplog' has no effect in tern: HAProxy's logging is not converted; tern's access log is configured in [access_log]"
    );
}

#[test]
fn unknown_sections_and_defaults_references() {
    let e = errors(&format!(
        "{HEAD}mailers mesh\n  mailer a 127.0.0.1:1024\nfrontend f from nope\n  bind :80\n"
    ));
    assert_eq!(
        e,
        [
            "haproxy.cfg:6: section 'mailers' is not supported yet",
            "haproxy.cfg:8: frontend f: no defaults section named 'nope' before this section",
        ]
    );
}

mod no_panic {
    use proptest::prelude::*;

    use super::*;

    /// Words HAProxy files are made of, so that random lines reach deep into the keyword code.
    const WORDS: &[&str] = &[
        "global",
        "defaults",
        "frontend",
        "backend",
        "listen",
        "f",
        "b",
        "from",
        "mode",
        "http",
        "tcp",
        "bind",
        ":80",
        "127.0.0.1:0",
        "ssl",
        "crt",
        "x.pem",
        "alpn",
        "h2,http/1.1",
        "server",
        "s",
        "10.0.0.1:80",
        "check",
        "inter",
        "2s",
        "weight",
        "0",
        "99999999999999999999",
        "cookie",
        "insert",
        "stick-table",
        "type",
        "ip",
        "size",
        "1k",
        "stick",
        "on",
        "src",
        "acl",
        "a",
        "path_beg",
        "/x",
        "use_backend",
        "if",
        "unless",
        "{",
        "}",
        "http-request",
        "deny",
        "return",
        "status",
        "set-header",
        "X",
        "timeout",
        "client",
        "option",
        "httpchk",
        "forwardfor",
        "http-check",
        "expect",
        "balance",
        "uri",
        "whole",
        "hash-type",
        "consistent",
        "cpu-map",
        "auto:1/1-2",
        "0-1",
        "nbthread",
        "stats",
        "socket",
        "enable",
        "maxqueue",
        "default-server",
        "\"",
        "'",
        "\\",
        "#",
        "${X}",
        "\"${Y-z}\"",
        "-",
        "",
        "no",
    ];

    /// A valid head, then lines of a keyword and random words.
    fn text() -> impl Strategy<Value = String> {
        let keyword = proptest::sample::select(WORDS);
        let words = proptest::collection::vec(proptest::sample::select(WORDS), 0..7);
        let line = (keyword, words).prop_map(|(k, w)| format!("{k} {}", w.join(" ")));
        proptest::collection::vec(line, 0..30).prop_map(|lines| {
            format!(
                "{HEAD}frontend f\n  bind :80\n  default_backend b\nbackend b\n{}",
                lines.join("\n")
            )
        })
    }

    proptest! {
        #[test]
        fn conversion_never_panics(text in text()) {
            if let Ok(c) = convert_in(Path::new(""), &text) {
                // What it writes is TOML (the TOML stage may still refuse it, with errors).
                prop_assert!(toml::from_str::<toml::Table>(&c.toml).is_ok(), "{}", c.toml);
                let _ = c.validate(Path::new("haproxy.cfg"));
            }
        }
    }
}

#[test]
fn a_server_name_used_twice_is_reported_at_the_server_not_as_broken_toml() {
    let e = check_errors(&format!(
        "{HEAD}listen app\n  bind :80\n  cookie SERVERID insert indirect\n\
         server web 10.0.0.1:80 cookie a\n  server web 10.0.0.2:80 cookie b\n"
    ));
    let duplicate = "haproxy.cfg:10: listen app: servers[1].name: duplicate server name `web`";
    assert!(e.iter().any(|e| e.starts_with(duplicate)), "{e:?}");
    assert!(!e.iter().any(|e| e.contains("TOML")), "{e:?}");
}
