//! `compression` lines and `tune.comp.maxlevel`: what they become, and their warnings.

use super::*;
use crate::model::Coding;

#[test]
fn defaults_and_proxies_add_up_and_the_level_comes_from_global() {
    let text = format!(
        "global\n  tune.comp.maxlevel 6\n{HEAD}  compression algo gzip\n\
         frontend f\n  bind :80\n  compression algo br identity\n  compression type text/html text/plain\n  \
         compression offload\n  default_backend b\n\
         backend b\n  compression algo-res zstd\n  compression direction response\n  server s 10.0.0.1:80\n"
    );
    let c = convert(&text);
    assert_has(
        &c,
        r#"compression = { algos = ["gzip", "br"], types = ["text/html", "text/plain"], offload = true, min_size = 0, gzip_level = 6 }"#,
    );
    assert_has(
        &c,
        r#"compression = { algos = ["gzip", "zstd"], min_size = 0, gzip_level = 6 }"#,
    );
    assert_eq!(warned(&c.warnings), ["11: compression algo identity"]);
    let config = validate(&c);
    let fe = config.frontends[0].compression.as_ref().unwrap();
    assert_eq!(fe.algos, [Coding::Gzip, Coding::Brotli]);
    assert!(fe.offload);
    assert_eq!((fe.min_size, fe.gzip_level), (0, 6));
}

#[test]
fn offload_in_defaults_and_lines_without_algo_do_nothing() {
    let text = format!(
        "{HEAD}  compression offload\n\
         frontend f\n  bind :80\n  compression type text/html\n  default_backend b\n\
         backend b\n  server s 10.0.0.1:80\n"
    );
    let c = convert(&text);
    assert!(!c.toml.contains("compression ="), "{}", c.toml);
    assert_eq!(
        warned(&c.warnings),
        ["6: compression offload", "9: compression"]
    );
}

#[test]
fn bad_lines_are_errors_at_their_line() {
    let e = errors(&format!(
        "{HEAD}frontend f\n  bind :80\n  compression algo lzma\n  compression direction both\n  \
         compression\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert_eq!(
        e,
        [
            "haproxy.cfg:8: frontend f: unknown compression algorithm 'lzma' (gzip, deflate, raw-deflate, br, zstd)",
            "haproxy.cfg:9: frontend f: keyword 'compression direction' is not supported yet: tern compresses responses only",
            "haproxy.cfg:10: frontend f: 'compression' needs algo, type or offload",
        ]
    );
    let e = check_errors(&format!(
        "{HEAD}frontend f\n  bind :80\n  compression algo deflate raw-deflate\n  default_backend b\n\
         backend b\n  server s 10.0.0.1:80\n"
    ));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("haproxy.cfg:8: frontend f: compression.algos[1]"),
        "{e:?}"
    );
}

#[test]
fn a_tcp_proxy_warns_and_drops_it() {
    let text =
        "defaults\n  mode tcp\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
                frontend f\n  bind :80\n  compression algo gzip\n  default_backend b\n\
                backend b\n  server s 10.0.0.1:80\n";
    let c = convert(text);
    assert!(!c.toml.contains("compression ="), "{}", c.toml);
    assert_eq!(warned(&c.warnings), ["8: compression"]);
}
