//! Content switching and header rules through the real binary: `use_backend` by path, Host and
//! SNI (one certificate with two names), `unless`, a frontend without `default_backend` (503);
//! `http_request` `deny` and `return` answered by tern on a kept connection, `set-header`,
//! `add-header` and `del-header` on what a `tern term` receives (`h=1` echoes the request
//! head) and on the responses it sends, but not on tern's own pages. The counters and the
//! access log follow the backend each request went to.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Configurations with two backends are written out here, not with `support::Config`.
#[allow(unused_imports)]
mod support;
use support::tls_client::{rustls_client, tls_connect, toml_path, write_named_cert};
use support::*;

use std::net::UdpSocket;
use std::time::Duration;

use rustls::version::{TLS12, TLS13};
use serde_json::Value;
use tern_tls::KeyKind;

/// A frontend `web` with lines `fe` (and binds `binds`), backend `api` (term `api`, lines
/// `api_lines`) and backend `site` (term `site`).
fn config(binds: &str, fe: &str, api: &Term, api_lines: &str, site: &Term) -> String {
    format!(
        "[global]\nworkers = 1\n\n\
         [[frontend]]\nname = \"web\"\nbind = [{binds}]\n{fe}\n\n\
         [[backend]]\nname = \"api\"\n{api_lines}\nservers = [{{ name = \"api\", address = \"{}\" }}]\n\n\
         [[backend]]\nname = \"site\"\nservers = [{{ name = \"site\", address = \"{}\" }}]\n",
        api.addr, site.addr
    )
}

/// A GET of `path` with Host `host`.
fn get_host(path: &str, host: &str) -> hyper::Request<Body> {
    hyper::Request::get(path)
        .header("host", host)
        .body(Body::default())
        .unwrap()
}

/// The term that answered, from `x-term-server`.
fn served_by(got: &Got) -> &str {
    got.header("x-term-server").unwrap_or("(tern)")
}

/// A syslog socket receiving the access log as JSON.
struct Syslog(UdpSocket);

impl Syslog {
    fn bind() -> Syslog {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Syslog(socket)
    }

    fn table(&self) -> String {
        format!(
            "\n[access_log]\ntarget = \"udp://{}\"\nformat = \"json\"\n",
            self.0.local_addr().unwrap()
        )
    }

    /// The next logged request.
    fn next(&self) -> Value {
        let mut buf = [0u8; 8192];
        let n = self.0.recv(&mut buf).expect("no access log line in time");
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        let (_, json) = text.split_once("]: ").expect(&text);
        serde_json::from_str(json).unwrap()
    }
}

#[tokio::test]
async fn use_backend_routes_by_path_and_host_and_counts_on_the_chosen_backend() {
    let (api, site) = (Term::start("api"), Term::start("site"));
    let fe = "default_backend = \"site\"\n\
              acl = { is_api = \"path_beg -i /api/ /v2/\", api_host = [\"hdr(host) -i api.test\", \"hdr_beg(host) -i api.\"] }\n\
              use_backend = [{ backend = \"api\", if = \"is_api || api_host\" }]";
    let syslog = Syslog::bind();
    let toml = config("\"127.0.0.1:0\"", fe, &api, "", &site) + &syslog.table();
    let tern = Tern::run(&toml);
    let mut conn = connect(tern.addr(), false).await;
    let cases = [
        ("/api/users", "www.test", "api"),
        ("/V2/x", "www.test", "api"),
        ("/index.html", "API.test:8080", "api"),
        ("/index.html", "api.example.org", "api"),
        ("/index.html", "www.test", "site"),
        ("/apix", "www.test", "site"),
    ];
    // One keep-alive connection: the backend is chosen per request, not per connection.
    for (path, host, expected) in cases {
        let got = send(&mut conn, get_host(path, host)).await;
        assert_eq!(got.status, 200, "{path} {host}: {}", got.text());
        assert_eq!(served_by(&got), expected, "{path} Host {host}");
        let v = syslog.next();
        assert_eq!(v["backend"], expected, "{v}");
        assert_eq!(v["server"], expected, "{v}");
    }
    let counters = tern.stop_clean();
    assert_eq!(counters.get("backend api", "requests"), 4);
    assert_eq!(counters.get("backend site", "requests"), 2);
    assert_eq!(counters.get("server api/api", "requests"), 4);
    assert_eq!(counters.get("frontend web", "resp_2xx"), 6);
}

