//! End-to-end tests of `parse`/`load`: defaults, the full example shape, serde-stage errors
//! (syntax, unknown keys at every level, wrong types) and robustness on arbitrary input.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use proptest::prelude::*;

use crate::test_support::*;
use crate::*;

#[test]
fn minimal_config_gets_documented_defaults() {
    let config = parse_ok(MINIMAL);
    let global = &config.global;
    assert_eq!(global.workers, None);
    assert_eq!(global.cpus, None);
    assert_eq!(global.maxconn, 10_000);
    assert_eq!(global.grace, Duration::from_secs(5));
    assert_eq!(global.backlog, 1024);

    let fe = &config.frontends[0];
    assert_eq!(fe.name, "web");
    assert_eq!(
        fe.binds,
        vec![Bind {
            address: "127.0.0.1:0".parse().unwrap(),
            tls: None,
            accept_proxy: false,
            accept_proxy_from: Vec::new(),
        }]
    );
    assert_eq!(fe.monitor_uri, None);
    assert_eq!(fe.default_backend.as_deref(), Some("app"));
    assert_eq!(fe.maxconn, None);
    assert!(fe.x_forwarded_for && fe.x_forwarded_proto);
    assert_eq!(
        fe.timeouts,
        FrontendTimeouts {
            client: Duration::from_secs(30),
            http_request: Duration::from_secs(10),
            keep_alive: Duration::from_secs(10),
            handshake: Duration::from_secs(10),
            client_fin: None,
            tarpit: Duration::from_secs(5),
        }
    );
    assert_eq!(
        fe.limits,
        RequestLimits {
            max_head_size: 16 * 1024,
            max_headers: 100
        }
    );

    let be = &config.backends[0];
    assert_eq!(be.name, "app");
    assert_eq!(be.balance, Balance::RoundRobin);
    assert_eq!(
        be.timeouts,
        BackendTimeouts {
            connect: Duration::from_secs(5),
            server: Duration::from_secs(30),
            tunnel: None,
            server_fin: None,
        }
    );
    assert_eq!(
        be.pool,
        PoolSettings {
            max_idle_per_server: 1024,
            idle_timeout: Duration::from_secs(30)
        }
    );
    assert_eq!(
        be.servers,
        vec![Server {
            name: "s1".into(),
            address: "127.0.0.1:8080".parse().unwrap(),
            weight: 1,
            backup: false,
            maxconn: None,
            check: None,
            tls: None,
            disabled: false,
            proxy_protocol: None,
            proxy_v2: Default::default(),
            proto: ServerProto::Http1,
            ws: crate::WsProto::Auto,
            resolve: None,
        }]
    );
    assert_eq!(config.backend_index("app"), Some(0));
}

#[test]
fn the_task_example_parses_with_its_values() {
    let text = r#"
[global]
workers = 2
cpus = [0, 1]
maxconn = 10000

[[frontend]]
name = "web"
bind = ["127.0.0.1:8443"]
tls = { certs = ["certs/rsa.pem"] }
monitor_uri = "/test"
default_backend = "app"
timeouts = { client = "30s", http_request = "5s", keep_alive = "10s" }

[[backend]]
name = "app"
balance = "roundrobin"
timeouts = { connect = "5s", server = "30s" }
servers = [ { name = "s1", address = "127.0.0.1:8080", weight = 1 } ]
"#;
    let config = parse_ok(text);
    assert_eq!(config.global.workers, Some(2));
    assert_eq!(config.global.cpus, Some(vec![0, 1]));
    let fe = &config.frontends[0];
    let tls = fe.binds[0].tls.as_ref().unwrap();
    assert_eq!(
        tls.certs
            .iter()
            .map(|c| c.source.clone())
            .collect::<Vec<_>>(),
        vec![CertSource::Combined("/etc/tern/certs/rsa.pem".into())]
    );
    assert_eq!(fe.monitor_uri.as_deref(), Some("/test"));
    assert_eq!(fe.timeouts.http_request, Duration::from_secs(5));
    assert_eq!(fe.timeouts.handshake, Duration::from_secs(10));
    assert_eq!(
        config.summary(),
        "ok: 1 frontend (1 bind, 1 with TLS), 1 backend, 1 server, workers=2, maxconn=10000"
    );
}

