//! Persistence through the real `tern` binary: an inserted cookie keeps a client on its server
//! across keep-alive and new connections (and never on a server that is down), `indirect`
//! hides it from the server, `nocache` marks the response private, and source stickiness keeps
//! an address on one server. In rewrite and prefix modes the `tern term` servers set the cookie
//! themselves (`?sc=NAME=VALUE`): tern changes its value on the way out and routes by it, from
//! a TOML file and from a haproxy.cfg alike.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::time::{Duration, Instant};

use hyper::Request;

/// A GET of `path` carrying `cookie`.
fn with_cookie(path: &str, cookie: &str) -> Request<Body> {
    Request::get(path)
        .header("host", "localhost")
        .header("cookie", cookie)
        .body(Body::default())
        .unwrap()
}

const COOKIE: &str =
    "cookie = { name = \"SRV\", indirect = true, nocache = true, httponly = true }";

#[tokio::test]
async fn an_inserted_cookie_holds_across_keep_alive_and_new_connections() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let tern = Tern::run(&Config::new().terms(&[&a, &b, &c]).backend(COOKIE).toml());
    let first = get(tern.addr(), false, "/").await;
    assert_eq!(first.status, 200);
    let server = first.header("x-term-server").unwrap().to_owned();
    let set = first
        .header("set-cookie")
        .expect("a cookie is set")
        .to_owned();
    assert_eq!(set, format!("SRV={server}; path=/; HttpOnly"));
    assert_eq!(first.header("cache-control"), Some("private"));
    let cookie = set.split(';').next().unwrap().to_owned();

    // Keep-alive: round-robin would move on; the cookie does not.
    let mut conn = connect(tern.addr(), false).await;
    for _ in 0..6 {
        let got = send(&mut conn, with_cookie("/", &cookie)).await;
        assert_eq!(got.header("x-term-server"), Some(server.as_str()));
        assert_eq!(
            got.header("set-cookie"),
            None,
            "a valid cookie is not set again"
        );
    }
    // New connections, and other cookies around it.
    for _ in 0..6 {
        let mut fresh = connect(tern.addr(), false).await;
        let got = send(&mut fresh, with_cookie("/", &format!("a=1; {cookie}; b=2"))).await;
        assert_eq!(got.header("x-term-server"), Some(server.as_str()));
    }
    // `indirect`: the server never sees the cookie, but sees the others.
    let dump = send(&mut conn, with_cookie("/?h=1", &format!("a=1; {cookie}"))).await;
    let seen = dump.text().to_ascii_lowercase();
    assert!(!seen.contains("srv="), "{seen}");
    assert!(seen.contains("a=1"), "{seen}");
    // An unknown value is ignored and replaced.
    let got = send(&mut conn, with_cookie("/", "SRV=nobody")).await;
    assert!(got.header("set-cookie").is_some());
    tern.stop_clean();
}

#[tokio::test]
async fn a_cookie_never_leads_to_a_server_that_is_down() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let tern = Tern::run(
        &Config::new()
            .terms(&[&a, &b])
            .backend(COOKIE)
            .backend("check = { interval = \"100ms\", fall = 2 }")
            .toml(),
    );
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !tern.proc.stderr_text().contains("server is DOWN") {
        assert!(Instant::now() < deadline, "a never marked down");
        // Bounded poll of the log: nothing else shows the checker's progress.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut conn = connect(tern.addr(), false).await;
    let got = send(&mut conn, with_cookie("/", "SRV=a")).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.header("x-term-server"), Some("b"));
    assert!(got.header("set-cookie").unwrap().starts_with("SRV=b;"));
    tern.stop_clean();
}

#[tokio::test]
async fn source_stickiness_keeps_an_address_on_one_server() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let tern = Tern::run(
        &Config::new()
            .terms(&[&a, &b, &c])
            .backend("stick = { on = \"source\", size = 100, expire = \"1m\" }")
            .toml(),
    );
    let mut seen = std::collections::HashSet::new();
    for _ in 0..9 {
        let got = get(tern.addr(), false, "/").await;
        assert_eq!(got.status, 200);
        seen.insert(got.header("x-term-server").unwrap().to_owned());
    }
    assert_eq!(seen.len(), 1, "{seen:?}");
    tern.stop_clean();
}

