//! Rate limits and abuse control through the real binary: a counter table tracked by source
//! address, with an abusive client (from 127.0.0.2) and a normal one (127.0.0.3) at once on
//! two workers: the abuser is answered 429 past 100 requests per 10 s, within the documented
//! bound, and the normal client never is; `tern ctl show table` and `clear table`; `tarpit`,
//! `reject` and `silent-drop`; a `conn_cur` limit by `tcp_request.connection` rules;
//! `max_conn_rate`; the streams of an HTTP/2 connection limited together (nghttp); and the same
//! limits written in HAProxy's `.cfg` syntax.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(10);

/// A connection to `addr` from source address `from` (any address of 127/8 is local).
fn connect_from(from: &str, addr: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let local: SocketAddr = SocketAddr::new(from.parse::<IpAddr>().unwrap(), 0);
    socket.bind(&local.into()).unwrap();
    socket.connect(&addr.into()).unwrap();
    socket.into()
}

/// Sends `GET path` on `s` and reads the response: its status, or `None` when the connection
/// closed without one.
fn get_on(s: &mut TcpStream, path: &str) -> Option<u16> {
    let req = format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    read_response(s, WAIT).status()
}

/// `n` requests from `from`, on connections of `per_conn` requests; the statuses.
fn requests_from(from: &str, addr: SocketAddr, n: usize, per_conn: usize) -> Vec<Option<u16>> {
    let mut statuses = Vec::with_capacity(n);
    let mut conn = None;
    for i in 0..n {
        if i % per_conn == 0 {
            conn = Some(connect_from(from, addr));
        }
        let s = conn.as_mut().unwrap();
        let status = get_on(s, "/");
        if status.is_none() {
            conn = Some(connect_from(from, addr));
        }
        statuses.push(status);
    }
    statuses
}

/// `tern ctl -s SOCKET WORDS...`, which must succeed; its output.
fn ctl(socket: &Path, words: &str) -> String {
    let mut args = vec!["ctl", "-s", socket.to_str().unwrap()];
    args.extend(words.split_whitespace());
    let (code, out, err) = tern_output(&args);
    assert_eq!(code, 0, "`{words}` failed: {out}{err}");
    out
}

const PER_IP: &str =
    "\n[[table]]\nname = \"per_ip\"\ntype = \"ip\"\nsize = \"1k\"\nexpire = \"30s\"\n\
                      store = [\"http_req_rate(10s)\", \"conn_cur\"]\n";

#[test]
fn an_abuser_gets_429_past_the_limit_and_a_normal_client_never_does() {
    let term = Term::start("s1");
    let dir = temp_dir("rate-abuse");
    let socket = dir.join("tern.sock");
    let cfg = Config::new()
        .terms(&[&term])
        .global(&format!("workers = 2\n\n[control]\nsocket = {socket:?}"))
        .frontend(
            "http_request = [\n\
               { action = \"track-sc0\", key = \"src\", table = \"per_ip\" },\n\
               { action = \"deny\", status = 429, if = \"{ sc_http_req_rate(0) gt 100 }\" },\n\
             ]",
        );
    let mut cfg = cfg;
    cfg.global.retain(|l| l != "workers = 1");
    let tern = Tern::run_in(dir, &(cfg.toml() + PER_IP));
    let addr = tern.addr();
    // A keep-alive connection left open after its request: its track ended with the request.
    let mut idle = connect_from("127.0.0.7", addr);
    assert_eq!(get_on(&mut idle, "/"), Some(200));
    let started = Instant::now();
    // The abuser: 4 threads of 75 requests on connections of 15 requests (spread over both
    // workers by the kernel); the normal client: 60 requests at its own pace meanwhile.
    let abusers: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(move || requests_from("127.0.0.2", addr, 75, 15)))
        .collect();
    let normal = std::thread::spawn(move || {
        let mut statuses = Vec::new();
        for _ in 0..60 {
            statuses.extend(requests_from("127.0.0.3", addr, 1, 1));
            std::thread::sleep(Duration::from_millis(10));
        }
        statuses
    });
    let abused: Vec<Option<u16>> = abusers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let normal = normal.join().unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(9),
        "the test must run within one period: {elapsed:?}"
    );
    assert!(normal.iter().all(|s| *s == Some(200)), "{normal:?}");
    let passed = abused.iter().filter(|s| **s == Some(200)).count();
    let limited = abused.iter().filter(|s| **s == Some(429)).count();
    assert_eq!(passed + limited, 300, "{abused:?}");
    // Documented bound: 100 per 10 s within ±5% across workers.
    assert!((95..=105).contains(&passed), "{passed} passed");

    let shown = ctl(&socket, "show table per_ip");
    assert!(
        shown.starts_with("# table: per_ip, type: ip, size: 1024, used: 3"),
        "{shown}"
    );
    let abuser_line = shown
        .lines()
        .find(|l| l.starts_with("key=127.0.0.2"))
        .expect(&shown);
    assert!(abuser_line.contains("http_req_rate(10000)=300"), "{shown}");
    assert!(abuser_line.contains("conn_cur=0"), "{shown}");
    let one = ctl(&socket, "show table per_ip key 127.0.0.3");
    assert_eq!(one.lines().count(), 2, "{one}");
    let kept = ctl(&socket, "show table per_ip key 127.0.0.7");
    assert!(
        kept.contains("key=127.0.0.7 conn_cur=0 http_req_rate(10000)=1"),
        "{kept}"
    );
    drop(idle);
    // Clearing the abuser's entry lifts its limit at once.
    assert!(ctl(&socket, "clear table per_ip key 127.0.0.2").contains("1 entries cleared"));
    assert_eq!(requests_from("127.0.0.2", addr, 1, 1), [Some(200)]);
    assert!(ctl(&socket, "clear table per_ip").contains("3 entries cleared"));
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "denied"), limited as u64);
}

