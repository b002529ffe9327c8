//! `cookie` and `stick`.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::cookie_value_problem;
use crate::model::{CookieMode, CookiePersistence, Stickiness};
use crate::test_support::{
    assert_error, backend_error, backend_with_servers, parse_backend, parse_ok,
};

const TWO_SERVERS: [&str; 2] = [
    "{ name = \"web1\", address = \"127.0.0.1:8080\" }",
    "{ name = \"web2\", address = \"127.0.0.1:8081\" }",
];

fn cookie(lines: &str) -> CookiePersistence {
    let text = backend_with_servers(lines, &TWO_SERVERS);
    parse_ok(&text).backends.remove(0).cookie.unwrap()
}

#[test]
fn no_persistence_by_default() {
    let backend = parse_backend("");
    assert_eq!(backend.cookie, None);
    assert_eq!(backend.stick, None);
}

#[test]
fn a_cookie_with_only_a_name_uses_server_names_and_no_options() {
    assert_eq!(
        cookie("cookie = { name = \"SRV\" }"),
        CookiePersistence {
            name: "SRV".into(),
            mode: CookieMode::Insert,
            indirect: false,
            nocache: false,
            postonly: false,
            httponly: false,
            secure: false,
            domain: None,
            max_age: None,
            values: vec!["web1".into(), "web2".into()],
        }
    );
}

#[test]
fn every_cookie_key_is_read() {
    let got = cookie(
        "cookie = { name = \"SRV\", indirect = true, nocache = true, postonly = true, \
         httponly = true,\n  secure = true, domain = \".example.com\", max_age = \"1h\", \
         values = { web2 = \"b\" } }",
    );
    assert_eq!(
        got,
        CookiePersistence {
            name: "SRV".into(),
            mode: CookieMode::Insert,
            indirect: true,
            nocache: true,
            postonly: true,
            httponly: true,
            secure: true,
            domain: Some(".example.com".into()),
            max_age: Some(Duration::from_secs(3600)),
            values: vec!["web1".into(), "b".into()],
        }
    );
}

#[test]
fn an_unknown_server_in_values_is_an_error_at_its_entry() {
    let text = backend_with_servers(
        "cookie = { name = \"SRV\", values = {\n  web1 = \"a\",\n  web9 = \"b\" } }",
        &TWO_SERVERS,
    );
    assert_error(
        &text,
        10,
        "backend[0].cookie.values.web9",
        "no server named `web9` in this backend (servers: web1, web2)",
    );
}

#[test]
fn cookie_rules() {
    for (cookie, key, needle) in [
        ("domain = \"x\"", "cookie.name", "missing key `name`"),
        ("name = \"S RV\"", "cookie.name", "not a valid cookie name"),
        ("name = \"\"", "cookie.name", "not a valid cookie name"),
        ("name = \"a=b\"", "cookie.name", "not a valid cookie name"),
        (
            "name = \"S\", domain = \"a;b\"",
            "cookie.domain",
            "not a valid cookie domain",
        ),
        (
            "name = \"S\", domain = \"a b\"",
            "cookie.domain",
            "not a valid cookie domain",
        ),
        (
            "name = \"S\", domain = \"\"",
            "cookie.domain",
            "not a valid cookie domain",
        ),
        ("name = \"S\", max_age = \"0s\"", "cookie.max_age", "zero"),
        (
            "name = \"S\", values = { s1 = \"a b\" }",
            "cookie.values.s1",
            "invalid character ' '",
        ),
        (
            "name = \"S\", values = { s1 = \"\" }",
            "cookie.values.s1",
            "must not be empty",
        ),
    ] {
        let err = backend_error(&format!("cookie = {{ {cookie} }}"));
        assert!(
            err.contains(&format!(":8: backend[0].{key}: ")),
            "{cookie}: {err}"
        );
        assert!(err.contains(needle), "{cookie}: {err}");
    }
}

#[test]
fn cookie_values_must_be_unique() {
    // A value equal to another server's name, which that server uses by default.
    let text = backend_with_servers(
        "cookie = { name = \"S\", values = { web1 = \"web2\" } }",
        &TWO_SERVERS,
    );
    assert_error(
        &text,
        8,
        "backend[0].cookie.values.web1",
        "cookie value `web2` is also the value of server `web2`",
    );
    let text = backend_with_servers(
        "cookie = { name = \"S\", values = {\n  web1 = \"x\",\n  web2 = \"x\" } }",
        &TWO_SERVERS,
    );
    assert_error(
        &text,
        10,
        "backend[0].cookie.values.web2",
        "cookie value `x` is also the value of server `web1`",
    );
}

