//! TCP mode (`mode = "tcp"`) through the real binary: bytes relayed whole, TLS terminated
//! (stunnel's job) or not, re-encrypted to TLS servers; half-closes and resets passed on;
//! balancing, retries, the access log's `tcplog` line, counters, a graceful stop; and a real
//! non-HTTP protocol behind tern: Debian's `redis-server`, driven with `redis-cli --tls` and
//! `redis-benchmark --tls` (the Redis tests are skipped with a message where Redis is not
//! installed; `.ci/run` installs it).
//!
//! Servers are small threads on loopback (echo, a greeter that closes first, one that resets)
//! or processes started here on ephemeral ports; every wait is bounded.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// Longest wait for anything in these tests.
const WAIT: Duration = Duration::from_secs(10);

/// A TCP frontend `web` (binds as raw TOML items, extra frontend lines) routing to a TCP
/// backend `app` with these servers (raw TOML items) and extra backend lines.
fn tcp_config(binds: &str, frontend: &[&str], servers: &[String], backend: &[&str]) -> String {
    format!(
        "[global]\nworkers = 1\n\n[[frontend]]\nname = \"web\"\nmode = \"tcp\"\nbind = [{binds}]\n\
         default_backend = \"app\"\n{}\n\n[[backend]]\nname = \"app\"\nmode = \"tcp\"\n{}\n\
         servers = [\n  {}\n]\n",
        frontend.join("\n"),
        backend.join("\n"),
        servers.join(",\n  ")
    )
}

fn server(name: &str, addr: SocketAddr) -> String {
    format!("{{ name = \"{name}\", address = \"{addr}\" }}")
}

/// Serves each accepted connection with `serve` on a thread of its own.
fn listen<F>(serve: F) -> SocketAddr
where
    F: Fn(TcpStream) + Send + Sync + Clone + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for conn in listener.incoming().map_while(Result::ok) {
            let serve = serve.clone();
            thread::spawn(move || {
                let _ = conn.set_read_timeout(Some(WAIT));
                serve(conn);
            });
        }
    });
    addr
}

/// An echo server: writes back what it reads; at end of stream, shuts down its sending side.
fn echo_server() -> SocketAddr {
    listen(|mut conn| {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n @ 1..) = conn.read(&mut buf) {
            if conn.write_all(&buf[..n]).is_err() {
                return;
            }
        }
        let _ = conn.shutdown(Shutdown::Write);
    })
}

/// A server that writes its name and closes.
fn name_server(name: &'static str) -> SocketAddr {
    listen(move |mut conn| {
        let _ = conn.write_all(name.as_bytes());
    })
}

/// An address nothing listens on (bound, then released).
fn closed_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// Everything `s` sends until it closes (bounded by `WAIT`).
fn read_all(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    s.set_read_timeout(Some(WAIT))?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    Ok(out)
}

#[test]
fn plain_bytes_go_both_ways_and_a_client_half_close_reaches_the_server() {
    let echo = echo_server();
    let tern = Tern::run(&tcp_config(
        "\"127.0.0.1:0\"",
        &[],
        &[server("e", echo)],
        &[],
    ));
    let mut c = TcpStream::connect(tern.addr()).unwrap();
    // Not HTTP: tern must not care.
    let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let writer = {
        let mut c = c.try_clone().unwrap();
        let payload = payload.clone();
        thread::spawn(move || {
            c.write_all(&payload).unwrap();
            // The half-close: the echo server sees the end of stream only if tern passes it
            // on, and only then closes its side, which ends our read.
            c.shutdown(Shutdown::Write).unwrap();
        })
    };
    let got = read_all(&mut c).unwrap();
    writer.join().unwrap();
    assert_eq!(got.len(), payload.len());
    assert!(got == payload, "the bytes came back changed");
    drop(c);
    let counters = tern.stop();
    assert_eq!(counters.get("frontend web", "tcp_sessions"), 1);
    assert_eq!(counters.get("frontend web", "requests"), 0);
    assert_eq!(counters.get("frontend web", "bytes_in"), 200_000);
    assert_eq!(counters.get("frontend web", "bytes_out"), 200_000);
    assert_eq!(counters.get("backend app", "tcp_sessions"), 1);
    assert_eq!(counters.get("server app/e", "tcp_sessions"), 1);
}

