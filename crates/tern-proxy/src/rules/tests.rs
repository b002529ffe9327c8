//! Rules evaluated on real parsed heads, from real configurations.

#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use tern_h1::{
    parse_request, parse_response, write_request_edited, Edits, Forwarding, Limits, Method,
    RequestHead, ResponseHead,
};

use super::*;
use crate::rules::facts::{ConnFacts, RequestFacts, ResponseFacts};

pub(super) const CONN: ConnFacts = ConnFacts {
    peer: IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)),
    local_port: 8443,
    tls: true,
};

/// A configuration with frontend lines `fe`, backends `api` and `web` (with `be` lines on
/// `api`).
pub(super) fn config(fe: &str, be: &str) -> Config {
    let text = format!(
        "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\n{fe}\n\n\
         [[backend]]\nname = \"web\"\nservers = [{{ name = \"w\", address = \"127.0.0.1:9001\" }}]\n\n\
         [[backend]]\nname = \"api\"\n{be}\nservers = [{{ name = \"a\", address = \"127.0.0.1:9002\" }}]\n"
    );
    tern_config::parse(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

pub(super) fn head(raw: &str) -> RequestHead {
    let mut head = RequestHead::new();
    parse_request(raw.as_bytes(), &Limits::default(), &mut head).unwrap();
    head
}

/// The backend `raw` goes to, by name.
fn routed<'c>(cfg: &'c Config, raw: &str, sni: Option<&str>) -> Option<&'c str> {
    let routing = Routing::build(cfg).unwrap();
    let head = head(raw);
    let facts = RequestFacts {
        head: &head,
        buf: raw.as_bytes(),
        conn: &CONN,
        sni,
        pp_tlvs: None,
        vars: &std::cell::RefCell::default(),
        auth: Default::default(),
    };
    routing[0]
        .use_backend(&cfg.frontends[0].use_backend, &facts)
        .map(|b| cfg.backends[b].name.as_str())
}

#[test]
fn routing_takes_the_first_rule_that_holds_else_the_default() {
    let cfg = config(
        "default_backend = \"web\"\n\
         acl = { api_host = \"hdr(host) -i api.test\" }\n\
         use_backend = [\n\
           { backend = \"api\", if = \"{ path_beg /api/ } || api_host\" },\n\
           { backend = \"web\", if = \"{ path_beg /api/v1/ }\" },\n\
           { backend = \"api\", unless = \"{ ssl_fc }\" },\n\
         ]",
        "",
    );
    let get = |path: &str, host: &str| format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    assert_eq!(routed(&cfg, &get("/api/v1/x", "a"), None), Some("api"));
    assert_eq!(routed(&cfg, &get("/", "API.test"), None), Some("api"));
    assert_eq!(routed(&cfg, &get("/", "www.test"), None), Some("web"));
    assert_eq!(Routing::build(&cfg).unwrap()[0].fixed(), None);
}

#[test]
fn routing_by_sni_and_without_a_default() {
    let cfg = config(
        "use_backend = [{ backend = \"api\", if = \"{ ssl_fc_sni api.test }\" }]",
        "",
    );
    let raw = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_eq!(routed(&cfg, raw, Some("api.test")), Some("api"));
    assert_eq!(routed(&cfg, raw, Some("www.test")), None);
    assert_eq!(routed(&cfg, raw, None), None);
    let plain = config("default_backend = \"api\"", "");
    assert_eq!(Routing::build(&plain).unwrap()[0].fixed(), Some(Some(1)));
}

/// Runs the frontend's request rules on `raw`; the verdict and the head sent to a server.
pub(super) fn requested(cfg: &Config, raw: &str) -> (String, String) {
    let head = head(raw);
    let facts = RequestFacts {
        head: &head,
        buf: raw.as_bytes(),
        conn: &CONN,
        sni: Some("api.test"),
        pp_tlvs: None,
        vars: &std::cell::RefCell::default(),
        auth: Default::default(),
    };
    let mut edits = HeaderEdits::new();
    let verdict = on_request(&cfg.frontends[0].http_request, &facts, &mut edits);
    let mut out = Vec::new();
    let e = Edits {
        headers: Some(&edits),
        ..Edits::default()
    };
    write_request_edited(&head, raw.as_bytes(), &Forwarding::none(), &e, &mut out);
    (format!("{verdict:?}"), String::from_utf8(out).unwrap())
}