/// Every `Set-Cookie` value of a response, in order.
fn set_cookies(got: &Got) -> Vec<String> {
    got.headers
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

/// Rewrite mode on `addr`: the server's own cookie gets the server's value; requests carrying
/// it go back to that server, which sees the cookie as the client sent it.
async fn rewrite_mode_holds(addr: std::net::SocketAddr) {
    let first = get(addr, false, "/?sc=lang=en&sc=SRV=chosen-by-app").await;
    assert_eq!(first.status, 200);
    let server = first.header("x-term-server").unwrap().to_owned();
    assert_eq!(
        set_cookies(&first),
        [
            "lang=en; Path=/".to_owned(),
            format!("SRV={server}; Path=/")
        ]
    );
    let plain = get(addr, false, "/").await;
    assert!(
        set_cookies(&plain).is_empty(),
        "tern sets no cookie of its own in rewrite mode"
    );
    let cookie = format!("SRV={server}");
    for _ in 0..4 {
        let mut fresh = connect(addr, false).await;
        let got = send(&mut fresh, with_cookie("/", &format!("a=1; {cookie}"))).await;
        assert_eq!(got.header("x-term-server"), Some(server.as_str()));
    }
    let mut conn = connect(addr, false).await;
    let dump = send(&mut conn, with_cookie("/?h=1", &cookie)).await;
    assert_eq!(dump.header("x-term-server"), Some(server.as_str()));
    assert!(dump.text().contains(&cookie), "{}", dump.text());
}

#[tokio::test]
async fn rewrite_mode_gives_the_servers_cookie_the_servers_value() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let tern = Tern::run(
        &Config::new()
            .terms(&[&a, &b, &c])
            .backend("cookie = { name = \"SRV\", mode = \"rewrite\" }")
            .toml(),
    );
    rewrite_mode_holds(tern.addr()).await;
    tern.stop_clean();
}

/// Prefix mode on `addr`: the application's cookie gets `<server>~` before its value; requests
/// go back by that prefix, and the server finds its own value.
async fn prefix_mode_holds(addr: std::net::SocketAddr) {
    let first = get(addr, false, "/?sc=JSID=sess42").await;
    assert_eq!(first.status, 200);
    let server = first.header("x-term-server").unwrap().to_owned();
    assert_eq!(
        set_cookies(&first),
        [format!("JSID={server}~sess42; Path=/")]
    );
    let cookie = format!("JSID={server}~sess42");
    for _ in 0..4 {
        let mut fresh = connect(addr, false).await;
        let got = send(&mut fresh, with_cookie("/", &format!("a=1; {cookie}; b=2"))).await;
        assert_eq!(got.header("x-term-server"), Some(server.as_str()));
    }
    let mut conn = connect(addr, false).await;
    let dump = send(&mut conn, with_cookie("/?h=1", &format!("a=1; {cookie}"))).await;
    assert_eq!(dump.header("x-term-server"), Some(server.as_str()));
    let seen = dump.text();
    assert!(seen.contains("cookie: a=1; JSID=sess42\n"), "{seen}");
    // The server updates its cookie: the client gets the new value, prefixed again.
    let update = send(&mut conn, with_cookie("/?sc=JSID=sess43", &cookie)).await;
    assert_eq!(
        set_cookies(&update),
        [format!("JSID={server}~sess43; Path=/")]
    );
}

#[tokio::test]
async fn prefix_mode_routes_by_the_prefix_and_hides_it_from_the_server() {
    let (a, b, c) = (Term::start("a"), Term::start("b"), Term::start("c"));
    let tern = Tern::run(
        &Config::new()
            .terms(&[&a, &b, &c])
            .backend("cookie = { name = \"JSID\", mode = \"prefix\" }")
            .toml(),
    );
    prefix_mode_holds(tern.addr()).await;
    tern.stop_clean();
}

/// Runs `tern run -c haproxy.cfg` on `text`.
fn run_cfg(text: &str) -> Tern {
    let dir = temp_dir("cookie-cfg");
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, text).unwrap();
    let mut proc = Proc::spawn(&["run", "-c", path.to_str().unwrap()], &dir);
    proc.wait_line("ready:");
    let binds = proc.listening();
    Tern { proc, dir, binds }
}

#[tokio::test]
async fn the_modes_from_a_haproxy_cfg() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    for cookie in ["cookie SRV rewrite", "cookie JSID prefix"] {
        let tern = run_cfg(&format!(
            "global\n  nbthread 1\ndefaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  \
             timeout connect 5s\nfrontend web\n  bind 127.0.0.1:0\n  default_backend app\n\
             backend app\n  {cookie}\n  server a {} cookie a\n  server b {} cookie b\n",
            a.addr, b.addr
        ));
        if cookie.contains("rewrite") {
            rewrite_mode_holds(tern.addr()).await;
        } else {
            prefix_mode_holds(tern.addr()).await;
        }
        tern.stop_clean();
    }
}
