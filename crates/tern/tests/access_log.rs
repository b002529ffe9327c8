//! The access log through the real binary: one line per request with HAProxy's timers and
//! termination state, to a file (text) or to a syslog socket over UDP (JSON) that the test
//! binds. Scenarios: a normal keep-alive exchange, a 503 without a server and one after failed
//! connects, a 504 (server timeout), a client that aborts a download, a WebSocket tunnel (one
//! line when it ends), a refused head and a request timeout (logged) next to an empty connection
//! (not logged), TLS fields and a failed handshake, and a file reopened by a reload. Dropping on
//! a full queue is a unit test of the queue (tern-proxy `access_log/tests.rs`), where a stalled
//! writer can be made deterministic.
//!
//! Syslog datagrams are awaited with a receive timeout; file contents are read once tern has
//! stopped (its exit writes every queued line before the `stats:` lines).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use serde_json::Value;

/// How long a datagram may take to arrive.
const WITHIN: Duration = Duration::from_secs(10);

/// A syslog server the test binds on loopback.
struct Syslog {
    socket: UdpSocket,
}

impl Syslog {
    fn bind() -> Syslog {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_read_timeout(Some(WITHIN)).unwrap();
        Syslog { socket }
    }

    /// The `[access_log]` lines sending JSON here.
    fn table(&self) -> String {
        format!(
            "[access_log]\ntarget = \"udp://{}\"\nformat = \"json\"\n",
            self.socket.local_addr().unwrap()
        )
    }

    /// The next line, its RFC 3164 header checked and removed, parsed.
    fn next(&self) -> Value {
        let mut buf = [0u8; 8192];
        let n = self
            .socket
            .recv(&mut buf)
            .expect("no access log datagram in time");
        let text = String::from_utf8(buf[..n].to_vec()).unwrap();
        assert!(text.starts_with("<134>"), "not local0.info: {text}");
        let (_, json) = text.split_once("]: ").expect(&text);
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
    }
}

/// Runs tern with `config` plus the syslog's `[access_log]` table.
fn run_logged(config: &Config, syslog: &Syslog) -> Tern {
    Tern::run(&format!("{}\n{}", config.toml(), syslog.table()))
}

/// One request on a fresh raw connection; returns the response and the client's address.
fn raw_get(addr: SocketAddr, path: &str) -> (Raw, SocketAddr) {
    let mut s = TcpStream::connect(addr).unwrap();
    let local = s.local_addr().unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    (read_response(&mut s, WITHIN), local)
}

fn int(v: &Value, key: &str) -> i64 {
    v[key]
        .as_i64()
        .unwrap_or_else(|| panic!("{key} is not an integer in {v}"))
}

/// The phase timers are present, and those that ran are not longer than the whole.
fn assert_timers_sane(v: &Value) {
    let active = int(v, "active_us");
    assert!(active >= 0, "{v}");
    for key in ["request_us", "queue_us", "connect_us", "response_us"] {
        let t = int(v, key);
        assert!(
            t >= -1 && t <= active,
            "{key}={t} outside -1..={active}: {v}"
        );
    }
    let ran: i64 = ["request_us", "queue_us", "connect_us", "response_us"]
        .iter()
        .map(|k| int(v, k).max(0))
        .sum();
    assert!(ran <= active, "phases add up to more than the whole: {v}");
}