/// A frontend with `http_request` rules `rules` (and `extra` lines), one worker.
fn run_rules(term: &Term, rules: &str, extra: &str) -> Tern {
    let cfg = Config::new()
        .terms(&[term])
        .frontend(&format!("http_request = [\n{rules}\n]\n{extra}"));
    Tern::run(&cfg.toml())
}

#[test]
fn tarpit_holds_the_request_then_answers_and_closes() {
    let term = Term::start("s1");
    let tern = run_rules(
        &term,
        "{ action = \"tarpit\", if = \"{ path /slow }\" },\n\
         { action = \"tarpit\", status = 429, if = \"{ path /slow429 }\" }",
        "timeouts.tarpit = \"400ms\"",
    );
    for (path, status) in [("/slow", 500), ("/slow429", 429)] {
        let mut s = TcpStream::connect(tern.addr()).unwrap();
        let started = Instant::now();
        assert_eq!(get_on(&mut s, path), Some(status));
        assert!(started.elapsed() >= Duration::from_millis(400), "{path}");
        // The connection closes after the answer.
        assert!(read_until_closed(&mut s, WAIT).closed, "{path}");
    }
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    assert_eq!(get_on(&mut s, "/"), Some(200));
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "denied"), 2);
}

#[test]
fn reject_closes_and_silent_drop_resets_without_an_answer() {
    let term = Term::start("s1");
    let tern = run_rules(
        &term,
        "{ action = \"reject\", if = \"{ path /reject }\" },\n\
         { action = \"silent-drop\", if = \"{ path /drop }\" }",
        "",
    );
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(b"GET /reject HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let got = read_until_closed(&mut s, WAIT);
    assert!(got.closed && got.bytes.is_empty(), "{}", got.text());

    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(b"GET /drop HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    let mut buf = [0u8; 256];
    let err = s
        .read(&mut buf)
        .expect_err("silent-drop answers nothing and resets");
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "denied"), 2);
}

