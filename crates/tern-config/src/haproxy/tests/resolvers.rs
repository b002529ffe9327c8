//! `resolvers` sections, `server-template` and the DNS options of `server`.

use super::*;

const RESOLVERS: &str =
    "resolvers dns\n  nameserver ns1 127.0.0.1:5353\n  nameserver ns2 udp@[::1]:53\n  \
    resolve_retries 2\n  timeout resolve 200ms\n  timeout retry 100ms\n  hold valid 5s\n  \
    hold nx 2s\n  hold obsolete 1s\n  accepted_payload_size 1232\n";

fn with_backend(lines: &str) -> String {
    format!("{HEAD}frontend f\n  bind :80\n  default_backend b\nbackend b\n{lines}{RESOLVERS}")
}

#[test]
fn resolvers_and_templates_convert() {
    let text = with_backend(
        "  server-template web 10 _http._tcp.app.internal resolvers dns check\n  \
         server s1 app.internal:8080 resolvers dns resolve-prefer ipv4 init-addr last,libc,none\n",
    );
    let c = convert(&text);
    assert_has(&c, "[[resolvers]]");
    assert_has(&c, r#""127.0.0.1:5353","#);
    assert_has(&c, r#""[::1]:53","#);
    assert_has(&c, r#"timeouts.resolve = "200ms""#);
    assert_has(&c, r#"hold.obsolete = "1s""#);
    assert_has(&c, "accepted_payload_size = 1232");
    let toml = &c.toml;
    assert!(
        toml.contains(
            r#"{ name = "web", address = "_http._tcp.app.internal", count = 10, resolvers = "dns""#
        ),
        "{toml}"
    );
    assert!(
        toml.contains(
            r#"resolvers = "dns", resolve_prefer = "ipv4", init_addr = ["last", "libc", "none"]"#
        ),
        "{toml}"
    );
    let config = validate(&c);
    let servers = &config.backends[0].servers;
    assert_eq!(servers.len(), 11);
    assert_eq!(servers[9].name, "web10");
    assert_eq!(config.resolvers[0].resolve_retries, 2);
}

#[test]
fn a_range_template_of_a_records_converts() {
    let text =
        with_backend("  server-template app 1-3 app.internal:8080 resolvers dns init-addr none\n");
    let config = validate(&convert(&text));
    let names: Vec<&str> = config.backends[0]
        .servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["app1", "app2", "app3"]);
    assert_eq!(
        config.backends[0].servers[0].resolve.as_ref().unwrap().port,
        8080
    );
}

#[test]
fn an_unknown_resolvers_name_is_reported_at_its_cfg_line() {
    let text = with_backend("  server s1 app.internal:8080 resolvers nope init-addr none\n");
    let errors = check_errors(&text);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("haproxy.cfg:10:") && e.contains("no [[resolvers]] named `nope`")),
        "{errors:?}"
    );
}

#[test]
fn a_bad_nameserver_is_reported_at_its_cfg_line() {
    let text = with_backend("  server s1 app.internal:8080 resolvers dns init-addr none\n")
        .replace("udp@[::1]:53", "dns.example:53");
    let errors = check_errors(&text);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("haproxy.cfg:13:") && e.contains("bad nameserver address")),
        "{errors:?}"
    );
}

#[test]
fn unknown_resolvers_keywords_and_templates_without_resolvers_are_errors() {
    let text = with_backend("  server-template web 3 app.internal:80\n").replace(
        "  resolve_retries 2\n",
        "  resolve_retries 2\n  frobnicate 1\n",
    );
    let errors = errors(&text);
    assert!(
        errors.iter().any(|e| e.contains("needs 'resolvers NAME'")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("unknown keyword 'frobnicate'")),
        "{errors:?}"
    );
}
