//! The persistence cookie of each mode, read from real parsed requests of real configurations.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use tern_config::Config;
use tern_h1::{parse_request, Limits};

use super::*;

/// A backend with servers `s1` (cookie value `a`) and `s2` (its name) and `cookie` options.
fn config(cookie: &str) -> Config {
    let text = format!(
        "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\n\
         [[backend]]\nname = \"b\"\ncookie = {{ name = \"SRV\", values = {{ s1 = \"a\" }}, {cookie} }}\n\
         servers = [{{ name = \"s1\", address = \"127.0.0.1:9001\" }}, \
         {{ name = \"s2\", address = \"127.0.0.1:9002\" }}]\n"
    );
    tern_config::parse(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The server the request's `cookie` names, for a backend with `options`.
fn chosen(options: &str, cookie: &str) -> Option<ServerId> {
    let cfg = config(options);
    let c = cfg.backends[0].cookie.as_ref().unwrap();
    let raw = format!("GET / HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\n\r\n");
    let mut head = RequestHead::new();
    parse_request(raw.as_bytes(), &Limits::default(), &mut head).unwrap();
    cookie_server(c, &head, raw.as_bytes())
}

#[test]
fn each_mode_reads_the_server_from_its_own_value() {
    for mode in ["insert", "rewrite"] {
        let options = format!("mode = \"{mode}\"");
        assert_eq!(chosen(&options, "SRV=a"), Some(0), "{mode}");
        assert_eq!(chosen(&options, "x=1; SRV=s2"), Some(1), "{mode}");
        assert_eq!(
            chosen(&options, "SRV=a~x"),
            None,
            "{mode}: no prefix in this mode"
        );
        assert_eq!(
            chosen(&options, "SRV=s1"),
            None,
            "{mode}: s1's value is `a`"
        );
    }
    let prefix = "mode = \"prefix\"";
    assert_eq!(chosen(prefix, "SRV=a~sess1"), Some(0));
    assert_eq!(chosen(prefix, "SRV=\"s2~x~y\""), Some(1));
    assert_eq!(chosen(prefix, "SRV=~sess1"), None, "an empty server part");
    assert_eq!(chosen(prefix, "SRV=zz~sess1"), None);
    assert_eq!(
        chosen(prefix, "SRV=a"),
        Some(0),
        "no `~`: the whole value, as HAProxy"
    );
    assert_eq!(chosen(prefix, "OTHER=a~1"), None);
}

/// The reply for a response of `server` to a GET whose cookie named `cookie_server`.
fn reply(options: &str, server: ServerId, cookie_server: Option<ServerId>) -> Reply {
    let cfg = config(options);
    let persisted = Persisted {
        cookie: cookie_server,
        server: cookie_server,
    };
    let mut out = Reply::default();
    response_fields(&cfg.backends[0], server, &persisted, Method::Get, &mut out);
    out
}

#[test]
fn insert_mode_adds_a_cookie_only_when_the_client_needs_one() {
    let r = reply("nocache = true", 0, None);
    assert_eq!(
        String::from_utf8(r.fields.clone()).unwrap(),
        "set-cookie: SRV=a; path=/\r\ncache-control: private\r\n"
    );
    assert_eq!(r.cookie_edit(), None);
    assert!(reply("", 0, Some(0)).fields.is_empty());
    assert!(!reply("", 1, Some(0)).fields.is_empty(), "a new server");
}

#[test]
fn rewrite_and_prefix_change_the_servers_cookie_and_add_nothing() {
    let r = reply("mode = \"rewrite\"", 1, Some(1));
    assert!(r.fields.is_empty());
    assert_eq!(
        r.cookie_edit(),
        Some(CookieEdit::Rewrite {
            name: b"SRV",
            value: b"s2"
        })
    );
    let r = reply("mode = \"prefix\"", 0, Some(0));
    assert!(r.fields.is_empty());
    assert_eq!(
        r.cookie_edit(),
        Some(CookieEdit::Prefix {
            name: b"SRV",
            value: b"a"
        })
    );
}

#[test]
fn prefix_with_indirect_drops_the_servers_update_on_a_direct_request() {
    let options = "mode = \"prefix\", indirect = true";
    assert_eq!(
        reply(options, 0, Some(0)).cookie_edit(),
        Some(CookieEdit::Drop(b"SRV"))
    );
    assert!(matches!(
        reply(options, 0, None).cookie_edit(),
        Some(CookieEdit::Prefix { .. })
    ));
    assert!(matches!(
        reply(options, 1, Some(0)).cookie_edit(),
        Some(CookieEdit::Prefix { .. })
    ));
}

#[test]
fn request_edits_by_mode() {
    let edit = |options: &str| request_edit(&config(options).backends[0]).map(|e| format!("{e:?}"));
    assert_eq!(edit(""), None);
    assert!(edit("indirect = true").unwrap().starts_with("Strip"));
    assert_eq!(
        edit("mode = \"rewrite\""),
        None,
        "the server reads its own cookie"
    );
    assert!(edit("mode = \"prefix\"").unwrap().starts_with("Unprefix"));
    assert!(edit("mode = \"prefix\", indirect = true")
        .unwrap()
        .starts_with("Unprefix"));
}