#[test]
fn a_server_half_close_reaches_the_client_while_the_client_still_sends() {
    // The server greets, closes its sending side, then reads what the client sends to the end.
    let (tx, rx) = mpsc::channel();
    let greeter = listen(move |mut conn| {
        conn.write_all(b"220 hello\r\n").unwrap();
        conn.shutdown(Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = conn.read_to_end(&mut rest);
        let _ = tx.clone().send(rest);
    });
    let tern = Tern::run(&tcp_config(
        "\"127.0.0.1:0\"",
        &[],
        &[server("g", greeter)],
        &[],
    ));
    let mut c = TcpStream::connect(tern.addr()).unwrap();
    assert_eq!(read_all(&mut c).unwrap(), b"220 hello\r\n");
    // Our receiving side is closed; our sending side still works through tern.
    c.write_all(b"QUIT after the close\r\n").unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let rest = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(rest, b"QUIT after the close\r\n");
}

#[test]
fn a_server_reset_reaches_the_client_as_a_reset() {
    // Reads one byte, then closes with the rest unread: the kernel answers with a reset.
    let resetter = listen(|mut conn| {
        let mut one = [0u8; 1];
        let _ = conn.read_exact(&mut one);
        thread::sleep(Duration::from_millis(50));
    });
    let tern = Tern::run(&tcp_config(
        "\"127.0.0.1:0\"",
        &[],
        &[server("r", resetter)],
        &[],
    ));
    let mut c = TcpStream::connect(tern.addr()).unwrap();
    c.write_all(b"0123456789").unwrap();
    let got = read_all(&mut c);
    match got {
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}"),
        Ok(bytes) => panic!(
            "a clean end of stream ({} bytes) instead of a reset",
            bytes.len()
        ),
    }
    let counters = tern.stop();
    assert_eq!(counters.get("backend app", "aborted_responses"), 1);
}

#[test]
fn connections_are_balanced_over_servers_and_source_hashing_sticks() {
    let (a, b) = (name_server("a"), name_server("b"));
    let servers = [server("a", a), server("b", b)];
    let tern = Tern::run(&tcp_config("\"127.0.0.1:0\"", &[], &servers, &[]));
    let names: Vec<Vec<u8>> = (0..10)
        .map(|_| read_all(&mut TcpStream::connect(tern.addr()).unwrap()).unwrap())
        .collect();
    let count = |n: &[u8]| names.iter().filter(|got| got.as_slice() == n).count();
    assert_eq!((count(b"a"), count(b"b")), (5, 5), "{names:?}");
    drop(tern);

    let hashed = tcp_config("\"127.0.0.1:0\"", &[], &servers, &["balance = \"source\""]);
    let tern = Tern::run(&hashed);
    let first = read_all(&mut TcpStream::connect(tern.addr()).unwrap()).unwrap();
    for _ in 0..5 {
        let again = read_all(&mut TcpStream::connect(tern.addr()).unwrap()).unwrap();
        assert_eq!(again, first, "one source, one server");
    }
}

#[test]
fn a_refused_connect_is_retried_on_another_server() {
    let up = name_server("up");
    let servers = [server("down", closed_port()), server("up", up)];
    let backend = ["retries = 2", "redispatch = true"];
    let tern = Tern::run(&tcp_config("\"127.0.0.1:0\"", &[], &servers, &backend));
    for _ in 0..6 {
        let got = read_all(&mut TcpStream::connect(tern.addr()).unwrap()).unwrap();
        assert_eq!(got, b"up");
    }
    let counters = tern.stop();
    assert!(counters.get("backend app", "connect_errors") >= 1);
    assert_eq!(
        counters.get("backend app", "redispatches"),
        counters.get("backend app", "connect_errors")
    );
    assert_eq!(counters.get("server app/up", "tcp_sessions"), 6);
}

#[test]
fn no_server_closes_the_client_connection_and_logs_a_tcplog_line() {
    let dir = temp_dir("tcp-log");
    let config = format!(
        "{}\n[access_log]\ntarget = \"access.log\"\n",
        tcp_config(
            "\"127.0.0.1:0\"",
            &[],
            &[server("down", closed_port())],
            &["retries = 1"]
        )
    );
    let tern = Tern::run_in(dir.clone(), &config);
    let got = read_all(&mut TcpStream::connect(tern.addr()).unwrap()).unwrap_or_default();
    assert!(got.is_empty(), "{got:?}");
    let counters = tern.stop();
    assert_eq!(counters.get("backend app", "no_server"), 1);
    assert_eq!(counters.get("backend app", "retries"), 1);
    let log = std::fs::read_to_string(dir.join("access.log")).unwrap();
    let line = log.lines().next().unwrap_or_default();
    // CLIENT [DATE] FRONTEND BACKEND/SERVER Tw/Tc/Tt BYTES_OUT BYTES_IN STATE [+]RETRIES Th
    // TLS; the retry went to the same, only, server (`+`: redispatch was allowed).
    let f: Vec<&str> = line.split(' ').collect();
    assert_eq!(f.len(), 11, "{line}");
    assert_eq!((f[2], f[3]), ("web", "app/down"), "{line}");
    assert!(
        f[4].split('/').nth(1) == Some("-1"),
        "no connection, no Tc: {line}"
    );
    assert_eq!((f[5], f[6], f[7], f[8]), ("0", "0", "SC", "+1"), "{line}");
    assert_eq!(f[10], "-", "{line}");
}