#[test]
fn connection_rules_limit_concurrent_connections_per_source() {
    let term = Term::start("s1");
    let cfg = Config::new().terms(&[&term]).frontend(
        "tcp_request.connection = [\n\
           { action = \"track-sc0\", key = \"src\", table = \"per_ip\" },\n\
           { action = \"reject\", if = \"{ sc0_conn_cur gt 2 }\" },\n\
         ]",
    );
    let tern = Tern::run(&(cfg.toml() + PER_IP));
    let addr = tern.addr();
    let mut open: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut s = connect_from("127.0.0.4", addr);
            assert_eq!(get_on(&mut s, "/"), Some(200));
            s
        })
        .collect();
    // The third concurrent connection from that source is closed unanswered; another
    // source is not limited.
    let mut third = connect_from("127.0.0.4", addr);
    assert_eq!(get_on(&mut third, "/"), None);
    let mut other = connect_from("127.0.0.5", addr);
    assert_eq!(get_on(&mut other, "/"), Some(200));
    // Once one closes (and tern has seen it close), a new one is served.
    drop(open.pop());
    let deadline = Instant::now() + WAIT;
    loop {
        let mut s = connect_from("127.0.0.4", addr);
        if get_on(&mut s, "/") == Some(200) {
            break;
        }
        assert!(Instant::now() < deadline, "never served again");
        std::thread::sleep(Duration::from_millis(20));
    }
    let c = tern.stop_clean();
    assert!(c.get("frontend web", "denied") >= 1);
}

#[test]
fn max_conn_rate_spreads_new_connections_and_refuses_none() {
    let term = Term::start("s1");
    let cfg = Config::new().terms(&[&term]).global("max_conn_rate = 10");
    let tern = Tern::run(&cfg.toml());
    let started = Instant::now();
    for _ in 0..30 {
        let mut s = TcpStream::connect(tern.addr()).unwrap();
        assert_eq!(get_on(&mut s, "/"), Some(200));
    }
    // 10 at once, then 10 a second: about 2 s for 30; never much less.
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(1500), "{elapsed:?}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "requests"), 30);
}

#[test]
fn a_haproxy_cfg_with_a_table_limits_and_check_names_mistakes() {
    let term = Term::start("s1");
    let dir = temp_dir("rate-cfg");
    let cfg = format!(
        "global\n  nbthread 1\n  maxconnrate 1000\n\
         defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
         frontend web\n  bind 127.0.0.1:0\n  rate-limit sessions 1000\n\
           http-request track-sc0 src table st_src\n\
           http-request deny deny_status 429 if {{ sc0_http_req_rate gt 5 }}\n\
           default_backend app\n\
         backend app\n  server s1 {}\n\
         backend st_src\n  stick-table type ip size 1k expire 30s store http_req_rate(10s)\n",
        term.addr
    );
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, &cfg).unwrap();
    let mut proc = Proc::spawn(&["run", "-c", path.to_str().unwrap()], &dir);
    proc.wait_line("ready:");
    let addr = proc.listening()[0].1;
    let statuses = requests_from("127.0.0.6", addr, 8, 8);
    let ok = statuses.iter().filter(|s| **s == Some(200)).count();
    assert_eq!(ok, 5, "{statuses:?}");
    assert_eq!(statuses[5..], [Some(429); 3]);
    let _ = proc.stop();

    let bad = cfg.replace("table st_src", "table nope");
    std::fs::write(&path, bad).unwrap();
    let (code, out, err) = tern_output(&["check", "-c", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    let text = format!("{out}{err}");
    assert!(
        text.contains("haproxy.cfg:12: frontend web: http_request[0]: no [[table]] named `nope`"),
        "{text}"
    );
}

#[test]
fn http2_streams_count_in_their_connections_tracked_entry() {
    if !have("nghttp") {
        eprintln!("skipped: nghttp (nghttp2-client) is not installed");
        return;
    }
    let term = Term::start("s1");
    let cfg = Config::new().terms(&[&term]).frontend(
        "http2 = { cleartext = true }\n\
         tcp_request.connection = [{ action = \"track-sc0\", key = \"src\", table = \"per_ip\" }]\n\
         http_request = [{ action = \"deny\", status = 429, if = \"{ sc0_http_req_rate gt 5 }\" }]",
    );
    let tern = Tern::run(&(cfg.toml() + PER_IP));
    // Eight streams on one HTTP/2 connection (nghttp speaks h2c with prior knowledge): five
    // pass, whichever order they are served in.
    let urls: Vec<String> = (0..8)
        .map(|i| format!("http://{}/p{i}", tern.addr()))
        .collect();
    let mut args = vec!["-v", "-n"];
    args.extend(urls.iter().map(String::as_str));
    let out = std::process::Command::new("nghttp")
        .args(&args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let count = |status: &str| text.matches(&format!(":status: {status}")).count();
    assert_eq!((count("200"), count("429")), (5, 3), "{text}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "h2_sessions"), 1);
}
