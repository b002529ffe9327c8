//! Sections: the seed papers' configurations, listen, defaults inheritance.

use super::*;

/// The dpbench-based `test.cfg` of the 2-million-requests article (seed 001).
const SEED_001: &str = "defaults
  mode http
  timeout client 60s
  timeout server 60s
  timeout connect 1s
listen px
  bind :8000
  balance random
  server s1 172.31.36.194:8000
";

#[test]
fn seed_001_listen_becomes_a_frontend_and_a_backend() {
    let c = convert(SEED_001);
    println!("{}", c.toml);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(
        settings(&c),
        [
            "[[frontend]]",
            "name = \"px\"",
            "bind = [",
            "\":8000\",",
            "]",
            "default_backend = \"px\"",
            "x_forwarded_for = false",
            "x_forwarded_proto = false",
            "timeouts.client = \"1m\"",
            "timeouts.http_request = \"1m\"",
            "timeouts.keep_alive = \"1m\"",
            "timeouts.handshake = \"1m\"",
            "[[backend]]",
            "name = \"px\"",
            "balance = \"random\"",
            "redispatch = false",
            "timeouts.connect = \"1s\"",
            "timeouts.server = \"1m\"",
            "servers = [",
            "{ name = \"s1\", address = \"172.31.36.194:8000\" },",
            "]",
        ]
    );
    validate(&c);
}

/// The `haproxy.conf` excerpt of the Xeon TLS article (seed 000), with the section lines the
/// excerpt leaves out (`global`, `defaults`, the backend).
const SEED_000: &str = "global
       pidfile /var/run/haproxy.pid
       user haproxy
       group haproxy
       crt-base /etc/haproxy/crt
       # Adjust to match the physical number of threads
       # including threads available via Hyper-Threading
       nbproc 56
       tune.ssl.default-dh-param 2048
defaults
       mode http
       timeout connect 10000ms
       timeout client 30000ms
       timeout server 30000ms

frontend http-in
       # Uncomment one or the other to choose your certificate type
       #bind :443 ssl crt rsa/combined-rsa.crt
       bind :443 ssl crt ecc/combined-ecc.crt
       monitor-uri /test
       default_backend servers
backend servers
       server s1 10.0.0.1:80
";

#[test]
fn seed_000_tls_frontend_with_nbproc_and_crt_base() {
    let c = convert(SEED_000);
    assert_eq!(
        warned(&c.warnings),
        [
            "2: pidfile",
            "3: user",
            "4: group",
            "8: nbproc",
            "9: tune.ssl.default-dh-param"
        ]
    );
    assert_has(&c, "workers = 56");
    assert_has(
        &c,
        "{ address = \":443\", tls = { certs = [\"/etc/haproxy/crt/ecc/combined-ecc.crt\"], alpn = [], resumption = { cache_size = 20000 } } },",
    );
    assert_has(&c, "monitor_uri = \"/test\"");
    assert_has(&c, "timeouts.connect = \"10s\"");
    assert_has(&c, "timeouts.client = \"30s\"");
    // The approximation is noted on its line, the keywords without effect in the header.
    assert!(
        c.toml
            .contains("workers = 56  # approximated: nbproc: tern runs 56 worker threads"),
        "{}",
        c.toml
    );
    assert!(
        c.toml.contains("#   line 3: 'user' (no effect): "),
        "{}",
        c.toml
    );
}

#[test]
fn proxies_start_from_the_last_defaults_or_the_named_one() {
    let c = convert(
        "defaults base\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n  retries 1\n\
         defaults slow from base\n  timeout server 2m\n\
         backend a\n  server s 10.0.0.1:80\n\
         backend b from base\n  server s 10.0.0.1:80\n\
         defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n\
         frontend f\n  bind :80\n  default_backend a\n",
    );
    let lines = settings(&c);
    let backend = |name: &str| -> Vec<String> {
        let start = lines
            .iter()
            .position(|l| l == &format!("name = \"{name}\""))
            .unwrap();
        lines[start..]
            .iter()
            .take_while(|l| !l.starts_with("[["))
            .cloned()
            .collect()
    };
    // `a` follows `slow` (the last defaults before it), which starts from `base`.
    assert!(backend("a").contains(&"timeouts.server = \"2m\"".to_owned()));
    assert!(backend("a").contains(&"retries = 1".to_owned()));
    assert!(backend("b").contains(&"timeouts.server = \"5s\"".to_owned()));
    // An unnamed defaults section starts from scratch.
    assert!(backend("f").contains(&"timeouts.client = \"1s\"".to_owned()));
    validate(&c);
}

#[test]
fn a_listen_with_only_stats_becomes_the_control_http_listener() {
    let c = convert(&format!(
        "global\n  stats socket /run/haproxy/admin.sock mode 660 level admin expose-fd listeners\n{HEAD}\
         listen stats\n  bind 127.0.0.1:8404\n  stats enable\n  stats uri /stats\n  stats refresh 10s\n\
         listen web\n  bind :80\n  server s1 10.0.0.1:80\n"
    ));
    assert_eq!(warned(&c.warnings), ["2: expose-fd"]);
    let lines = settings(&c);
    let control = lines.iter().position(|l| l == "[control]").unwrap();
    assert_eq!(
        lines[control..],
        [
            "[control]",
            "socket = \"/run/haproxy/admin.sock\"",
            "socket_mode = \"0660\"",
            "http = \"127.0.0.1:8404\"",
            "stats_refresh = \"10s\"",
        ]
    );
    assert_eq!(lines.iter().filter(|l| *l == "[[frontend]]").count(), 1);
    validate(&c);
}

#[test]
fn the_old_listen_address_form_is_a_bind() {
    let c = convert(&format!(
        "{HEAD}listen web 127.0.0.1:8080\n  server s1 10.0.0.1:80\n"
    ));
    assert_has(&c, "\"127.0.0.1:8080\",");
    validate(&c);
}

#[test]
fn a_listen_with_rules_routes_to_other_backends_and_to_itself() {
    let c = convert(&format!(
        "{HEAD}listen web\n  bind :80\n  acl api path_beg /api/\n  use_backend api if api\n  server s1 10.0.0.1:80\n\
         backend api\n  server a1 10.0.0.2:80\n"
    ));
    assert_has(&c, "default_backend = \"web\"");
    assert_has(&c, "acl.api = \"path_beg /api/\"");
    assert_has(&c, "{ backend = \"api\", if = \"api\" },");
}

#[test]
fn frontends_and_backends_keep_file_order() {
    let c = convert(&format!(
        "{HEAD}backend b1\n  server s 10.0.0.1:80\nfrontend f\n  bind :80\n  default_backend b2\nbackend b2\n  server s 10.0.0.1:80\n"
    ));
    let names: Vec<String> = settings(&c)
        .into_iter()
        .filter(|l| l.starts_with("name = "))
        .collect();
    assert_eq!(names, ["name = \"b1\"", "name = \"f\"", "name = \"b2\""]);
    validate(&c);
}