#[test]
fn a_graceful_stop_lets_an_established_session_finish() {
    let echo = echo_server();
    // An HTTP frontend beside the TCP one: its idle keep-alive connection is closed at once by
    // a stop, which tells when the worker is stopping.
    let http = format!(
        "\n[[frontend]]\nname = \"probe\"\nbind = [\"127.0.0.1:0\"]\nmonitor_uri = \"/up\"\n\
         default_backend = \"http\"\n\n[[backend]]\nname = \"http\"\n\
         servers = [ {} ]\n",
        server("none", closed_port())
    );
    let config = tcp_config("\"127.0.0.1:0\"", &[], &[server("e", echo)], &[])
        .replace("workers = 1", "workers = 1\ngrace = \"30s\"")
        + &http;
    let tern = Tern::run(&config);
    let mut c = TcpStream::connect(tern.addr()).unwrap();
    c.set_read_timeout(Some(WAIT)).unwrap();
    c.write_all(b"before").unwrap();
    let mut buf = [0u8; 6];
    c.read_exact(&mut buf).unwrap();
    let mut idle = TcpStream::connect(tern.binds[1].1).unwrap();
    idle.write_all(b"GET /up HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut idle, WAIT).status(), Some(200));
    tern.proc.signal("TERM");
    assert!(read_until_closed(&mut idle, WAIT).closed);
    // Stopping, and the session still carries bytes both ways...
    c.write_all(b"after!").unwrap();
    c.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"after!");
    // ...and tern exits once it ended, long before the grace period is over.
    let closed = Instant::now();
    drop(c);
    let (status, lines) = tern.proc.stop();
    assert!(status.success());
    assert!(
        closed.elapsed() < WAIT,
        "tern waited {:?}",
        closed.elapsed()
    );
    let counters = Counters::parse(&lines);
    assert_eq!(counters.get("frontend web", "bytes_out"), 12);
}

#[test]
fn a_haproxy_cfg_in_mode_tcp_runs() {
    let echo = echo_server();
    let dir = temp_dir("tcp-cfg");
    let cfg = format!(
        "global\n  nbthread 1\ndefaults\n  mode tcp\n  timeout client 10s\n  timeout server 10s\n\
         timeout connect 2s\nlisten echo\n  bind 127.0.0.1:0\n  balance roundrobin\n\
         server e {echo} check inter 1s\n"
    );
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg).unwrap();
    let mut proc = Proc::spawn(&["run", "-c", path.to_str().unwrap()], &dir);
    proc.wait_line("ready:");
    let addr = proc.listening()[0].1;
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(b"not http at all\x00\xff").unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    assert_eq!(read_all(&mut c).unwrap(), b"not http at all\x00\xff");
}

