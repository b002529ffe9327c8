#![allow(clippy::unwrap_used)]

use crate::model::ProxyMode;
use crate::test_support::*;

/// A TCP frontend (line 1) routing to a TCP backend (line 7).
const TCP: &str = r#"[[frontend]]
name = "db"
mode = "tcp"
bind = ["127.0.0.1:0"]
default_backend = "pg"

[[backend]]
name = "pg"
mode = "tcp"
balance = "source"
servers = [ { name = "s1", address = "127.0.0.1:5432" } ]
"#;

#[test]
fn http_is_the_default_and_tcp_is_read() {
    let config = parse_ok(MINIMAL);
    assert_eq!(config.frontends[0].mode, ProxyMode::Http);
    assert_eq!(config.backends[0].mode, ProxyMode::Http);
    let config = parse_ok(TCP);
    assert_eq!(config.frontends[0].mode, ProxyMode::Tcp);
    assert_eq!(config.backends[0].mode, ProxyMode::Tcp);
}

#[test]
fn unknown_mode_is_refused() {
    let text = TCP.replace("mode = \"tcp\"\nbind", "mode = \"udp\"\nbind");
    assert_error(&text, 3, "frontend[0].mode", "unknown mode `udp`");
}

#[test]
fn a_tcp_frontend_cannot_route_to_an_http_backend() {
    let text = TCP.replace("name = \"pg\"\nmode = \"tcp\"\n", "name = \"pg\"\n");
    assert_error(
        &text,
        5,
        "frontend[0].default_backend",
        "frontend `db` has mode = \"tcp\" but backend `pg` has mode = \"http\"",
    );
}

#[test]
fn an_http_frontend_cannot_route_to_a_tcp_backend() {
    let text = TCP.replace("name = \"db\"\nmode = \"tcp\"\n", "name = \"db\"\n");
    assert_error(
        &text,
        4,
        "frontend[0].default_backend",
        "mode = \"http\" but backend `pg`",
    );
}

#[test]
fn http_keys_on_a_tcp_frontend_are_refused_where_written() {
    let text = TCP.replace(
        "default_backend = \"pg\"\n",
        "default_backend = \"pg\"\nmonitor_uri = \"/up\"\nx_forwarded_for = true\n\
         timeouts = { keep_alive = \"5s\", client = \"5s\" }\nhttp2 = { cleartext = true }\n",
    );
    assert_error(
        &text,
        6,
        "frontend[0].monitor_uri",
        "`monitor_uri` is an HTTP setting",
    );
    assert_error(&text, 7, "frontend[0].x_forwarded_for", "HTTP setting");
    assert_error(&text, 8, "frontend[0].timeouts.keep_alive", "`keep_alive`");
    assert_error(&text, 9, "frontend[0].http2", "`http2`");
    assert_eq!(
        parse_err(&text).len(),
        4,
        "the client timeout is a TCP setting"
    );
}

#[test]
fn http_keys_on_a_tcp_backend_are_refused_where_written() {
    let text = TCP.replace(
        "balance = \"source\"\n",
        "balance = \"uri\"\ncookie = { name = \"SRV\" }\nobserve = { on = \"layer7\" }\n\
         http_request = [ { action = \"deny\" } ]\n",
    );
    assert_error(&text, 10, "backend[0].balance", "use `source`");
    assert_error(
        &text,
        11,
        "backend[0].cookie",
        "`cookie` is an HTTP setting",
    );
    assert_error(&text, 13, "backend[0].http_request", "HTTP setting");
}

#[test]
fn sni_from_host_is_refused_on_a_tcp_backend() {
    let text = TCP.replace(
        "address = \"127.0.0.1:5432\" }",
        "address = \"127.0.0.1:5432\", tls = { sni = \"host\", verify = \"none\" } }",
    );
    assert_error(&text, 11, "backend[0].servers[0].tls.sni", "never reads");
}

#[test]
fn tcp_routes_read_connection_facts_only() {
    let routes = "use_backend = [ { backend = \"pg\", if = \"{ ssl_fc_sni -i db.example }\" },\n\
                  { backend = \"pg\", if = \"{ path_beg /x }\" } ]\n\
                  tcp_request = { inspect_delay = \"1s\" }\n";
    let text = TCP.replace("default_backend = \"pg\"\n", routes);
    assert_error(
        &text,
        6,
        "frontend[0].use_backend[1]",
        "`path` is an HTTP fetch: it reads the request",
    );
    assert_eq!(parse_err(&text).len(), 1);
}

/// A passthrough frontend: routes on the SNI of a ClientHello it never terminates.
const PASSTHROUGH: &str = r#"[[frontend]]
name = "sni"
mode = "tcp"
bind = ["127.0.0.1:0"]
tcp_request = { inspect_delay = "5s", content = [ { action = "accept", if = "{ req.ssl_hello_type 1 }" }, { action = "reject" } ] }
use_backend = [ { backend = "pg", if = "{ req.ssl_sni -m end .example }" } ]
default_backend = "pg"

[[backend]]
name = "pg"
mode = "tcp"
servers = [ { name = "s1", address = "127.0.0.1:5432" } ]
"#;

#[test]
fn tcp_request_is_read_and_its_rules_evaluated() {
    let config = parse_ok(PASSTHROUGH);
    let tr = &config.frontends[0].tcp_request;
    assert_eq!(tr.inspect_delay, Some(std::time::Duration::from_secs(5)));
    assert_eq!(tr.content.len(), 2);
    assert!(tr.content[0].accept && !tr.content[1].accept);
}

#[test]
fn reading_the_client_hello_on_a_plain_bind_needs_an_inspect_delay() {
    let text = PASSTHROUGH.replace("inspect_delay = \"5s\", ", "");
    assert_error(
        &text,
        6,
        "frontend[0].use_backend[0]",
        "a plain bind only sees with tcp_request.inspect_delay",
    );
}

#[test]
fn tcp_request_is_refused_on_an_http_frontend_and_bad_actions_named() {
    let text = PASSTHROUGH.replace("mode = \"tcp\"\n", "");
    assert_error(
        &text,
        4,
        "frontend[0].tcp_request",
        "only a frontend with mode",
    );
    let text = PASSTHROUGH.replace("\"reject\"", "\"drop\"");
    assert_error(
        &text,
        5,
        "frontend[0].tcp_request.content[1].action",
        "unknown action `drop`",
    );
}

#[test]
fn the_hello_type_is_refused_on_an_http_frontend() {
    let text = with_frontend_lines(
        "http_request = [ { action = \"deny\", if = \"{ req.ssl_hello_type 1 }\" } ]",
    );
    assert_error(
        &text,
        5,
        "frontend[0].http_request[0]",
        "only a frontend with mode = \"tcp\" does",
    );
}