#[test]
fn summary_counts_and_pluralises() {
    let text = format!(
        "{}\n[[frontend]]\nname = \"b\"\nbind = [\"127.0.0.1:0\", {{ address = \":80\" }}]\n\
         tls = {{ certs = [\"x.pem\"] }}\ndefault_backend = \"app\"\n",
        with_backend_lines("servers = [ { name = \"a\", address = \"127.0.0.1:1\" }, { name = \"b\", address = \"127.0.0.1:2\" }, { name = \"c\", address = \"127.0.0.1:3\" } ]")
            .replace("servers = [ { name = \"s1\", address = \"127.0.0.1:8080\" } ]\n", "")
    );
    assert_eq!(
        parse_ok(&text).summary(),
        "ok: 2 frontends (3 binds, 2 with TLS), 1 backend, 3 servers, workers=auto, maxconn=10000"
    );
}

#[test]
fn syntax_errors_have_a_line_and_no_key_path() {
    let text = format!("{MINIMAL}\n[global\nworkers = 2\n");
    let errors = parse_err(&text);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].line, Some(10));
    assert_eq!(errors[0].key_path, "");
    assert_error("a = \"unterminated\n", 1, "", "");
}

#[test]
fn unknown_keys_are_errors_listing_accepted_keys_at_every_level() {
    let cases: &[(&str, usize, &str, &str)] = &[
        (
            &format!("colour = 1\n{MINIMAL}"),
            1,
            "colour",
            "`global`, `frontend`, `backend`",
        ),
        (
            &with_global("wrokers = 2"),
            11,
            "global.wrokers",
            "`workers`",
        ),
        (
            &with_frontend_lines("bnid = []"),
            5,
            "frontend[0].bnid",
            "`bind`",
        ),
        (
            &with_frontend_lines("timeouts = { clientt = \"1s\" }"),
            5,
            "frontend[0].timeouts.clientt",
            "`http_request`",
        ),
        (
            &with_frontend_lines("limits = {\n max_header = 5 }"),
            6,
            "frontend[0].limits.max_header",
            "`max_headers`",
        ),
        (
            &with_frontend_lines("tls = { certs = [\"a\"], ocsp = true }"),
            5,
            "frontend[0].tls.ocsp",
            "`certs`",
        ),
        (
            &with_frontend_lines(
                "tls = { certs = [ { cert = \"a\", key = \"b\", pass = \"c\" } ] }",
            ),
            5,
            "frontend[0].tls.certs[0].pass",
            "`cert`, `key`",
        ),
        (
            &MINIMAL.replace(
                "bind = [\"127.0.0.1:0\"]",
                "bind = [\n  { address = \":1\", proto = \"h2\" },\n]",
            ),
            4,
            "frontend[0].bind[0].proto",
            "`address`, `tls`, `accept_proxy`",
        ),
        (
            &with_backend_lines("algo = \"x\""),
            8,
            "backend[0].algo",
            "`balance`",
        ),
        (
            &with_backend_lines("timeouts.conect = \"1s\""),
            8,
            "backend[0].timeouts.conect",
            "`connect`",
        ),
        (
            &with_backend_lines("[backend.pool]\nmax_idle = 1"),
            9,
            "backend[0].pool.max_idle",
            "`max_idle_per_server`",
        ),
        (
            &MINIMAL.replace(
                "address = \"127.0.0.1:8080\"",
                "address = \"127.0.0.1:8080\", wieght = 2",
            ),
            8,
            "backend[0].servers[0].wieght",
            "`weight`",
        ),
    ];
    for (text, line, path, needle) in cases {
        assert_error(text, *line, path, "unknown field");
        assert_error(text, *line, path, needle);
    }
}