#[test]
fn cookie_values_are_cookie_octets() {
    assert_eq!(
        cookie_value_problem("a-Z_0.9!#$%&'()*+/:<=>?@[]^`{|}~"),
        None
    );
    for bad in ["a b", "a\"b", "a,b", "a;b", "a\\b", "a\tb", "é"] {
        assert!(cookie_value_problem(bad).is_some(), "{bad}");
    }
    // Servers without an entry use their name: the name rule keeps it within cookie-octets.
    for c in (0u8..=127)
        .map(char::from)
        .filter(|&c| super::super::is_name_char(c))
    {
        assert_eq!(cookie_value_problem(&c.to_string()), None, "{c:?}");
    }
}

#[test]
fn stick_reads_its_keys_and_defaults() {
    assert_eq!(
        parse_backend("stick = { on = \"source\" }").stick,
        Some(Stickiness {
            size: 100_000,
            expire: Duration::from_secs(30 * 60),
            peers: None,
        })
    );
    assert_eq!(
        parse_backend("stick = { on = \"source\", size = 10000000, expire = \"1h\" }").stick,
        Some(Stickiness {
            size: 10_000_000,
            expire: Duration::from_secs(3600),
            peers: None,
        })
    );
    assert_eq!(
        parse_backend("stick = { on = \"source\", size = 1 }")
            .stick
            .unwrap()
            .size,
        1
    );
}

#[test]
fn stick_rules() {
    for (stick, key, needle) in [
        ("size = 10", "stick.on", "missing key `on`"),
        (
            "on = \"cookie\"",
            "stick.on",
            "unknown value `cookie`; supported: `source`",
        ),
        (
            "on = \"source\", size = 0",
            "stick.size",
            "between 1 and 10000000",
        ),
        (
            "on = \"source\", size = 10000001",
            "stick.size",
            "between 1 and 10000000",
        ),
        (
            "on = \"source\", expire = \"5\"",
            "stick.expire",
            "needs a unit",
        ),
        ("on = \"source\", expire = \"0s\"", "stick.expire", "zero"),
    ] {
        let err = backend_error(&format!("stick = {{ {stick} }}"));
        assert!(
            err.contains(&format!(":8: backend[0].{key}: ")),
            "{stick}: {err}"
        );
        assert!(err.contains(needle), "{stick}: {err}");
    }
    assert_error(
        &backend_with_servers("stick = { on = \"source\", table = 1 }", &[]),
        8,
        "backend[0].stick.table",
        "`expire`",
    );
    assert_error(
        &backend_with_servers("cookie = { name = \"S\", insert = true }", &[]),
        8,
        "backend[0].cookie.insert",
        "`indirect`",
    );
}

#[test]
fn rewrite_and_prefix_modes_are_read() {
    let got = cookie("cookie = { name = \"SRV\", mode = \"rewrite\", values = { web1 = \"a\" } }");
    assert_eq!(got.mode, CookieMode::Rewrite);
    assert_eq!(got.values, vec!["a".to_owned(), "web2".to_owned()]);
    let got = cookie("cookie = { name = \"JSESSIONID\", mode = \"prefix\", indirect = true }");
    assert_eq!(got.mode, CookieMode::Prefix);
    assert!(got.indirect, "HAProxy accepts indirect with prefix");
    let got = cookie("cookie = { name = \"SRV\", mode = \"insert\", nocache = true }");
    assert_eq!(got.mode, CookieMode::Insert);
}

#[test]
fn options_that_do_not_go_with_the_mode_are_errors() {
    for (cookie, key, needle) in [
        (
            "mode = \"passive\"",
            "cookie.mode",
            "unknown value `passive`",
        ),
        (
            "mode = \"rewrite\", indirect = true",
            "cookie.indirect",
            "does not go with mode = \"rewrite\"",
        ),
        (
            "mode = \"rewrite\", nocache = true",
            "cookie.nocache",
            "`nocache` acts on the cookie tern inserts",
        ),
        (
            "mode = \"prefix\", postonly = true",
            "cookie.postonly",
            "in mode = \"prefix\" the server sets",
        ),
        (
            "mode = \"prefix\", httponly = true",
            "cookie.httponly",
            "`httponly`",
        ),
        (
            "mode = \"rewrite\", secure = true",
            "cookie.secure",
            "`secure`",
        ),
        (
            "mode = \"prefix\", domain = \".a.b\"",
            "cookie.domain",
            "`domain`",
        ),
        (
            "mode = \"rewrite\", max_age = \"1h\"",
            "cookie.max_age",
            "`max_age`",
        ),
        (
            "mode = \"prefix\", values = { s1 = \"a~b\" }",
            "cookie.values.s1",
            "holds `~`",
        ),
    ] {
        let err = backend_error(&format!("cookie = {{ name = \"S\", {cookie} }}"));
        assert!(
            err.contains(&format!(":8: backend[0].{key}: ")),
            "{cookie}: {err}"
        );
        assert!(err.contains(needle), "{cookie}: {err}");
    }
}