#[tokio::test]
async fn without_default_backend_unrouted_requests_get_503() {
    let (api, site) = (Term::start("api"), Term::start("site"));
    let fe = "use_backend = [\n\
                { backend = \"api\", unless = \"{ path_beg /private/ } || { path_beg /site/ }\" },\n\
                { backend = \"site\", if = \"{ path_beg /site/ }\" },\n\
              ]";
    let syslog = Syslog::bind();
    let toml = config("\"127.0.0.1:0\"", fe, &api, "", &site) + &syslog.table();
    let tern = Tern::run(&toml);
    let mut conn = connect(tern.addr(), false).await;
    assert_eq!(served_by(&send(&mut conn, get_req("/a")).await), "api");
    assert_eq!(
        served_by(&send(&mut conn, get_req("/site/a")).await),
        "site"
    );
    let got = send(&mut conn, get_req("/private/x")).await;
    assert_eq!(got.status, 503);
    assert!(
        got.text().contains("No server is available"),
        "{}",
        got.text()
    );
    // The request was read whole: the connection stays usable.
    assert_eq!(served_by(&send(&mut conn, get_req("/b")).await), "api");
    for _ in 0..2 {
        syslog.next();
    }
    let v = syslog.next();
    assert_eq!(
        (v["status"].as_i64(), v["termination"].as_str()),
        (Some(503), Some("SC"))
    );
    assert_eq!(v["backend"], Value::Null, "{v}");
    let counters = tern.stop_clean();
    assert_eq!(counters.get("frontend web", "no_backend"), 1);
    assert_eq!(counters.get("frontend web", "resp_5xx"), 1);
    assert_eq!(counters.get("backend api", "requests"), 2);
    assert_eq!(counters.get("backend site", "requests"), 1);
}

#[tokio::test]
async fn use_backend_routes_by_sni_on_a_tls_bind() {
    let (api, site) = (Term::start("api"), Term::start("site"));
    let dir = temp_dir("rules-sni");
    write_named_cert(&dir, "both", &["api.test", "www.test"], KeyKind::EcdsaP256);
    let fe = format!(
        "default_backend = \"site\"\n\
         tls = {{ certs = [{}] }}\n\
         use_backend = [{{ backend = \"api\", if = \"{{ ssl_fc_sni -i api.test }}\" }}]",
        toml_path(&dir.join("both.pem"))
    );
    let tern = Tern::run_in(dir, &config("\"127.0.0.1:0\"", &fe, &api, "", &site));
    let client = rustls_client(&[&TLS13, &TLS12], false);
    for (sni, expected) in [
        ("api.test", "api"),
        ("www.test", "site"),
        ("API.TEST", "api"),
    ] {
        let (mut conn, _) = tls_connect(tern.addr(), client.clone(), sni).await;
        // The Host names the other site: SNI decides.
        let got = send(&mut conn, get_host("/", "www.test")).await;
        assert_eq!(served_by(&got), expected, "SNI {sni}");
    }
    let counters = tern.stop_clean();
    assert_eq!(counters.get("backend api", "requests"), 2);
    assert_eq!(counters.get("backend site", "requests"), 1);
}