#[test]
fn idle_time_counts_from_the_accept_on_a_plain_connection() {
    // The session is built when the first bytes arrive (listen/first_bytes.rs); the wait
    // before them is still the request's idle time (HAProxy's Ti), not part of its TR.
    let term = Term::start("s1");
    let syslog = Syslog::bind();
    let tern = run_logged(&Config::new().terms(&[&term]), &syslog);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    write!(s, "GET / HTTP/1.1\r\nHo").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    write!(s, "st: localhost\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, WITHIN).status(), Some(200));
    let v = syslog.next();
    assert!(int(&v, "idle_us") >= 300_000, "{v}");
    let request = int(&v, "request_us");
    assert!((150_000..1_000_000).contains(&request), "{v}");
    assert_timers_sane(&v);
}

#[test]
fn a_normal_exchange_and_keep_alive() {
    let term = Term::start("s1");
    let syslog = Syslog::bind();
    let tern = run_logged(&Config::new().terms(&[&term]), &syslog);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    let local = s.local_addr().unwrap();
    for path in ["/first?s=1k", "/second?s=2k"] {
        write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let r = read_response(&mut s, WITHIN);
        assert_eq!(r.status(), Some(200), "{}", r.head_text());
        let v = syslog.next();
        assert_eq!(v["client_ip"], "127.0.0.1");
        assert_eq!(int(&v, "client_port"), i64::from(local.port()));
        assert_eq!(v["frontend"], "web");
        assert_eq!(v["backend"], "app");
        assert_eq!(v["server"], "s1");
        assert_eq!(v["status"], 200);
        assert_eq!(v["termination"], "--");
        assert_eq!(v["method"], "GET");
        assert_eq!(v["path"], path);
        assert_eq!(v["version"], "HTTP/1.1");
        assert_eq!(v["retries"], 0);
        assert_eq!(v["error"], Value::Null);
        assert_eq!(v["tls"], Value::Null);
        assert_eq!(v["handshake_us"], 0);
        assert_eq!(int(&v, "bytes_out"), r.bytes.len() as i64);
        let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        assert_eq!(int(&v, "bytes_in"), request.len() as i64);
        assert_timers_sane(&v);
        for key in ["request_us", "queue_us", "connect_us", "response_us"] {
            assert!(int(&v, key) >= 0, "{key} did not run: {v}");
        }
        assert!(v["time"].as_str().unwrap().ends_with('Z'), "{v}");
    }
    let (status, lines) = tern.proc.stop();
    assert!(status.success());
    let stats = lines
        .iter()
        .find(|l| l.starts_with("stats: access_log "))
        .expect("a stats: access_log line");
    assert_eq!(stats, "stats: access_log written=2 dropped=0 failed=0");
}

/// Waits (bounded) for a line of tern's log containing `needle`.
fn wait_log(tern: &Tern, needle: &str) {
    let deadline = std::time::Instant::now() + WITHIN;
    while !tern.proc.stderr_text().contains(needle) {
        assert!(
            std::time::Instant::now() < deadline,
            "no log line containing {needle:?}: {}",
            tern.proc.stderr_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn no_server_is_503_sc_without_a_server() {
    let syslog = Syslog::bind();
    // Nobody listens on port 1: the check takes the only server down.
    let config = Config::new()
        .server("s1", "127.0.0.1:1", 1)
        .backend("check = { interval = \"100ms\", rise = 1, fall = 1 }");
    let tern = run_logged(&config, &syslog);
    wait_log(&tern, "server is DOWN");
    let (r, _) = raw_get(tern.addr(), "/");
    assert_eq!(r.status(), Some(503));
    let v = syslog.next();
    assert_eq!(v["status"], 503);
    assert_eq!(v["termination"], "SC");
    assert_eq!(v["backend"], "app");
    assert_eq!(v["server"], Value::Null);
    assert_eq!(v["connect_us"], -1);
    assert_eq!(v["response_us"], -1);
    assert_eq!(int(&v, "bytes_out"), r.bytes.len() as i64);
    assert_timers_sane(&v);
    tern.stop_clean();
}

#[test]
fn refused_connects_are_503_sc_with_the_retries() {
    let syslog = Syslog::bind();
    // Nobody listens on port 1: every connect is refused.
    let config = Config::new()
        .server("s1", "127.0.0.1:1", 1)
        .backend("retries = 2");
    let tern = run_logged(&config, &syslog);
    let (r, _) = raw_get(tern.addr(), "/");
    assert_eq!(r.status(), Some(503));
    let v = syslog.next();
    assert_eq!(v["status"], 503);
    assert_eq!(v["termination"], "SC");
    assert_eq!(v["server"], "s1");
    assert_eq!(v["retries"], 2);
    assert_eq!(v["connect_us"], -1);
    assert_timers_sane(&v);
    tern.stop_clean();
}

#[test]
fn server_timeout_is_504_sh() {
    let term = Term::start("s1");
    let syslog = Syslog::bind();
    let config = Config::new()
        .terms(&[&term])
        .backend("timeouts = { server = \"300ms\" }");
    let tern = run_logged(&config, &syslog);
    let (r, _) = raw_get(tern.addr(), "/?t=5000");
    assert_eq!(r.status(), Some(504));
    let v = syslog.next();
    assert_eq!(v["status"], 504);
    assert_eq!(v["termination"], "sH");
    assert_eq!(v["server"], "s1");
    assert_eq!(v["response_us"], -1);
    assert!(int(&v, "connect_us") >= 0, "{v}");
    assert!(int(&v, "active_us") >= 300_000, "{v}");
    assert_timers_sane(&v);
    tern.stop_clean();
}

#[test]
fn client_abort_during_the_response_is_cd() {
    let term = Term::start("s1");
    let syslog = Syslog::bind();
    let tern = run_logged(&Config::new().terms(&[&term]), &syslog);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(b"GET /big?s=256m HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let (got, found) = read_until_contains(&mut s, b"\r\n\r\n", WITHIN);
    assert!(found, "no response head: {}", String::from_utf8_lossy(&got));
    let mut body = [0u8; 65536];
    s.read_exact(&mut body).unwrap();
    // Closing with unread bytes resets the connection: tern's next write fails.
    drop(s);
    let v = syslog.next();
    assert_eq!(v["termination"], "CD");
    assert_eq!(v["status"], 200);
    assert_eq!(v["server"], "s1");
    let out = int(&v, "bytes_out");
    assert!(out > 65536 && out < 256 << 20, "bytes_out={out}");
    assert!(int(&v, "response_us") >= 0, "{v}");
    assert_timers_sane(&v);
    tern.stop_clean();
}

#[test]
fn a_tunnel_is_logged_once_it_ends_with_its_bytes() {
    const UPGRADE: &[u8] = b"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
        Connection: Upgrade\r\n\r\n";
    const SWITCHED: &[u8] =
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    let (addr, backend) = raw_backend(WITHIN, |mut s| {
        let (_, found) = read_until_contains(&mut s, b"\r\n\r\n", WITHIN);
        assert!(found);
        s.write_all(SWITCHED).unwrap();
        s.write_all(b"down!").unwrap();
        // Takes the client's bytes up to its end of stream, then closes too.
        let (got, _) = read_until_contains(&mut s, b"up!", WITHIN);
        assert!(got.ends_with(b"up!"));
        assert!(read_until_closed(&mut s, WITHIN).closed);
    });
    let syslog = Syslog::bind();
    let config = Config::new().server("s1", &addr.to_string(), 1);
    let tern = run_logged(&config, &syslog);
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(UPGRADE).unwrap();
    let (got, found) = read_until_contains(&mut s, b"down!", WITHIN);
    assert!(found, "{}", String::from_utf8_lossy(&got));
    s.write_all(b"up!").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(read_until_closed(&mut s, WITHIN).closed);
    backend.join().unwrap().expect("tern connected");
    let v = syslog.next();
    assert_eq!(v["status"], 101);
    assert_eq!(v["termination"], "--");
    assert_eq!(v["server"], "s1");
    assert_eq!(v["path"], "/ws");
    // The request and the tunnel's bytes: written when the tunnel ended, not at the 101.
    assert_eq!(int(&v, "bytes_in"), (UPGRADE.len() + 3) as i64);
    assert_eq!(int(&v, "bytes_out"), got.len() as i64);
    assert!(int(&v, "response_us") >= 0, "{v}");
    assert_timers_sane(&v);
    tern.stop_clean();
}

#[test]
fn refused_head_and_request_timeout_are_logged_an_empty_connection_is_not() {
    let term = Term::start("s1");
    let syslog = Syslog::bind();
    let config = Config::new()
        .terms(&[&term])
        .frontend("timeouts = { http_request = \"300ms\" }");
    let tern = run_logged(&config, &syslog);

    let r = raw_exchange(tern.addr(), b"GARBAGE\r\n\r\n", WITHIN);
    assert_eq!(r.status(), Some(400));
    let v = syslog.next();
    assert_eq!(v["status"], 400);
    assert_eq!(v["termination"], "PR");
    assert_eq!(v["error"], "bad_request");
    assert_eq!(v["method"], Value::Null);
    assert_eq!(v["backend"], Value::Null);
    assert_eq!(v["server"], Value::Null);
    assert_eq!(v["request_us"], -1);

    // A connection that closes without a byte is not logged: the next line is the 408.
    drop(TcpStream::connect(tern.addr()).unwrap());
    let r = raw_exchange(tern.addr(), b"GET / HTTP/1.1\r\nHost: loc", WITHIN);
    assert_eq!(r.status(), Some(408));
    let v = syslog.next();
    assert_eq!(v["status"], 408);
    assert_eq!(v["termination"], "cR");
    assert_eq!(v["error"], "request_timeout");
    assert!(int(&v, "active_us") >= 300_000, "{v}");
    tern.stop_clean();
}

#[tokio::test]
async fn tls_fields_and_a_failed_handshake() {
    tls_fields_and_a_failed_handshake_with("").await;
}

/// The same with the handshakes on the worker's offload thread, which logs the failure and
/// hands the handshake's fields to the worker with the connection.
#[tokio::test]
async fn tls_fields_and_a_failed_handshake_offloaded() {
    tls_fields_and_a_failed_handshake_with("handshake_offload = true").await;
}

async fn tls_fields_and_a_failed_handshake_with(global: &str) {
    let term = Term::start("s1");
    let syslog = Syslog::bind();
    let dir = temp_dir("access-log-tls");
    let pem = write_cert(&dir, "site", tern_tls::KeyKind::EcdsaP256);
    let config = Config::new()
        .global(global)
        .terms(&[&term])
        .tls(&[&format!("\"{pem}\"")]);
    let tern = Tern::run_in(dir, &format!("{}\n{}", config.toml(), syslog.table()));

    let got = get(tern.addr(), true, "/tls").await;
    assert_eq!(got.status, 200);
    let v = syslog.next();
    assert_eq!(v["status"], 200);
    assert_eq!(v["termination"], "--");
    assert_eq!(v["tls"]["version"], "TLSv1.3");
    assert!(
        v["tls"]["cipher"].as_str().unwrap().starts_with("TLS_"),
        "{v}"
    );
    assert_eq!(v["tls"]["sni"], "localhost");
    assert_eq!(v["tls"]["resumed"], false);
    assert!(int(&v, "handshake_us") > 0, "{v}");
    assert_timers_sane(&v);

    // Plain HTTP on the TLS port: the handshake fails, one line says so.
    let r = raw_exchange(tern.addr(), b"GET / HTTP/1.1\r\n\r\n", WITHIN);
    assert!(r.closed);
    let v = syslog.next();
    assert_eq!(v["error"], "tls_protocol");
    assert_eq!(v["termination"], "CR");
    assert_eq!(v["status"], -1);
    assert_eq!(v["tls"], Value::Null);
    assert!(int(&v, "handshake_us") >= 0, "{v}");
    tern.stop_clean();
}

/// The fields of a text line, split at spaces outside the quoted request.
fn text_fields(line: &str) -> Vec<String> {
    let (before, rest) = line.split_once(" \"").expect(line);
    let (request, after) = rest.split_once("\" ").expect(line);
    let mut fields: Vec<String> = before.split(' ').map(str::to_owned).collect();
    fields.push(request.to_owned());
    fields.extend(after.split(' ').map(str::to_owned));
    fields
}

#[test]
fn text_lines_to_a_file_reopened_by_a_reload() {
    let term = Term::start("s1");
    let dir = temp_dir("access-log-file");
    let log = dir.join("access.log");
    let toml = format!(
        "{}\n[access_log]\ntarget = \"access.log\"\n",
        Config::new().terms(&[&term]).toml()
    );
    let mut tern = Tern::run_in(dir.clone(), &toml);
    let (r, local) = raw_get(tern.addr(), "/one?s=10");
    assert_eq!(r.status(), Some(200));
    let first_len = r.bytes.len();

    // The line is written shortly after the response (by the writer thread).
    let deadline = std::time::Instant::now() + WITHIN;
    while std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count()
        < 1
    {
        assert!(std::time::Instant::now() < deadline, "no line in {log:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Rotation by renaming, then a reload (SIGHUP): the next line goes to a new file.
    let rotated = dir.join("access.log.1");
    std::fs::rename(&log, &rotated).unwrap();
    tern.proc.signal("HUP");
    tern.proc.wait_line("reloaded:");
    let addr = tern.proc.listening().last().unwrap().1;
    let (r, _) = raw_get(addr, "/two");
    assert_eq!(r.status(), Some(200));
    let (status, lines) = tern.proc.stop();
    assert!(status.success());
    assert!(
        lines.contains(&"stats: access_log written=2 dropped=0 failed=0".to_owned()),
        "{lines:?}"
    );

    let old = std::fs::read_to_string(&rotated).unwrap();
    assert_eq!(old.lines().count(), 1, "{old}");
    let f = text_fields(old.lines().next().unwrap());
    // CLIENT [DATE] FRONTEND BACKEND/SERVER TR/Tw/Tc/Tr/Ta STATUS BYTES_OUT BYTES_IN STATE
    // RETRIES "REQUEST" Th/Ti TLS
    assert_eq!(f.len(), 13, "{f:?}");
    assert_eq!(f[0], local.to_string());
    assert!(f[1].starts_with('[') && f[1].ends_with(']'), "{f:?}");
    assert_eq!(f[2], "web");
    assert_eq!(f[3], "app/s1");
    let timers: Vec<i64> = f[4].split('/').map(|t| t.parse().unwrap()).collect();
    assert_eq!(timers.len(), 5, "{f:?}");
    assert!(timers.iter().all(|&t| t >= 0), "{f:?}");
    assert!(timers[..4].iter().sum::<i64>() <= timers[4], "{f:?}");
    assert_eq!(f[5], "200");
    assert_eq!(f[6], first_len.to_string());
    let request = "GET /one?s=10 HTTP/1.1\r\nHost: localhost\r\n\r\n";
    assert_eq!(f[7], request.len().to_string());
    assert_eq!(f[8], "--");
    assert_eq!(f[9], "0");
    assert_eq!(f[10], "GET /one?s=10 HTTP/1.1");
    // Th/Ti of a fresh plain connection: no handshake; Ti is however long the client took to
    // send its first byte after connecting (0 ms here unless the machine is busy).
    let (th, ti) = f[11].split_once('/').unwrap();
    assert_eq!(th, "0", "{f:?}");
    assert!(ti.parse::<u64>().is_ok(), "{f:?}");
    assert_eq!(f[12], "-");
    let new = std::fs::read_to_string(&log).unwrap();
    assert_eq!(new.lines().count(), 1, "{new}");
    assert_eq!(
        text_fields(new.lines().next().unwrap())[10],
        "GET /two HTTP/1.1"
    );
}

#[test]
fn only_the_frontends_listed_log() {
    let term = Term::start("s1");
    let syslog = Syslog::bind();
    let toml = format!(
        "[global]\nworkers = 1\n\n\
         [[frontend]]\nname = \"web\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"app\"\n\n\
         [[frontend]]\nname = \"admin\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"app\"\n\n\
         [[backend]]\nname = \"app\"\nservers = [ {{ name = \"s1\", address = \"{}\" }} ]\n\n\
         {}frontends = [\"web\"]\n",
        term.addr,
        syslog.table()
    );
    let tern = Tern::run(&toml);
    let (web, admin) = (tern.binds[0].1, tern.binds[1].1);
    // The admin request goes first: had it been logged, its line would come first.
    assert_eq!(raw_get(admin, "/admin").0.status(), Some(200));
    assert_eq!(raw_get(web, "/web").0.status(), Some(200));
    let v = syslog.next();
    assert_eq!(v["frontend"], "web");
    assert_eq!(v["path"], "/web");
    tern.stop_clean();
}
