//! `[[peers]]` sections and the `peers` key of the tables that name them.

#![allow(clippy::unwrap_used)]

use crate::test_support::*;

const PEERS: &str = "\n[[peers]]\nname = \"fleet\"\nlocal_peer = \"a\"\n\
                     peer = [ { name = \"a\", address = \"10.0.0.1:10000\" },\n  \
                     { name = \"b\", address = \"10.0.0.2:10000\" } ]\n";

#[test]
fn a_section_takes_its_own_address_and_tables_name_it() {
    let text = format!(
        "{}{PEERS}\n[[table]]\nname = \"t\"\ntype = \"ip\"\nsize = 10\nexpire = \"1m\"\n\
         store = [\"gpc0\"]\npeers = \"fleet\"\n",
        with_backend_lines("stick = { on = \"source\", peers = \"fleet\" }")
    );
    let config = parse_ok(&text);
    let p = &config.peers[0];
    assert_eq!((p.name.as_str(), p.local.as_str()), ("fleet", "a"));
    assert_eq!(p.bind.to_string(), "10.0.0.1:10000");
    assert_eq!(p.remotes.len(), 1);
    assert_eq!(p.remotes[0].name, "b");
    assert_eq!(config.tables[0].peers, Some(0));
    assert_eq!(config.backends[0].stick.unwrap().peers, Some(0));
}

#[test]
fn bind_may_replace_the_local_address() {
    let text = format!(
        "{}\n[[peers]]\nname = \"fleet\"\nlocal_peer = \"a\"\nbind = \"0.0.0.0:10000\"\n\
         peer = [ {{ name = \"a\" }}, {{ name = \"b\", address = \"10.0.0.2:10000\" }} ]\n",
        with_frontend_lines("")
    );
    assert_eq!(parse_ok(&text).peers[0].bind.to_string(), "0.0.0.0:10000");
}

#[test]
fn mistakes_are_named_with_their_key() {
    let unknown = format!(
        "{}{PEERS}",
        with_backend_lines("stick = { on = \"source\", peers = \"nope\" }")
    );
    let errors = parse_err(&unknown);
    assert!(
        errors.iter().any(|e| e
            .to_string()
            .contains("stick.peers: unknown peers section `nope`: peers sections are fleet")),
        "{errors:?}"
    );
    let not_listed = format!(
        "{}{}",
        with_frontend_lines(""),
        PEERS.replace("local_peer = \"a\"", "local_peer = \"z\"")
    );
    let errors = parse_err(&not_listed);
    assert!(
        errors.iter().any(|e| e
            .to_string()
            .contains("local_peer `z` is not a peer of this section: peers are a, b")),
        "{errors:?}"
    );
    let bad_address = format!(
        "{}{}",
        with_frontend_lines(""),
        PEERS.replace("10.0.0.2:10000", "host:10000")
    );
    let errors = parse_err(&bad_address);
    assert!(
        errors.iter().any(|e| e
            .to_string()
            .contains("peer[1].address: `host:10000` is not an IP:port")),
        "{errors:?}"
    );
}