#[tokio::test]
async fn deny_and_return_are_answered_by_tern_on_a_kept_connection() {
    let (api, site) = (Term::start("api"), Term::start("site"));
    let fe = "default_backend = \"api\"\n\
              http_request = [\n\
                { action = \"deny\", if = \"{ path_beg /admin } !{ src 10.0.0.0/8 }\" },\n\
                { action = \"return\", status = 200, content_type = \"text/plain\", body = \"pong\\n\", if = \"{ path /ping }\" },\n\
              ]";
    let api_rules =
        "http_request = [{ action = \"deny\", status = 429, if = \"{ hdr(x-tenant) greedy }\" }]";
    let syslog = Syslog::bind();
    let toml = config("\"127.0.0.1:0\"", fe, &api, api_rules, &site) + &syslog.table();
    let tern = Tern::run(&toml);
    let mut conn = connect(tern.addr(), false).await;
    let denied = send(&mut conn, get_req("/admin/users")).await;
    assert_eq!(denied.status, 403);
    assert!(
        denied.text().contains("<h1>403 Forbidden</h1>"),
        "{}",
        denied.text()
    );
    let pong = send(&mut conn, get_req("/ping")).await;
    assert_eq!((pong.status, pong.text().as_str()), (200, "pong\n"));
    assert_eq!(pong.header("content-type"), Some("text/plain"));
    let mut greedy = get_req("/");
    greedy
        .headers_mut()
        .insert("x-tenant", "greedy".parse().unwrap());
    let limited = send(&mut conn, greedy).await;
    assert_eq!(limited.status, 429);
    assert!(
        limited.text().contains("429 Too Many Requests"),
        "{}",
        limited.text()
    );
    // Everything went over one connection, and the next request still reaches the server.
    assert_eq!(served_by(&send(&mut conn, get_req("/")).await), "api");
    let states: Vec<(i64, String, Value)> = (0..3)
        .map(|_| syslog.next())
        .map(|v| {
            (
                v["status"].as_i64().unwrap(),
                v["termination"].as_str().unwrap().to_owned(),
                v["backend"].clone(),
            )
        })
        .collect();
    assert_eq!(states[0], (403, "PR".to_owned(), Value::Null));
    assert_eq!(states[1], (200, "LR".to_owned(), Value::Null));
    assert_eq!(states[2], (429, "PR".to_owned(), Value::from("api")));
    let counters = tern.stop_clean();
    assert_eq!(counters.get("frontend web", "denied"), 2);
    assert_eq!(counters.get("frontend web", "intercepted"), 1);
    assert_eq!(counters.get("frontend web", "resp_4xx"), 2);
    assert_eq!(counters.get("backend api", "requests"), 1);
    assert_eq!(counters.get("server api/api", "requests"), 1);
}

#[tokio::test]
async fn request_header_rules_change_what_the_server_receives() {
    let (api, site) = (Term::start("api"), Term::start("site"));
    let fe = "default_backend = \"api\"\n\
              x_forwarded_for = false\n\
              http_request = [\n\
                { action = \"add-header\", name = \"X-Order\", value = \"frontend\" },\n\
                { action = \"del-header\", name = \"X-Debug\" },\n\
                { action = \"set-header\", name = \"X-Client\", value = \"%[src] %[method] %[path] tls=%[ssl_fc] id=%[hdr(x-id)] 100%%\" },\n\
                { action = \"add-header\", name = \"X-Via\", value = \"tern\", if = \"{ hdr(x-via) -m found }\" },\n\
              ]";
    let api_rules = "http_request = [\n\
                       { action = \"set-header\", name = \"X-Order\", value = \"backend\" },\n\
                       { action = \"set-header\", name = \"Host\", value = \"inside.test\" },\n\
                     ]";
    let tern = Tern::run(&config("\"127.0.0.1:0\"", fe, &api, api_rules, &site));
    let mut conn = connect(tern.addr(), false).await;
    let mut req = get_req("/echo?h=1");
    for (name, value) in [
        ("x-debug", "secret"),
        ("x-client", "forged"),
        ("x-id", "a, b"),
        ("x-via", "proxy1"),
    ] {
        req.headers_mut().insert(name, value.parse().unwrap());
    }
    let got = send(&mut conn, req).await;
    assert_eq!(got.status, 200);
    let echoed = got.text().to_ascii_lowercase();
    let lines: Vec<&str> = echoed.lines().collect();
    for expected in [
        "x-order: backend",
        "x-client: 127.0.0.1 get /echo tls=0 id=b 100%",
        "x-via: proxy1",
        "x-via: tern",
        "host: inside.test",
        "x-id: a, b",
    ] {
        assert!(lines.contains(&expected), "no {expected:?} in:\n{echoed}");
    }
    for absent in [
        "x-debug",
        "x-order: frontend",
        "x-client: forged",
        "host: localhost",
    ] {
        assert!(
            !echoed.contains(absent),
            "{absent:?} reached the server:\n{echoed}"
        );
    }
    assert_eq!(echoed.matches("host:").count(), 1, "{echoed}");
}

