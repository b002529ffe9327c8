//! `mode tcp` (and no `mode` at all, HAProxy's default): TCP proxies, the HTTP settings they
//! ignore with a warning, and what the TOML stage refuses at the `.cfg` line.

use super::*;
use crate::model::{Balance, BalanceKey, ProxyMode};

const TCP_HEAD: &str =
    "defaults\n  mode tcp\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n";

#[test]
fn mode_tcp_makes_tcp_frontends_and_backends() {
    let c = convert(&format!(
        "{TCP_HEAD}frontend redis\n  bind 127.0.0.1:6380\n  default_backend cache\n\
         backend cache\n  balance source\n  retries 2\n  server r1 127.0.0.1:6379 check\n"
    ));
    assert_has(&c, "mode = \"tcp\"");
    let config = validate(&c);
    assert_eq!(config.frontends[0].mode, ProxyMode::Tcp);
    assert_eq!(config.backends[0].mode, ProxyMode::Tcp);
    assert_eq!(
        config.backends[0].balance,
        Balance::Hash {
            key: BalanceKey::Source,
            hash_type: crate::model::BalanceHashType::MapBased
        }
    );
    assert!(!c.toml.contains("x_forwarded_for"), "{}", c.toml);
    assert!(!c.toml.contains("keep_alive"), "{}", c.toml);
}

#[test]
fn a_listen_section_without_mode_is_tcp_as_in_haproxy() {
    let c = convert(
        "listen db\n  bind :5433\n  timeout client 1m\n  timeout server 1m\n  timeout connect 2s\n\
         server pg 127.0.0.1:5432\n",
    );
    let config = validate(&c);
    assert_eq!(config.frontends[0].mode, ProxyMode::Tcp);
    assert_eq!(config.backends[0].mode, ProxyMode::Tcp);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn http_settings_inherited_by_a_tcp_proxy_are_ignored_with_a_warning() {
    let c = convert(
        "defaults\n  mode http\n  option forwardfor\n  option http-server-close\n  timeout client 30s\n\
         timeout server 30s\n  timeout connect 5s\n  timeout http-request 5s\n\
         frontend f\n  mode tcp\n  bind :80\n  default_backend b\nbackend b\n  mode tcp\n\
         server s 10.0.0.1:80\n",
    );
    validate(&c);
    let w = warned(&c.warnings);
    assert!(w.contains(&"3: option forwardfor".to_owned()), "{w:?}");
    assert!(w.contains(&"8: timeout http-request".to_owned()), "{w:?}");
    assert!(
        w.contains(&"4: option http-keep-alive/http-server-close/httpclose".to_owned()),
        "{w:?}"
    );
}

#[test]
fn mixed_modes_and_request_hashing_fail_at_the_cfg_line() {
    let e = check_errors(&format!(
        "{TCP_HEAD}frontend f\n  bind :80\n  default_backend b\nbackend b\n  mode http\n\
         server s 10.0.0.1:80\nbackend c\n  balance uri\n  server s 10.0.0.1:80\n"
    ));
    assert!(
        e.iter()
            .any(|e| e.starts_with("haproxy.cfg:8:")
                && e.contains("backend `b` has mode = \"http\"")),
        "{e:?}"
    );
    assert!(
        e.iter()
            .any(|e| e.starts_with("haproxy.cfg:13:") && e.contains("use `source`")),
        "{e:?}"
    );
}

/// The SNI passthrough of HAProxy's documentation: wait for the ClientHello, accept TLS only,
/// route on the server name.
const PASSTHROUGH: &str = "frontend tls\n  bind :443\n  tcp-request inspect-delay 5s\n\
     tcp-request content accept if { req_ssl_hello_type 1 }\n  tcp-request content reject\n\
     use_backend a if { req.ssl_sni -i a.example }\n\
     use_backend b if { req.ssl_sni -m end .b.example }\n  default_backend a\n\
     backend a\n  server a1 10.0.0.1:443\nbackend b\n  server b1 10.0.0.2:443\n";

#[test]
fn sni_passthrough_is_translated() {
    let c = convert(&format!("{TCP_HEAD}{PASSTHROUGH}"));
    assert_has(&c, "tcp_request.inspect_delay = \"5s\"");
    let config = validate(&c);
    let fe = &config.frontends[0];
    assert_eq!(
        fe.tcp_request.inspect_delay,
        Some(std::time::Duration::from_secs(5))
    );
    assert_eq!(fe.tcp_request.content.len(), 2);
    assert!(fe.tcp_request.content[0].accept && !fe.tcp_request.content[1].accept);
    assert_eq!(fe.use_backend.len(), 2);
}

#[test]
fn other_tcp_request_rules_fail_at_their_line() {
    let e = check_errors(&format!(
        "{TCP_HEAD}frontend f\n  bind :80\n  tcp-request connection set-var(sess.x) int(1)\n\
         tcp-request content track-sc0 src\n  default_backend b\nbackend b\n\
         tcp-request content reject\n  server s 10.0.0.1:80\n"
    ));
    for (line, what) in [
        (8, "tcp-request connection set-var(sess.x)"),
        (9, "tcp-request content track-sc0"),
        (12, "tcp-request in a backend"),
    ] {
        let at = format!("haproxy.cfg:{line}:");
        assert!(
            e.iter().any(|e| e.starts_with(&at) && e.contains(what)),
            "{line} {what}: {e:?}"
        );
    }
    // Reading the ClientHello without waiting for it is refused where the rule is.
    let e = check_errors(&format!(
        "{TCP_HEAD}{}",
        PASSTHROUGH.replace("  tcp-request inspect-delay 5s\n", "")
    ));
    assert!(
        e.iter()
            .any(|e| e.starts_with("haproxy.cfg:8:") && e.contains("inspect_delay")),
        "{e:?}"
    );
}

#[test]
fn expect_proxy_from_listed_sources_becomes_accept_proxy_from() {
    for condition in ["{ src 10.0.0.0/8 192.0.2.7 }", "src 10.0.0.0/8 192.0.2.7"] {
        let c = convert(&format!(
            "{TCP_HEAD}frontend f\n  bind :80\n  bind :81 accept-proxy\n  \
             tcp-request connection expect-proxy layer4 if {condition}\n  default_backend b\n\
             backend b\n  server s 10.0.0.1:80\n"
        ));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let binds = &validate(&c).frontends[0].binds;
        for bind in binds {
            assert!(bind.accept_proxy, "{binds:?}\n{}", c.toml);
            assert_eq!(bind.accept_proxy_from.len(), 2, "{binds:?}");
        }
    }
    let e = check_errors(&format!(
        "{TCP_HEAD}frontend f\n  bind :80\n  tcp-request connection expect-proxy layer4 if {{ src -f nets }}\n  \
         default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(
        e.iter()
            .any(|e| e.starts_with("haproxy.cfg:8:") && e.contains("expect-proxy")),
        "{e:?}"
    );
}
