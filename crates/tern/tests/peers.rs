//! Stick tables shared over HAProxy's peers protocol, through the real binary: two tern nodes
//! on loopback share a source-stickiness entry (honoured by the other node within 1 s) and a
//! counter table; garbage on the peer port is refused and counted, a malformed message from a
//! peer is counted and ends its session; a restarted node resyncs from its peer; a reload
//! keeps the tables and an upgraded process learns them back from its peer; a real
//! HAProxy 2.6 peer learns tern's entries and teaches its own; `tern convert` and `tern check`
//! of peers sections.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::others::{free_port, Other};
use support::*;

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(10);

/// A connection to `addr` from source address `from` (any address of 127/8 is local).
fn connect_from(from: &str, addr: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let local = SocketAddr::new(from.parse::<IpAddr>().unwrap(), 0);
    socket.bind(&local.into()).unwrap();
    socket.connect(&addr.into()).unwrap();
    socket.into()
}

/// The server (`x-term-server`) that answers a request from `from` through `addr`.
fn served_by(from: &str, addr: SocketAddr) -> String {
    let mut s = connect_from(from, addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let raw = read_response(&mut s, WAIT);
    assert_eq!(raw.status(), Some(200), "{}", raw.head_text());
    raw.head_value("x-term-server").expect("x-term-server")
}

/// `tern ctl -s SOCKET WORDS...`, which must succeed; its output.
fn ctl(socket: &Path, words: &str) -> String {
    let mut args = vec!["ctl", "-s", socket.to_str().unwrap()];
    args.extend(words.split_whitespace());
    let (code, out, err) = tern_output(&args);
    assert_eq!(code, 0, "`{words}` failed: {out}{err}");
    out
}

/// Polls `f` every 20 ms until it is true, for at most `limit`; whether it became true.
fn within(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A node's configuration: two servers stuck to by source, a counter table tracked by source,
/// both shared with the peers section `fleet` of `peers` (name, address), as `local`.
fn node_toml(local: &str, socket: &Path, terms: &[&Term], peers: &[(&str, SocketAddr)]) -> String {
    let peer_items: Vec<String> = peers
        .iter()
        .map(|(n, a)| format!("{{ name = \"{n}\", address = \"{a}\" }}"))
        .collect();
    let cfg = Config::new()
        .terms(terms)
        .global(&format!(
            "\n[control]\nsocket = {socket:?}\nhttp = \"127.0.0.1:0\""
        ))
        .frontend(
            "http_request = [ { action = \"track-sc0\", key = \"src\", table = \"per_ip\" } ]",
        )
        .backend("stick = { on = \"source\", size = 1024, expire = \"10m\", peers = \"fleet\" }");
    format!(
        "{}\n[[table]]\nname = \"per_ip\"\ntype = \"ip\"\nsize = \"1k\"\nexpire = \"10m\"\n\
         store = [\"http_req_cnt\", \"gpc0\", \"http_req_rate(10s)\"]\npeers = \"fleet\"\n\n\
         [[peers]]\nname = \"fleet\"\nlocal_peer = \"{local}\"\npeer = [\n  {}\n]\n",
        cfg.toml(),
        peer_items.join(",\n  ")
    )
}

struct Node {
    tern: Tern,
    socket: PathBuf,
}

fn start_node(local: &str, terms: &[&Term], peers: &[(&str, SocketAddr)]) -> Node {
    let dir = temp_dir(&format!("peers-{local}"));
    let socket = dir.join("tern.sock");
    let tern = Tern::run_in(dir, &node_toml(local, &socket, terms, peers));
    Node { tern, socket }
}

impl Node {
    fn line_of(&self, peer: &str) -> String {
        let shown = ctl(&self.socket, "show peers");
        shown
            .lines()
            .find(|l| l.starts_with(&format!("{peer} ")))
            .unwrap_or_else(|| panic!("no peer {peer}: {shown}"))
            .to_owned()
    }

    fn connected(&self, peer: &str) -> bool {
        self.line_of(peer).contains("state=connected")
    }

    /// The control API's Prometheus text.
    fn metrics(&self) -> String {
        let line = self
            .tern
            .proc
            .seen
            .iter()
            .find(|l| l.starts_with("control: http "));
        let addr: SocketAddr = line
            .expect("control: http line")
            .trim_start_matches("control: http http://")
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        s.set_read_timeout(Some(WAIT)).unwrap();
        s.read_to_string(&mut text).unwrap();
        text
    }

    fn entry(&self, key: &str) -> String {
        ctl(&self.socket, &format!("show table per_ip key {key}"))
    }
}

#[test]
fn two_tern_nodes_share_stickiness_and_counters() {
    let (s1, s2) = (Term::start("s1"), Term::start("s2"));
    let a_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let b_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    // `c` is a peer nobody runs: the test speaks for it.
    let c_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let fleet = [("a", a_addr), ("b", b_addr), ("c", c_addr)];
    let a = start_node("a", &[&s1, &s2], &fleet);
    let b = start_node("b", &[&s1, &s2], &fleet);
    assert!(within(WAIT, || a.connected("b") && b.connected("a")));

    // Round robin on A: 127.0.0.8 goes to s1, then 127.0.0.9 to s2 and sticks there.
    assert_eq!(served_by("127.0.0.8", a.tern.addr()), "s1");
    let made = Instant::now();
    assert_eq!(served_by("127.0.0.9", a.tern.addr()), "s2");
    // B learns both tables' entries within 1 s.
    let learnt = within(Duration::from_secs(1), || {
        ctl(&b.socket, "show table app key 127.0.0.9")
            .contains("key=127.0.0.9 server_id=2 server_key=s2")
            && b.entry("127.0.0.9")
                .contains("key=127.0.0.9 http_req_cnt=1")
    });
    assert!(
        learnt,
        "B after {:?}: {}",
        made.elapsed(),
        b.entry("127.0.0.9")
    );
    // B's own round robin would start at s1: the learnt entry sends 127.0.0.9 to s2.
    for _ in 0..4 {
        assert_eq!(served_by("127.0.0.9", b.tern.addr()), "s2");
    }
    // B's requests count on A too.
    assert!(
        within(WAIT, || a.entry("127.0.0.9").contains("http_req_cnt=5")),
        "{}",
        a.entry("127.0.0.9")
    );
    let line = b.line_of("a");
    assert!(
        line.contains("updates_received=") && !line.contains("updates_received=0"),
        "{line}"
    );

    // Garbage on A's peer port: answered 501, refused and counted.
    let mut g = TcpStream::connect(a_addr).unwrap();
    g.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut answer = String::new();
    g.set_read_timeout(Some(WAIT)).unwrap();
    let _ = g.read_to_string(&mut answer);
    assert_eq!(answer, "501\n");
    assert!(ctl(&a.socket, "show peers").contains("refused: 1"));

    // A malformed message from peer c: counted in c's errors, and the session ends.
    let mut c = TcpStream::connect(a_addr).unwrap();
    c.write_all(b"HAProxyS 2.1\na\nc 1 0\n").unwrap();
    c.set_read_timeout(Some(WAIT)).unwrap();
    let mut status = [0u8; 4];
    c.read_exact(&mut status).unwrap();
    assert_eq!(&status, b"200\n");
    c.write_all(&[10, 130, 3, 0xFF, 0xFF, 0xFF]).unwrap();
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
    assert!(
        within(WAIT, || a.line_of("c").contains("errors=1")),
        "{}",
        a.line_of("c")
    );
    assert!(a.tern.proc.stderr_text().contains("malformed message"));
    let metrics = a.metrics();
    for needle in [
        "tern_peer_connected{peers=\"fleet\",peer=\"b\"} 1",
        "tern_peer_errors_total{peers=\"fleet\",peer=\"c\"} 1",
        "tern_peers_refused_total{peers=\"fleet\"} 1",
        "tern_peer_updates_sent_total{peers=\"fleet\",peer=\"b\"}",
    ] {
        assert!(metrics.contains(needle), "{needle} not in {metrics}");
    }

    // B restarts empty and resyncs from A.
    drop(b);
    let b = start_node("b", &[&s1, &s2], &fleet);
    assert!(
        within(WAIT, || b.entry("127.0.0.9").contains("http_req_cnt=5")),
        "{}",
        b.entry("127.0.0.9")
    );
    assert_eq!(served_by("127.0.0.9", b.tern.addr()), "s2");
    let tables = ctl(&b.socket, "show table");
    assert!(
        tables.contains("# table: app, type: ip, size: 1024, used: 2"),
        "{tables}"
    );
    assert!(
        tables.contains("# table: per_ip, type: ip, size: 1024, used: 2"),
        "{tables}"
    );
}

/// `cmd` on HAProxy's runtime socket; its answer.
fn haproxy_cmd(socket: &Path, cmd: &str) -> String {
    let mut s = std::os::unix::net::UnixStream::connect(socket).unwrap();
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn a_haproxy_peer_learns_from_tern_and_teaches_it() {
    if !have("haproxy") {
        panic!("haproxy is needed (.ci/run installs it)");
    }
    let (s1, s2) = (Term::start("s1"), Term::start("s2"));
    let tern_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let (ha_peer, ha_front) = (free_port(), free_port());
    let ha_addr: SocketAddr = format!("127.0.0.1:{ha_peer}").parse().unwrap();
    let fleet = [("tern", tern_addr), ("haproxy", ha_addr)];
    let node = start_node("tern", &[&s1, &s2], &fleet);
    // Made on tern before HAProxy runs: HAProxy gets it when their session starts (tern sends
    // every entry then, and answers the resync HAProxy asks for at start).
    assert_eq!(served_by("127.0.0.7", node.tern.addr()), "s1");
    let dir = temp_dir("peers-haproxy");
    let ha_socket = dir.join("haproxy.sock");
    let cfg = format!(
        "global\n    stats socket {} level admin\n    localpeer haproxy\n\
         peers fleet\n    peer haproxy {ha_addr}\n    peer tern {tern_addr}\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend web\n    bind 127.0.0.1:{ha_front}\n    http-request track-sc0 src table per_ip\n    default_backend app\n\
         backend per_ip\n    stick-table type ip size 1k expire 10m peers fleet store http_req_cnt,gpc0,http_req_rate(10s)\n\
         backend app\n    stick-table type ip size 1k expire 10m peers fleet\n    stick on src\n\
         \x20   server s1 {}\n    server s2 {}\n",
        ha_socket.display(),
        s1.addr,
        s2.addr
    );
    let haproxy = Other::haproxy(&dir, &cfg, &[ha_front, ha_peer]);
    assert!(
        within(WAIT, || node.connected("haproxy")),
        "{}",
        haproxy.log_text()
    );
    let ha_front: SocketAddr = format!("127.0.0.1:{ha_front}").parse().unwrap();

    let resynced = within(WAIT, || {
        haproxy_cmd(&ha_socket, "show table app").contains("key=127.0.0.7 use=0 exp=")
    });
    assert!(resynced, "{}", haproxy_cmd(&ha_socket, "show table app"));
    assert_eq!(served_by("127.0.0.7", ha_front), "s1");

    // Learnt on HAProxy, visible on tern: 127.0.0.9 sticks to s2 there.
    assert_eq!(served_by("127.0.0.8", ha_front), "s1");
    assert_eq!(served_by("127.0.0.9", ha_front), "s2");
    assert!(
        within(WAIT, || node
            .entry("127.0.0.9")
            .contains("key=127.0.0.9 http_req_cnt=1")),
        "{}",
        node.entry("127.0.0.9")
    );
    let app = ctl(&node.socket, "show table app key 127.0.0.9");
    assert!(
        app.contains("key=127.0.0.9 server_id=2 server_key=s2"),
        "{app}"
    );
    for _ in 0..3 {
        assert_eq!(served_by("127.0.0.9", node.tern.addr()), "s2");
    }

    // Made on tern, visible on HAProxy: a new client's server and its counters.
    let server = served_by("127.0.0.10", node.tern.addr());
    let learnt = within(WAIT, || {
        let app = haproxy_cmd(&ha_socket, "show table app");
        let per_ip = haproxy_cmd(&ha_socket, "show table per_ip");
        app.contains("key=127.0.0.10 use=0")
            && app.contains(&format!("server_key={server}"))
            && per_ip.contains("key=127.0.0.10")
            && per_ip.contains("http_req_cnt=1")
    });
    assert!(
        learnt,
        "{}\n{}\n{}\n{}",
        haproxy_cmd(&ha_socket, "show table app"),
        haproxy_cmd(&ha_socket, "show peers"),
        ctl(&node.socket, "show peers"),
        node.tern.proc.stderr_text()
    );
    // tern's counts of 127.0.0.9 (4 requests in all) reached HAProxy too.
    assert!(within(WAIT, || haproxy_cmd(
        &ha_socket,
        "show table per_ip"
    )
    .contains("http_req_cnt=4")));
    assert_eq!(served_by("127.0.0.10", ha_front), server);
    let peers = haproxy_cmd(&ha_socket, "show peers");
    assert!(peers.contains("proto_err=0"), "{peers}");
    assert!(node.line_of("haproxy").contains("errors=0"));
}

#[test]
fn a_reload_keeps_the_tables_and_an_upgrade_learns_them_back() {
    let (s1, s2) = (Term::start("s1"), Term::start("s2"));
    let a_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let b_addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let fleet = [("a", a_addr), ("b", b_addr)];
    let mut a = start_node("a", &[&s1, &s2], &fleet);
    let b = start_node("b", &[&s1, &s2], &fleet);
    assert_eq!(served_by("127.0.0.8", a.tern.addr()), "s1");
    assert_eq!(served_by("127.0.0.9", a.tern.addr()), "s2");

    // The new generation takes the old one's entries, then shares its own.
    let toml = std::fs::read_to_string(a.tern.dir.join("tern.toml")).unwrap();
    a.tern.reload(&toml);
    assert!(
        a.entry("127.0.0.9")
            .contains("key=127.0.0.9 http_req_cnt=1"),
        "{}",
        a.entry("127.0.0.9")
    );
    assert_eq!(served_by("127.0.0.9", a.tern.addr()), "s2");
    assert!(
        within(WAIT, || a.connected("b") && b.connected("a")),
        "{}",
        a.line_of("b")
    );
    assert_eq!(served_by("127.0.0.10", a.tern.addr()), "s1");
    assert!(
        within(WAIT, || b.entry("127.0.0.10").contains("http_req_cnt=1")),
        "{}",
        b.entry("127.0.0.10")
    );
    assert_eq!(served_by("127.0.0.10", b.tern.addr()), "s1");

    // An upgrade: the new process starts empty, listens once the old one let the port go, and
    // learns the entries back from B.
    let old = a.tern.proc.pid();
    a.tern.proc.signal("USR2");
    let line = a.tern.proc.wait_line("upgraded:");
    let new: i32 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    let mut stray = Stray(Some(nix::unistd::Pid::from_raw(new)));
    let learnt = within(WAIT, || {
        a.entry("127.0.0.10").contains("http_req_cnt=2")
            && a.entry("127.0.0.9").contains("http_req_cnt=2")
    });
    assert!(learnt, "{}", ctl(&a.socket, "show table per_ip"));
    assert_ne!(new, i32::try_from(old).unwrap());
    assert_eq!(served_by("127.0.0.9", a.tern.addr()), "s2");
    stray.stop();
}

#[test]
fn a_node_alone_keeps_its_tables_through_an_upgrade() {
    // No other peer to learn from: the entries come from the old process, in the handover.
    let (s1, s2) = (Term::start("s1"), Term::start("s2"));
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let a = start_node("solo", &[&s1, &s2], &[("solo", addr)]);
    assert_eq!(served_by("127.0.0.8", a.tern.addr()), "s1");
    assert_eq!(served_by("127.0.0.9", a.tern.addr()), "s2");
    a.tern.proc.signal("USR2");
    let mut a = a;
    let line = a.tern.proc.wait_line("upgraded:");
    let new: i32 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    let mut stray = Stray(Some(nix::unistd::Pid::from_raw(new)));
    // Once the old process is gone, the control socket is the new one's.
    a.tern.proc.wait_exit(WAIT);
    let kept = a.entry("127.0.0.9");
    assert!(kept.contains("key=127.0.0.9 http_req_cnt=1"), "{kept}");
    // The rate crosses too (as the peers protocol sends it), not only the counts.
    assert!(kept.contains("http_req_rate(10000)=1"), "{kept}");
    let sticks = ctl(&a.socket, "show table app");
    assert!(
        sticks.contains("127.0.0.9") && sticks.contains("s2"),
        "{sticks}"
    );
    // Round robin would send 127.0.0.9 to s1 next; its entry keeps it on s2.
    assert_eq!(served_by("127.0.0.9", a.tern.addr()), "s2");
    stray.stop();
}

/// A process the test did not start (the one an upgrade started): stopped when the test ends,
/// passed or not.
struct Stray(Option<nix::unistd::Pid>);

impl Stray {
    fn stop(&mut self) {
        if let Some(pid) = self.0.take() {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            assert!(within(WAIT, || nix::sys::signal::kill(pid, None).is_err()));
        }
    }
}

impl Drop for Stray {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take() {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

#[test]
fn convert_translates_peers_and_check_names_mistakes_with_their_lines() {
    let dir = temp_dir("peers-config");
    let cfg = "global\n    localpeer lb1\n\
               peers fleet\n    bind 127.0.0.1:10000\n    server lb1\n    server lb2 127.0.0.2:10000\n\
               defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
               frontend web\n    bind 127.0.0.1:8080\n    default_backend app\n\
               backend app\n    stick-table type ip size 1k expire 30m peers fleet\n    stick on src\n\
               \x20   server s1 127.0.0.1:9001\n";
    let path = dir.join("fleet.cfg");
    std::fs::write(&path, cfg).unwrap();
    let out = tern_finish(&["convert", path.to_str().unwrap()], WAIT);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for needle in [
        "[[peers]]",
        "name = \"fleet\"",
        "bind = \"127.0.0.1:10000\"",
        "local_peer = \"lb1\"",
        "{ name = \"lb2\", address = \"127.0.0.2:10000\" }",
        "peers = \"fleet\" }",
    ] {
        assert!(
            out.stdout.contains(needle),
            "{needle:?} not in:\n{}",
            out.stdout
        );
    }
    let ok = tern_finish(&["check", "-c", path.to_str().unwrap()], WAIT);
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);

    // A table naming an unknown section, a local peer not listed: file and line of each.
    let bad = cfg
        .replace("localpeer lb1", "localpeer lb9")
        .replace("peers fleet\n    stick on", "peers nope\n    stick on");
    let path = dir.join("bad.cfg");
    std::fs::write(&path, &bad).unwrap();
    let out = tern_finish(&["check", "-c", path.to_str().unwrap()], WAIT);
    assert_ne!(out.code, Some(0));
    let text = out.stdout + &out.stderr;
    assert!(
        text.contains("bad.cfg:2: peers fleet: local_peer: local_peer `lb9` is not a peer"),
        "{text}"
    );
    assert!(
        text.contains("bad.cfg:17: backend app: stick.peers: unknown peers section `nope`"),
        "{text}"
    );

    let toml = "[[frontend]]\nname = \"web\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"app\"\n\n\
                [[backend]]\nname = \"app\"\nservers = [{ name = \"s1\", address = \"127.0.0.1:1\" }]\n\n\
                [[table]]\nname = \"t\"\ntype = \"ip\"\nsize = 10\nexpire = \"1m\"\nstore = [\"gpc0\"]\npeers = \"fleet\"\n";
    let path = dir.join("bad.toml");
    std::fs::write(&path, toml).unwrap();
    let out = tern_finish(&["check", "-c", path.to_str().unwrap()], WAIT);
    let text = out.stdout + &out.stderr;
    assert!(
        text.contains("bad.toml:16: table[0].peers: unknown peers section `fleet`: the configuration declares no [[peers]]"),
        "{text}"
    );
}