#[tokio::test]
async fn response_header_rules_edit_server_responses_but_not_tern_pages() {
    let (api, site) = (Term::start("api"), Term::start("site"));
    let fe = "use_backend = [{ backend = \"api\", unless = \"{ path_beg /nowhere }\" }]\n\
              http_response = [\n\
                { action = \"set-header\", name = \"Strict-Transport-Security\", value = \"max-age=63072000\" },\n\
                { action = \"add-header\", name = \"X-Order\", value = \"frontend\" },\n\
              ]";
    let api_rules = "http_response = [\n\
                       { action = \"add-header\", name = \"X-Served-By\", value = \"%[hdr(x-term-server)]\" },\n\
                       { action = \"del-header\", name = \"X-Term-Server\" },\n\
                       { action = \"add-header\", name = \"X-Order\", value = \"backend\" },\n\
                       { action = \"add-header\", name = \"X-Teapot\", value = \"yes\", if = \"{ hdr(content-type) -m sub html }\" },\n\
                     ]";
    let tern = Tern::run(&config("\"127.0.0.1:0\"", fe, &api, api_rules, &site));
    let mut conn = connect(tern.addr(), false).await;
    let got = send(&mut conn, get_req("/?s=10")).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body.len(), 10);
    assert_eq!(
        got.header("strict-transport-security"),
        Some("max-age=63072000")
    );
    assert_eq!(got.header("x-served-by"), Some("api"));
    assert_eq!(got.header("x-term-server"), None);
    let order: Vec<&str> = got
        .headers
        .get_all("x-order")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(order, ["backend", "frontend"]);
    assert_eq!(got.header("x-teapot"), None, "the sized body is not HTML");
    let page = send(&mut conn, get_req("/")).await;
    assert_eq!(page.header("x-teapot"), Some("yes"));
    // tern's own answers are not responses from servers: no rule applies (as in HAProxy).
    let unrouted = send(&mut conn, get_req("/nowhere")).await;
    assert_eq!(unrouted.status, 503);
    assert_eq!(unrouted.header("strict-transport-security"), None);
}

#[tokio::test]
async fn set_log_level_changes_the_severity_or_silences_the_line() {
    let (api, site) = (Term::start("api"), Term::start("site"));
    let fe = "default_backend = \"site\"\n\
              http_request = [\n\
                { action = \"set-log-level\", level = \"silent\", if = \"{ path /quiet }\" },\n\
                { action = \"set-log-level\", level = \"err\", if = \"{ path /loud }\" },\n\
              ]";
    let syslog = Syslog::bind();
    let toml = config("\"127.0.0.1:0\"", fe, &api, "", &site) + &syslog.table();
    let tern = Tern::run(&toml);
    let mut conn = connect(tern.addr(), false).await;
    for path in ["/quiet", "/loud", "/plain"] {
        assert_eq!(send(&mut conn, get_req(path)).await.status, 200);
    }
    let mut buf = [0u8; 8192];
    let mut lines = Vec::new();
    for _ in 0..2 {
        let n = syslog.0.recv(&mut buf).expect("no access log line in time");
        lines.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    // The silenced request has no line; `err` is severity 3, the default 6 (facility local0).
    assert!(
        lines[0].starts_with("<131>") && lines[0].contains("\"/loud\""),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("<134>") && lines[1].contains("\"/plain\""),
        "{lines:?}"
    );
    tern.stop_clean();
}