/// A first request from a client with Nagle on, through TLS terminated in TCP mode, is not
/// held back by the delayed ACK of its Finished (issue 19's check, in TCP mode).
#[test]
fn a_nagle_client_gets_its_first_bytes_at_once_through_tls() {
    if !have("python3") {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let term = Term::start("s1");
    let dir = temp_dir("tcp-nagle");
    let cert = write_cert(&dir, "c", KeyKind::EcdsaP256);
    let binds = format!("{{ address = \"127.0.0.1:0\", tls = {{ certs = [\"{cert}\"] }} }}");
    let tern = Tern::run_in(
        dir,
        &tcp_config(&binds, &[], &[server("t", term.addr)], &[]),
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/clients/nagle_first_response.py"
    );
    let addr = tern.addr();
    let out = Command::new("python3")
        .args([
            script,
            &addr.ip().to_string(),
            &addr.port().to_string(),
            "20",
            "tls13",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut times: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(',')
        .map(|t| t.parse().unwrap())
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    assert!(
        median < 10.0,
        "median first response {median} ms: {times:?}"
    );
}

/// A `redis-server` on a free loopback port, killed on drop.
struct Redis {
    child: Child,
    port: u16,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Redis {
    /// Starts `redis-server` with `extra` arguments, plain on a free port unless `tls` names the
    /// certificate and key (then TLS only).
    fn start(dir: &Path, tls: Option<(&str, &str)>) -> Redis {
        let port = closed_port().port().to_string();
        let mut args = vec!["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
        let dir_arg = dir.to_str().unwrap();
        args.extend(["--dir", dir_arg]);
        match tls {
            None => args.extend(["--port", &port]),
            Some((cert, key)) => args.extend([
                "--port",
                "0",
                "--tls-port",
                &port,
                "--tls-cert-file",
                cert,
                "--tls-key-file",
                key,
                "--tls-auth-clients",
                "no",
            ]),
        }
        let child = Command::new("redis-server")
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let port: u16 = port.parse().unwrap();
        let deadline = Instant::now() + WAIT;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on {port}"
            );
            thread::sleep(Duration::from_millis(20));
        }
        Redis { child, port }
    }

    fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

/// `redis-cli --tls` through `addr`, trusting `ca`; its stdout.
fn redis_cli(addr: SocketAddr, ca: &str, command: &[&str]) -> String {
    let port = addr.port().to_string();
    let out = Command::new("redis-cli")
        .args(["--tls", "--cacert", ca, "-h", "127.0.0.1", "-p", &port])
        .args(command)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn have_redis() -> bool {
    let ok = have("redis-server") && have("redis-cli") && have("redis-benchmark");
    if !ok {
        eprintln!("skipped: redis-server, redis-cli or redis-benchmark is not installed");
    }
    ok
}

/// TLS terminated by tern, plain TCP to Redis: stunnel's and hitch's job.
#[test]
fn redis_cli_and_redis_benchmark_over_tls_terminated_by_tern() {
    if !have_redis() {
        return;
    }
    let dir = temp_dir("tcp-redis");
    let redis = Redis::start(&dir, None);
    let cert = write_cert(&dir, "c", KeyKind::EcdsaP256);
    let ca = dir.join("c.crt").to_str().unwrap().to_owned();
    let binds = format!("{{ address = \"127.0.0.1:0\", tls = {{ certs = [\"{cert}\"] }} }}");
    let tern = Tern::run_in(
        dir,
        &tcp_config(&binds, &[], &[server("r", redis.addr())], &[]),
    );
    assert_eq!(
        redis_cli(tern.addr(), &ca, &["SET", "tern", "tcp-mode"]),
        "OK"
    );
    assert_eq!(redis_cli(tern.addr(), &ca, &["GET", "tern"]), "tcp-mode");
    let port = tern.addr().port().to_string();
    let bench = Command::new("redis-benchmark")
        .args(["--tls", "--cacert", &ca, "-h", "127.0.0.1", "-p", &port])
        .args(["-n", "2000", "-c", "10", "-t", "set,get", "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&bench.stdout);
    assert!(
        bench.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&bench.stderr)
    );
    assert!(text.contains("SET:") && text.contains("GET:"), "{text}");
    let counters = tern.stop();
    assert!(counters.get("frontend web", "tcp_sessions") >= 12);
    assert!(counters.get("frontend web", "tls_full") >= 1);
}

/// TLS terminated by tern and re-encrypted to a Redis that speaks only TLS.
#[test]
fn redis_behind_tls_on_both_sides() {
    if !have_redis() {
        return;
    }
    let dir = temp_dir("tcp-redis-tls");
    write_cert(&dir, "server", KeyKind::EcdsaP256);
    let (crt, key) = (dir.join("server.crt"), dir.join("server.key"));
    let redis = Redis::start(&dir, Some((crt.to_str().unwrap(), key.to_str().unwrap())));
    let front = write_cert(&dir, "front", KeyKind::EcdsaP256);
    let ca = dir.join("front.crt").to_str().unwrap().to_owned();
    let binds = format!("{{ address = \"127.0.0.1:0\", tls = {{ certs = [\"{front}\"] }} }}");
    let upstream = format!(
        "{{ name = \"r\", address = \"{}\", tls = {{ ca = \"{}\", sni = \"localhost\" }} }}",
        redis.addr(),
        crt.display()
    );
    let tern = Tern::run_in(dir, &tcp_config(&binds, &[], &[upstream], &[]));
    assert_eq!(redis_cli(tern.addr(), &ca, &["PING"]), "PONG");
    assert_eq!(
        redis_cli(tern.addr(), &ca, &["ECHO", "re-encrypted"]),
        "re-encrypted"
    );
    let counters = tern.stop();
    assert_eq!(counters.get("server app/r", "connect_errors"), 0);
    assert_eq!(counters.get("server app/r", "tcp_sessions"), 2);
}
