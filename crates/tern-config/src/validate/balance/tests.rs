#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::{parse_algorithm, Algorithm};
use crate::model::{Balance, BalanceHashType, BalanceKey};
use crate::test_support::{assert_error, backend_error, parse_backend, parse_ok, MINIMAL};

#[test]
fn parses_every_algorithm_name() {
    let cases = [
        ("roundrobin", Algorithm::Plain(Balance::RoundRobin)),
        ("static-rr", Algorithm::Plain(Balance::StaticRoundRobin)),
        ("leastconn", Algorithm::Plain(Balance::LeastConn)),
        ("first", Algorithm::Plain(Balance::First)),
        ("source", Algorithm::Hash(BalanceKey::Source)),
        ("uri", Algorithm::Hash(BalanceKey::Uri { whole: false })),
        (
            "uri whole",
            Algorithm::Hash(BalanceKey::Uri { whole: true }),
        ),
        (
            "hdr(Host)",
            Algorithm::Hash(BalanceKey::Header("host".into())),
        ),
        (
            "url_param(user)",
            Algorithm::Hash(BalanceKey::UrlParam("user".into())),
        ),
        ("random", Algorithm::Random(2)),
        ("random(3)", Algorithm::Random(3)),
        ("ewma", Algorithm::Ewma),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_algorithm(text).unwrap(), expected, "{text}");
    }
}

#[test]
fn refuses_algorithms_without_their_key_or_with_bad_arguments() {
    for (text, needle) in [
        ("hdr()", "needs a header name"),
        ("hdr(a b)", "not a valid header name"),
        ("url_param()", "needs a parameter name"),
        ("url_param(a=b)", "not a valid parameter name"),
        ("random(0)", "from 1 to 64"),
        ("random(65)", "from 1 to 64"),
        ("random(x)", "from 1 to 64"),
        ("uriwhole", "unknown algorithm"),
        ("least_conn", "unknown algorithm"),
        ("", "unknown algorithm"),
    ] {
        let err = parse_algorithm(text).unwrap_err();
        assert!(err.contains(needle), "{text}: {err}");
    }
}

#[test]
fn hashing_takes_its_companion_keys() {
    let be = parse_backend(
        "balance = \"hdr(X-User)\"\nhash_type = \"consistent\"\nhash_balance_factor = 150",
    );
    assert_eq!(
        be.balance,
        Balance::Hash {
            key: BalanceKey::Header("x-user".into()),
            hash_type: BalanceHashType::Consistent {
                balance_factor: 150
            },
        }
    );
    let be = parse_backend("balance = \"source\"");
    assert_eq!(
        be.balance,
        Balance::Hash {
            key: BalanceKey::Source,
            hash_type: BalanceHashType::MapBased
        }
    );
    let be = parse_backend("balance = \"ewma\"\newma_decay = \"2s\"");
    assert_eq!(
        be.balance,
        Balance::Ewma {
            decay: Duration::from_secs(2)
        }
    );
}

#[test]
fn companion_keys_that_would_be_ignored_are_errors() {
    for (lines, key, needle) in [
        (
            "balance = \"leastconn\"\nhash_type = \"consistent\"",
            "hash_type",
            "hashing",
        ),
        (
            "hash_balance_factor = 150",
            "hash_balance_factor",
            "hashing",
        ),
        (
            "balance = \"uri\"\nhash_balance_factor = 150",
            "hash_balance_factor",
            "consistent",
        ),
        (
            "balance = \"uri\"\nhash_type = \"ring\"",
            "hash_type",
            "unknown hash type",
        ),
        (
            "balance = \"uri\"\nhash_type = \"consistent\"\nhash_balance_factor = 100",
            "hash_balance_factor",
            "out of range",
        ),
        (
            "balance = \"random\"\newma_decay = \"1s\"",
            "ewma_decay",
            "ewma",
        ),
        (
            "balance = \"ewma\"\newma_decay = \"0s\"",
            "ewma_decay",
            "is zero",
        ),
        ("balance = \"hdr()\"", "balance", "needs a header name"),
    ] {
        let err = backend_error(lines);
        assert!(
            err.contains(&format!("backend[0].{key}:")),
            "{lines}: {err}"
        );
        assert!(err.contains(needle), "{lines}: {err}");
    }
}

#[test]
fn backups_are_read_and_a_backend_needs_one_active_server() {
    let servers = |list: &str| MINIMAL.replace(SERVERS_LINE, &format!("servers = [ {list} ]"));
    let config = parse_ok(&servers(
        "{ name = \"a\", address = \"127.0.0.1:1\" }, \
         { name = \"b\", address = \"127.0.0.1:2\", backup = true }",
    ));
    let backups: Vec<bool> = config.backends[0]
        .servers
        .iter()
        .map(|s| s.backup)
        .collect();
    assert_eq!(backups, [false, true]);
    assert_error(
        &servers("{ name = \"b\", address = \"127.0.0.1:2\", backup = true }"),
        8,
        "backend[0].servers",
        "every server is a backup",
    );
}

const SERVERS_LINE: &str = "servers = [ { name = \"s1\", address = \"127.0.0.1:8080\" } ]";
