//! Validation rules of `[[frontend]]`: bind forms, TLS inheritance, certificate forms and paths,
//! monitor URI, default backend, timeouts and limits.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::frontend::parse_bind_address;
use crate::test_support::*;
use crate::{CertSource, TlsSettings};

fn addr(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

#[test]
fn bind_address_forms() {
    assert_eq!(
        parse_bind_address("1.2.3.4:443").unwrap(),
        addr("1.2.3.4:443")
    );
    assert_eq!(parse_bind_address("[::1]:443").unwrap(), addr("[::1]:443"));
    assert_eq!(parse_bind_address("*:443").unwrap(), addr("0.0.0.0:443"));
    assert_eq!(parse_bind_address(":443").unwrap(), addr("0.0.0.0:443"));
    assert_eq!(
        parse_bind_address("127.0.0.1:0").unwrap(),
        addr("127.0.0.1:0")
    );
    for bad in [
        "",
        "443",
        "localhost:443",
        "*:",
        ":http",
        "1.2.3.4:70000",
        "::1:443",
        "*:-1",
    ] {
        let err = parse_bind_address(bad).unwrap_err();
        assert!(err.contains("\"*:443\""), "{bad:?}: {err}");
    }
}

#[test]
fn bind_errors_point_at_the_address() {
    let text = MINIMAL.replace(
        "[\"127.0.0.1:0\"]",
        "[\n  \"127.0.0.1:0\",\n  \"localhost:80\",\n]",
    );
    assert_error(
        &text,
        5,
        "frontend[0].bind[1]",
        "invalid bind address `localhost:80`",
    );
    let text = MINIMAL.replace("[\"127.0.0.1:0\"]", "[{ address = \"x\" }]");
    assert_error(
        &text,
        3,
        "frontend[0].bind[0].address",
        "invalid bind address `x`",
    );
    let text = MINIMAL.replace("bind = [\"127.0.0.1:0\"]\n", "");
    assert_error(&text, 1, "frontend[0].bind", "missing key `bind`");
    let text = MINIMAL.replace("[\"127.0.0.1:0\"]", "[]");
    assert_error(&text, 3, "frontend[0].bind", "at least one address");
}

#[test]
fn duplicate_binds_are_errors_across_frontends_except_port_zero() {
    let second = "\n[[frontend]]\nname = \"b\"\nbind = [\"127.0.0.1:0\", \"*:8080\"]\ndefault_backend = \"app\"\n";
    let text = format!(
        "{}{second}",
        MINIMAL.replace("[\"127.0.0.1:0\"]", "[\":8080\"]")
    );
    assert_error(
        &text,
        12,
        "frontend[1].bind[1]",
        "0.0.0.0:8080 is already used by frontend[0].bind[0]",
    );
    let text = format!("{MINIMAL}{}", second.replace("*:8080", "127.0.0.1:0"));
    assert_eq!(parse_ok(&text).frontends[1].binds.len(), 2);
}

#[test]
fn binds_inherit_or_override_the_frontend_tls() {
    let text = MINIMAL.replace(
        "bind = [\"127.0.0.1:0\"]",
        "tls = { certs = [\"main.pem\"] }\nbind = [\n  \"127.0.0.1:1\",\n  { address = \"127.0.0.1:2\" },\n  \
         { address = \"127.0.0.1:3\", tls = false },\n  \
         { address = \"127.0.0.1:4\", tls = { certs = [{ cert = \"/abs/c.pem\", key = \"k.pem\" }] } },\n]",
    );
    let binds = &parse_ok(&text).frontends[0].binds;
    let main = TlsSettings::new(vec![CertSource::Combined("/etc/tern/main.pem".into())]);
    let own = TlsSettings::new(vec![CertSource::Split {
        cert: "/abs/c.pem".into(),
        key: "/etc/tern/k.pem".into(),
    }]);
    let got: Vec<(SocketAddr, Option<TlsSettings>)> =
        binds.iter().map(|b| (b.address, b.tls.clone())).collect();
    assert_eq!(
        got,
        [
            (addr("127.0.0.1:1"), Some(main.clone())),
            (addr("127.0.0.1:2"), Some(main)),
            (addr("127.0.0.1:3"), None),
            (addr("127.0.0.1:4"), Some(own)),
        ]
    );
}

#[test]
fn binds_without_any_tls_are_plain() {
    let text = MINIMAL.replace(
        "[\"127.0.0.1:0\"]",
        "[{ address = \"127.0.0.1:0\", tls = false }, \":0\"]",
    );
    let binds = &parse_ok(&text).frontends[0].binds;
    assert!(binds.iter().all(|b| b.tls.is_none()));
}

#[test]
fn tls_rules() {
    let text = MINIMAL.replace(
        "[\"127.0.0.1:0\"]",
        "[{ address = \"127.0.0.1:0\", tls = true }]",
    );
    assert_error(
        &text,
        3,
        "frontend[0].bind[0].tls",
        "`tls = true` is not accepted",
    );
    assert_error(
        &with_frontend_lines("tls = { certs = [] }"),
        5,
        "frontend[0].tls.certs",
        "at least one certificate",
    );
    assert_error(
        &with_frontend_lines("tls = {}"),
        5,
        "frontend[0].tls.certs",
        "missing key `certs`",
    );
    assert_error(
        &with_frontend_lines("tls = { certs = [\"\"] }"),
        5,
        "frontend[0].tls.certs[0]",
        "must not be empty",
    );
    let text = with_frontend_lines(
        "[frontend.tls]\ncerts = [\n  \"a.pem\",\n  { cert = \"c.pem\", key = \"\" },\n]",
    );
    assert_error(
        &text,
        8,
        "frontend[0].tls.certs[1].key",
        "must not be empty",
    );
}

#[test]
fn cert_paths_resolve_against_the_config_directory() {
    let text = with_frontend_lines("tls = { certs = [\"a.pem\", \"../b.pem\", \"/x/c.pem\", { cert = \"d/c.pem\", key = \"d/k.pem\" }] }");
    let certs = parse_ok(&text).frontends[0].binds[0]
        .tls
        .clone()
        .unwrap()
        .certs;
    assert_eq!(
        certs.into_iter().map(|c| c.source).collect::<Vec<_>>(),
        vec![
            CertSource::Combined("/etc/tern/a.pem".into()),
            CertSource::Combined("/etc/tern/../b.pem".into()),
            CertSource::Combined("/x/c.pem".into()),
            CertSource::Split {
                cert: PathBuf::from("/etc/tern/d/c.pem"),
                key: PathBuf::from("/etc/tern/d/k.pem")
            },
        ]
    );
}

#[test]
fn frontend_values_are_read() {
    let text = with_frontend_lines(
        "monitor_uri = \"/health\"\nmaxconn = 7\nx_forwarded_for = false\nx_forwarded_proto = false\n\
         timeouts = { client = \"1s\", http_request = \"2s\", keep_alive = \"3s\", handshake = \"4s\" }\n\
         limits = { max_head_size = \"1m\", max_headers = 1000 }",
    );
    let fe = &parse_ok(&text).frontends[0];
    assert_eq!(fe.monitor_uri.as_deref(), Some("/health"));
    assert_eq!(fe.maxconn, Some(7));
    assert!(!fe.x_forwarded_for && !fe.x_forwarded_proto);
    let t = fe.timeouts;
    assert_eq!(
        [t.client, t.http_request, t.keep_alive, t.handshake],
        [1, 2, 3, 4].map(Duration::from_secs)
    );
    assert_eq!(fe.limits.max_head_size, 1024 * 1024);
    assert_eq!(fe.limits.max_headers, 1000);
    let fe = &parse_ok(&with_frontend_lines(
        "limits = { max_head_size = 8192, max_headers = 1 }",
    ))
    .frontends[0];
    assert_eq!((fe.limits.max_head_size, fe.limits.max_headers), (8192, 1));
}

#[test]
fn frontend_rules() {
    assert_error(
        &with_frontend_lines("monitor_uri = \"health\""),
        5,
        "frontend[0].monitor_uri",
        "must start with '/'",
    );
    assert_error(
        &with_frontend_lines("monitor_uri = \"/a b\""),
        5,
        "frontend[0].monitor_uri",
        "spaces",
    );
    assert_error(
        &with_frontend_lines("maxconn = 0"),
        5,
        "frontend[0].maxconn",
        "out of range",
    );
    assert_error(
        &MINIMAL.replace("default_backend = \"app\"", "default_backend = \"ap\""),
        4,
        "frontend[0].default_backend",
        "no backend named `ap` (backends: `app`)",
    );
    assert_error(
        &MINIMAL.replace("default_backend = \"app\"\n", ""),
        1,
        "frontend[0].default_backend",
        "missing key",
    );
}

#[test]
fn frontend_timeouts_and_limits_rules() {
    let text = with_frontend_lines("timeouts = { client = \"0s\", http_request = 5,\n  keep_alive = \"5x\", handshake = \"25d\" }");
    assert_error(&text, 5, "frontend[0].timeouts.client", "zero");
    assert_error(
        &text,
        5,
        "frontend[0].timeouts.http_request",
        "write \"5s\"",
    );
    assert_error(
        &text,
        6,
        "frontend[0].timeouts.keep_alive",
        "invalid duration",
    );
    assert_error(&text, 6, "frontend[0].timeouts.handshake", "too long");
    let text = with_frontend_lines("limits = { max_head_size = \"4k\", max_headers = 0 }");
    assert_error(
        &text,
        5,
        "frontend[0].limits.max_head_size",
        "between 8k and 1m",
    );
    assert_error(
        &text,
        5,
        "frontend[0].limits.max_headers",
        "between 1 and 1000",
    );
    let text = with_frontend_lines("limits.max_head_size = \"2m\"\nlimits.max_headers = 1001");
    assert_error(&text, 5, "frontend[0].limits.max_head_size", "out of range");
    assert_error(&text, 6, "frontend[0].limits.max_headers", "out of range");
    assert_error(
        &with_frontend_lines("limits = { max_head_size = -1 }"),
        5,
        "frontend[0].limits.max_head_size",
        "negative",
    );
    assert_error(
        &with_frontend_lines("limits = { max_head_size = \"16kb\" }"),
        5,
        "frontend[0].limits.max_head_size",
        "invalid size",
    );
}

#[test]
fn http2_settings_have_safe_defaults_and_ranges() {
    use crate::test_support::{assert_error, parse_ok, with_frontend_lines};
    let c = parse_ok(&with_frontend_lines(""));
    assert_eq!(c.frontends[0].http2, crate::model::Http2Settings::default());
    assert!(!c.frontends[0].http2.cleartext);

    let c = parse_ok(&with_frontend_lines(
        "http2 = { cleartext = true, max_concurrent_streams = 250, initial_window_size = \"1m\", \
         max_frame_size = \"32k\", max_control_frames = 5000 }",
    ));
    let h2 = c.frontends[0].http2;
    assert!(h2.cleartext);
    assert_eq!(h2.max_concurrent_streams, 250);
    assert_eq!(h2.initial_window_size, 1 << 20);
    assert_eq!(h2.max_frame_size, 32 * 1024);
    assert_eq!(h2.max_control_frames, 5000);

    for (setting, key) in [
        ("max_concurrent_streams = 0", "max_concurrent_streams"),
        ("max_frame_size = 1000", "max_frame_size"),
        ("initial_window_size = \"4g\"", "initial_window_size"),
        ("max_control_frames = 0", "max_control_frames"),
    ] {
        let text = with_frontend_lines(&format!("http2 = {{ {setting} }}"));
        assert_error(&text, 5, &format!("frontend[0].http2.{key}"), "");
    }
}

#[test]
fn accept_proxy_is_inherited_by_binds_unless_they_say_otherwise() {
    let c = crate::test_support::parse_ok(
        r#"
[[frontend]]
name = "web"
accept_proxy = true
bind = ["127.0.0.1:0", { address = "127.0.0.1:1", accept_proxy = false }]
default_backend = "app"

[[backend]]
name = "app"
servers = [{ name = "s1", address = "127.0.0.1:9" }]
"#,
    );
    let binds = &c.frontends[0].binds;
    assert!(binds[0].accept_proxy);
    assert!(!binds[1].accept_proxy);
}

#[test]
fn accept_proxy_from_turns_the_header_on_for_listed_sources_and_binds_inherit_it() {
    let c = crate::test_support::parse_ok(
        r#"
[[frontend]]
name = "web"
accept_proxy_from = ["10.0.0.0/8", "::1"]
bind = [
  "127.0.0.1:0",
  { address = "127.0.0.1:1", accept_proxy = false },
  { address = "127.0.0.1:2", accept_proxy_from = ["192.0.2.7"] },
]
default_backend = "app"

[[frontend]]
name = "own"
bind = [{ address = "127.0.0.1:3", accept_proxy_from = ["127.0.0.0/8"] }]
default_backend = "app"

[[backend]]
name = "app"
servers = [{ name = "s1", address = "127.0.0.1:9" }]
"#,
    );
    let binds = &c.frontends[0].binds;
    assert!(binds[0].accept_proxy);
    let nets: Vec<String> = binds[0]
        .accept_proxy_from
        .iter()
        .map(|n| format!("{}/{}", n.addr, n.prefix))
        .collect();
    assert_eq!(nets, ["10.0.0.0/8", "::1/128"]);
    assert!(!binds[1].accept_proxy && binds[1].accept_proxy_from.is_empty());
    assert!(binds[2].accept_proxy);
    assert_eq!(binds[2].accept_proxy_from.len(), 1);
    let own = &c.frontends[1].binds[0];
    assert!(own.accept_proxy && own.accept_proxy_from.len() == 1);
    crate::test_support::assert_error(
        &with_frontend_lines("accept_proxy_from = [\"10.0.0.0/33\"]"),
        5,
        "frontend[0].accept_proxy_from[0]",
        "is not an address or network",
    );
}

#[test]
fn the_summary_counts_binds_with_accept_proxy() {
    let plain = parse_ok(MINIMAL).summary();
    assert!(!plain.contains("accept_proxy"), "{plain}");
    let c = parse_ok(&with_frontend_lines("accept_proxy = true"));
    assert!(
        c.summary()
            .contains("(1 bind, 0 with TLS, 1 with accept_proxy)"),
        "{}",
        c.summary()
    );
}

#[test]
fn a_tcp_frontend_offers_no_alpn_unless_written() {
    let tcp = |lines: &str| {
        let text = format!(
            "[[frontend]]\nname = \"web\"\nmode = \"tcp\"\ndefault_backend = \"app\"\n{lines}\n\n\
             [[backend]]\nname = \"app\"\nmode = \"tcp\"\n\
             servers = [ {{ name = \"s1\", address = \"127.0.0.1:8080\" }} ]\n"
        );
        parse_ok(&text).frontends[0].binds.clone()
    };
    let alpn = |b: &crate::model::Bind| b.tls.as_ref().unwrap().policy.alpn.clone();
    let binds = tcp("tls = { certs = [\"c.pem\"] }\n\
                     bind = [\"127.0.0.1:1\", { address = \"127.0.0.1:2\", tls = { certs = [\"d.pem\"] } }]");
    assert!(alpn(&binds[0]).is_empty() && alpn(&binds[1]).is_empty());
    let binds =
        tcp("tls = { certs = [\"c.pem\"], alpn = [\"http/1.1\"] }\nbind = [\"127.0.0.1:1\"]");
    assert_eq!(alpn(&binds[0]), ["http/1.1"]);
    // An HTTP frontend keeps HTTP/2 first.
    let http = parse_ok(&with_frontend_lines("tls = { certs = [\"c.pem\"] }"));
    assert_eq!(alpn(&http.frontends[0].binds[0]), ["h2", "http/1.1"]);
}