#[test]
fn request_rules_edit_in_order_and_stop_at_an_answer() {
    let cfg = config(
        "default_backend = \"web\"\n\
         http_request = [\n\
           { action = \"deny\", status = 401, if = \"{ path_beg /admin } !{ src 10.0.0.0/8 }\" },\n\
           { action = \"add-header\", name = \"X-Via\", value = \"tern\" },\n\
           { action = \"set-header\", name = \"X-Client\", value = \"%[src]:%[dst_port] tls=%[ssl_fc] sni=%[ssl_fc_sni] %[method] %[path] %[hdr(x-id)]\" },\n\
           { action = \"del-header\", name = \"X-Debug\" },\n\
           { action = \"return\", status = 200, content_type = \"text/plain\", body = \"pong\", if = \"{ path /ping }\" },\n\
           { action = \"deny\", if = \"{ path_beg /admin }\" },\n\
         ]",
        "",
    );
    let (verdict, out) = requested(
        &cfg,
        "GET /a?q=1 HTTP/1.1\r\nHost: h\r\nX-Debug: 1\r\nX-Client: forged\r\nX-Id: a, b\r\n\r\n",
    );
    assert_eq!(verdict, "Pass");
    assert_eq!(
        out,
        "GET /a?q=1 HTTP/1.1\r\nHost: h\r\nX-Id: a, b\r\nX-Via: tern\r\n\
         X-Client: 10.1.2.3:8443 tls=1 sni=api.test GET /a b\r\n\r\n"
    );
    let (verdict, _) = requested(&cfg, "GET /ping HTTP/1.1\r\nHost: h\r\n\r\n");
    assert!(
        verdict.starts_with("Return(Return { status: 200"),
        "{verdict}"
    );
    // From 10.1.2.3 the first deny does not hold; the last one does.
    let (verdict, _) = requested(&cfg, "GET /admin/x HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(verdict, "Deny(403)");
}

#[test]
fn response_rules_read_the_response_and_run_backend_first() {
    let cfg = config(
        "default_backend = \"api\"\n\
         http_response = [{ action = \"set-header\", name = \"X-Order\", value = \"frontend\" }]",
        "http_response = [\n\
           { action = \"add-header\", name = \"X-Order\", value = \"backend\" },\n\
           { action = \"del-header\", name = \"Server\", if = \"{ hdr(x-hide) 1 }\" },\n\
           { action = \"add-header\", name = \"X-Server\", value = \"was %[hdr(server)]\" },\n\
         ]",
    );
    let raw = "HTTP/1.1 200 OK\r\nServer: s1\r\nX-Hide: 1\r\nContent-Length: 0\r\n\r\n";
    let mut head = ResponseHead::new();
    parse_response(raw.as_bytes(), &Limits::default(), &mut head, Method::Get).unwrap();
    let facts = ResponseFacts {
        head: &head,
        buf: raw.as_bytes(),
        conn: &CONN,
        sni: None,
        pp_tlvs: None,
        vars: &std::cell::RefCell::default(),
    };
    let mut edits = HeaderEdits::new();
    on_response(&cfg.backends[1].http_response, &facts, &mut edits).unwrap();
    on_response(&cfg.frontends[0].http_response, &facts, &mut edits).unwrap();
    assert!(edits.deletes(b"server"));
    // The frontend's set-header replaced the backend's addition.
    assert_eq!(
        String::from_utf8_lossy(edits.added()),
        "X-Server: was s1\r\nX-Order: frontend\r\n"
    );
}

#[test]
fn dst_port_is_looked_up_only_when_read() {
    assert!(!reads_dst_port(&config("default_backend = \"web\"", "")));
    assert!(reads_dst_port(&config(
        "default_backend = \"web\"\nuse_backend = [{ backend = \"api\", if = \"{ dst_port 8443 }\" }]",
        ""
    )));
    assert!(reads_dst_port(&config(
        "default_backend = \"web\"",
        "http_request = [{ action = \"set-header\", name = \"X-P\", value = \"%[dst_port]\" }]"
    )));
}

#[test]
fn every_deny_status_has_a_page() {
    for &status in tern_config::DENY_STATUSES {
        assert_eq!(tern_h1::local::Page::Denied(status).status(), status);
    }
    assert_eq!(tern_config::DENY_STATUSES, tern_h1::local::DENY_STATUSES);
}