#[test]
fn wrong_types_name_the_key() {
    assert_error(
        &with_global("workers = \"two\""),
        11,
        "global.workers",
        "expected an integer",
    );
    assert_error(
        &with_global("cpus = [0,\n 1.5]"),
        12,
        "global.cpus[1]",
        "expected an integer",
    );
    assert_error(
        &with_frontend_lines("x_forwarded_for = \"yes\""),
        5,
        "frontend[0].x_forwarded_for",
        "boolean",
    );
    assert_error(
        &MINIMAL.replace("bind = [\"127.0.0.1:0\"]", "bind = [true]"),
        3,
        "frontend[0].bind[0]",
        "address string",
    );
    assert_error(
        &MINIMAL.replace("bind = [\"127.0.0.1:0\"]", "bind = \"127.0.0.1:0\""),
        3,
        "frontend[0].bind",
        "sequence",
    );
    assert_error(
        &with_frontend_lines("tls = { certs = [1] }"),
        5,
        "frontend[0].tls.certs[0]",
        "PEM file path",
    );
    assert_error(
        &with_global("grace = 1.5"),
        11,
        "global.grace",
        "duration string with a unit",
    );
    assert_error(
        &with_frontend_lines("limits = { max_head_size = 1.5 }"),
        5,
        "frontend[0].limits.max_head_size",
        "size",
    );
    let text = MINIMAL.replace("[[frontend]]", "[frontend]");
    assert_error(&text, 1, "frontend", "write [[frontend]]");
}

#[test]
fn missing_serde_required_keys_name_the_key() {
    let text = MINIMAL.replace("bind = [\"127.0.0.1:0\"]", "bind = [{ tls = false }]");
    assert_error(
        &text,
        3,
        "frontend[0].bind[0].address",
        "missing field `address`",
    );
    let text = with_frontend_lines("tls = { certs = [{ key = \"a\" }] }");
    assert_error(
        &text,
        5,
        "frontend[0].tls.certs[0].cert",
        "missing field `cert`",
    );
}

#[test]
fn load_reads_the_file_and_resolves_paths_against_its_directory() {
    let dir = std::env::temp_dir().join(format!("tern-config-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tern.toml");
    std::fs::write(
        &file,
        with_frontend_lines("tls = { certs = [\"certs/a.pem\"] }"),
    )
    .unwrap();
    let config = load(&file);
    std::fs::remove_dir_all(&dir).unwrap();
    let tls = config.unwrap().frontends[0].binds[0].tls.clone().unwrap();
    assert_eq!(
        tls.certs
            .iter()
            .map(|c| c.source.clone())
            .collect::<Vec<_>>(),
        vec![CertSource::Combined(dir.join("certs/a.pem"))]
    );
}

#[test]
fn load_of_a_missing_file_is_one_error_without_line() {
    let path = Path::new("/nonexistent/tern-config-test/tern.toml");
    let errors = load(path).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors.0[0].line, None);
    assert!(errors
        .to_string()
        .starts_with("/nonexistent/tern-config-test/tern.toml: cannot read"));
}

#[test]
fn relative_config_file_gives_absolute_cert_paths() {
    let text = with_frontend_lines("tls = { certs = [\"a.pem\"] }");
    let config = parse(&text, Path::new("conf/tern.toml")).unwrap();
    let cwd = std::env::current_dir().unwrap();
    let tls = config.frontends[0].binds[0].tls.clone().unwrap();
    assert_eq!(
        tls.certs
            .iter()
            .map(|c| c.source.clone())
            .collect::<Vec<_>>(),
        vec![CertSource::Combined(cwd.join("conf/a.pem"))]
    );
    let config = parse(&text, Path::new("tern.toml")).unwrap();
    let tls = config.frontends[0].binds[0].tls.clone().unwrap();
    assert_eq!(tls.certs[0].source, CertSource::Combined(cwd.join("a.pem")));
}

#[test]
fn empty_file_reports_missing_sections() {
    let errors = parse_err("");
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "at least one [[frontend]] is required",
            "at least one [[backend]] is required"
        ]
    );
    assert!(errors.iter().all(|e| e.line == Some(1)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = parse(&text, Path::new(FILE));
    }

    #[test]
    fn parse_never_panics_on_mutated_configs(cut in 0usize..400, insert in "[\\[\\]{}=\",.a-z0-9 \n]{0,8}") {
        let mut text = MINIMAL.to_owned();
        let at = cut.min(text.len());
        text.insert_str(at, &insert);
        let _ = parse(&text, Path::new(FILE));
    }
}

#[test]
fn deeply_nested_input_is_an_error_not_a_crash() {
    let text = format!("a = {}1{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(parse_err(&text).len(), 1);
    let text = format!("a = {}", "{ b = ".repeat(50_000));
    assert_eq!(parse_err(&text).len(), 1);
}
