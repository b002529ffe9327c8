//! `[[resolvers]]`, servers with `resolvers`, templates.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::model::Family;
use crate::test_support::*;

const RESOLVERS: &str =
    "\n[[resolvers]]\nname = \"dns\"\nnameservers = [\"127.0.0.1:5353\", \"::1\"]\n\
    resolve_retries = 2\ntimeouts = { resolve = \"200ms\", retry = \"100ms\" }\n\
    hold = { valid = \"5s\", nx = \"2s\", obsolete = \"0s\" }\naccepted_payload_size = 1232\n";

fn with_servers(servers: &str) -> String {
    format!("{}{RESOLVERS}", MINIMAL.replace(SERVERS_LINE, servers))
}

#[test]
fn a_resolvers_section_reads_every_key() {
    let config = parse_ok(&with_servers(SERVERS_LINE));
    let r = &config.resolvers[0];
    assert_eq!(r.name, "dns");
    assert_eq!(
        r.nameservers,
        [
            "127.0.0.1:5353".parse().unwrap(),
            "[::1]:53".parse().unwrap()
        ]
    );
    assert_eq!(r.resolve_retries, 2);
    assert_eq!(r.resolve_interval, Duration::from_millis(200));
    assert_eq!(r.retry, Duration::from_millis(100));
    assert_eq!(r.hold.valid, Duration::from_secs(5));
    assert_eq!(r.hold.nx, Duration::from_secs(2));
    assert_eq!(r.hold.timeout, Duration::from_secs(30));
    assert_eq!(r.hold.obsolete, Duration::ZERO);
    assert_eq!(r.accepted_payload_size, 1232);
}

#[test]
fn a_template_becomes_its_slots() {
    let config = parse_ok(&with_servers(
        "servers = [ { name = \"web\", count = \"3-5\", address = \"_http._tcp.App.internal.\", resolvers = \"dns\" } ]",
    ));
    let names: Vec<&str> = config.backends[0]
        .servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["web3", "web4", "web5"]);
    let r = config.backends[0].servers[1].resolve.as_ref().unwrap();
    assert_eq!(r.name, "_http._tcp.app.internal");
    assert!(r.srv && r.starts_unresolved && r.keep_last);
    assert_eq!((r.slot, r.first_slot), (Some(4), 3));
}

#[test]
fn a_named_server_starts_on_its_init_addr() {
    let config = parse_ok(&with_servers(
        "servers = [ { name = \"s1\", address = \"app.invalid:8080\", resolvers = \"dns\", resolve_prefer = \"ipv4\", init_addr = [\"last\", \"libc\", \"10.0.0.7\"] } ]",
    ));
    let s = &config.backends[0].servers[0];
    assert_eq!(s.address, "10.0.0.7:8080".parse().unwrap());
    let r = s.resolve.as_ref().unwrap();
    assert_eq!(r.prefer, Family::Ipv4);
    assert!(!r.starts_unresolved && !r.srv);
}

#[test]
fn an_unknown_resolvers_name_is_an_error_at_its_line() {
    assert_error(
        &with_servers("servers = [ { name = \"s1\", address = \"a.internal:80\", resolvers = \"nope\", init_addr = [\"none\"] } ]"),
        8,
        "backend[0].servers[0].resolvers",
        "no [[resolvers]] named `nope`",
    );
}

#[test]
fn a_bad_nameserver_is_an_error_at_its_line() {
    let text = with_servers(SERVERS_LINE).replace("\"::1\"", "\"dns.example:53\"");
    assert_error(
        &text,
        12,
        "resolvers[0].nameservers[1]",
        "bad nameserver address",
    );
}

#[test]
fn a_name_nobody_resolves_needs_init_addr_none() {
    assert_error(
        &with_servers(
            "servers = [ { name = \"s1\", address = \"app.invalid:80\", resolvers = \"dns\" } ]",
        ),
        8,
        "backend[0].servers[0].init_addr",
        "add \"none\"",
    );
}

#[test]
fn resolv_conf_lines_are_read() {
    let found =
        super::resolv_conf("# x\nnameserver 10.0.0.2\nsearch a\nnameserver ::1\nnameserver bad\n");
    assert_eq!(
        found,
        ["10.0.0.2:53".parse().unwrap(), "[::1]:53".parse().unwrap()]
    );
}

#[test]
fn an_ip_address_is_not_resolved_and_a_template_needs_a_name() {
    let config = parse_ok(&with_servers(
        "servers = [ { name = \"s1\", address = \"10.0.0.9:80\", resolvers = \"dns\" } ]",
    ));
    let s = &config.backends[0].servers[0];
    assert_eq!(s.address, "10.0.0.9:80".parse().unwrap());
    assert!(s.resolve.is_none());
    assert_error(
        &with_servers("servers = [ { name = \"web\", count = 2, address = \"10.0.0.9:80\", resolvers = \"dns\" } ]"),
        8,
        "backend[0].servers[0].address",
        "is not a DNS name",
    );
}
