//! Slow and abusive clients against the real binary (issue 19): slowloris (many connections
//! dribbling a request head), slow readers (a large response nobody reads: zero window), TLS
//! clients that stall after their ClientHello, and idle keep-alive hoarding. For each: every
//! abusive connection is closed by the timeout configured for it (not earlier, and not kept
//! alive by the bytes it dribbles), counted, a well-behaved client is served meanwhile, tern's
//! file descriptors come back to where they were, and its memory per abusive connection (from
//! `/proc` RSS, printed) stays under a generous bound.
//!
//! How many connections: up to 2000 where this process may open that many descriptors (each
//! costs one here and one in tern), fewer otherwise. Timeouts are 3 s so a test takes seconds;
//! every wait has a deadline well above it, so a loaded machine slows a test down without
//! failing it. File descriptor exhaustion is in `fd_exhaustion.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// The timeout under test, whichever it is.
const TIMEOUT: Duration = Duration::from_secs(3);
/// How long after its timeout a connection may still be open (a loaded machine).
const SLACK: Duration = Duration::from_secs(12);
/// A bound on the memory one abusive connection may cost tern (its buffers are 16 and 32 KiB,
/// allocated only while in use); the measured figure is printed.
const MAX_BYTES_PER_CONN: u64 = 96 * 1024;

/// How many abusive connections one test can afford: at most `want`, and a quarter of this
/// process's descriptors (the four tests may run at once), less 200 for everything else.
fn affordable(want: usize) -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1024);
    want.min(soft.saturating_sub(200) / 4).max(50)
}

fn tern_with(term: &Term, timeouts: &str, tls_dir: Option<&std::path::Path>) -> Tern {
    let dir = tls_dir.map_or_else(|| temp_dir("slow"), std::path::Path::to_path_buf);
    // Idle server connections are closed soon, so tern's descriptors come back to where they
    // were once the abusive clients are gone.
    let mut cfg = Config::new()
        .terms(&[term])
        .frontend(&format!("timeouts = {{ {timeouts} }}"))
        .backend("pool = { idle_timeout = \"1s\" }");
    if tls_dir.is_some() {
        let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
        cfg = cfg.tls(&[&format!("\"{cert}\"")]);
    }
    Tern::run_in(dir, &cfg.toml())
}

/// A well-behaved request on a fresh plain connection, answered 200 within a generous bound.
fn served(addr: SocketAddr) -> Duration {
    let start = Instant::now();
    let r = raw_exchange(
        addr,
        b"GET /?s=1k HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        Duration::from_secs(10),
    );
    assert_eq!(
        r.status(),
        Some(200),
        "a well-behaved client was not served"
    );
    start.elapsed()
}

/// Tern's resident memory in bytes.
fn rss(tern: &Tern) -> u64 {
    tern.proc_status_kb("VmRSS") * 1024
}

/// Prints and bounds the memory `n` connections added to tern's resident set.
fn per_connection(what: &str, before: u64, during: u64, n: usize) {
    let each = during.saturating_sub(before) / n as u64;
    eprintln!("{what}: {n} connections, tern RSS {before} -> {during} bytes, {each} bytes each");
    assert!(
        each <= MAX_BYTES_PER_CONN,
        "{what}: {each} bytes per connection"
    );
}

/// Waits until tern has at most `fds` descriptors open; returns when it did, or fails.
fn fds_back_to(tern: &Tern, fds: usize, limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        let now = tern.open_fds();
        if now <= fds {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < limit,
            "tern still has {now} descriptors open (was {fds}) after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The bytes tern's sockets with local port `port` have sent or queued and not had
/// acknowledged (`tx_queue` of /proc/net/tcp, for the sockets among tern's descriptors).
fn send_queues(tern: &Tern, port: u16) -> u64 {
    let inodes: std::collections::HashSet<String> =
        std::fs::read_dir(format!("/proc/{}/fd", tern.proc.pid()))
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .filter_map(|link| {
                let link = link.to_string_lossy().into_owned();
                Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
            })
            .collect();
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let local_port = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (local, queues, inode) = (f.get(1)?, f.get(4)?, f.get(9)?);
            if !local.ends_with(&local_port) || !inodes.contains(*inode) {
                return None;
            }
            u64::from_str_radix(queues.split(':').next()?, 16).ok()
        })
        .sum()
}

/// One abusive connection: when it was opened, and when tern closed it.
struct Conn {
    s: TcpStream,
    opened: Instant,
    closed: Option<Instant>,
    got: Vec<u8>,
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).unwrap();
        s.set_nonblocking(true).unwrap();
        Conn {
            s,
            opened: Instant::now(),
            closed: None,
            got: Vec::new(),
        }
    }

    /// Writes `bytes` if still open (a refused write means tern closed it).
    fn send(&mut self, bytes: &[u8]) {
        if self.closed.is_none() && self.s.write(bytes).is_err() {
            self.closed = Some(Instant::now());
        }
    }

    /// Reads what arrived; notes when tern closed the connection.
    fn poll(&mut self) {
        let mut buf = [0u8; 4096];
        while self.closed.is_none() {
            match self.s.read(&mut buf) {
                Ok(0) => self.closed = Some(Instant::now()),
                Ok(n) => self.got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => self.closed = Some(Instant::now()),
            }
        }
    }

    /// How long the connection lived.
    fn lived(&self) -> Duration {
        self.closed.map_or(Duration::MAX, |c| c - self.opened)
    }
}

/// Polls `conns` (calling `each` on the open ones every 500 ms) until all are closed.
fn until_all_closed(conns: &mut [Conn], limit: Duration, mut each: impl FnMut(&mut Conn)) {
    let start = Instant::now();
    loop {
        let mut open = 0;
        for c in conns.iter_mut() {
            c.poll();
            if c.closed.is_none() {
                each(c);
                open += 1;
            }
        }
        if open == 0 {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{open} of {} connections still open after {limit:?}",
            conns.len()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Checks every connection lived at least the timeout and at most the timeout and the slack.
fn all_lived_their_timeout(what: &str, conns: &[Conn]) {
    let shortest = conns.iter().map(Conn::lived).min().unwrap();
    let longest = conns.iter().map(Conn::lived).max().unwrap();
    eprintln!("{what}: lived {shortest:?} to {longest:?} (timeout {TIMEOUT:?})");
    assert!(
        shortest >= TIMEOUT - Duration::from_millis(100),
        "{what}: closed early"
    );
    assert!(longest <= TIMEOUT + SLACK, "{what}: closed late");
}

#[test]
fn slowloris_connections_get_408_at_http_request_while_others_are_served() {
    let n = affordable(2000);
    let term = Term::start("s1");
    let tern = tern_with(&term, "http_request = \"3s\"", None);
    let addr = tern.addr();
    served(addr);
    let (fds, before) = (tern.open_fds(), rss(&tern));

    // Each connection starts a head, then adds a byte of a header line every 500 ms: the
    // http_request timer counts from the accept, so the dribble does not extend it.
    let mut conns: Vec<Conn> = (0..n).map(|_| Conn::open(addr)).collect();
    let dribble = b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut sent = vec![0usize; n];
    for c in &mut conns {
        c.send(b"GET / HTTP/1.1\r\nHost: t\r\n");
    }
    std::thread::sleep(Duration::from_millis(500));
    per_connection("slowloris", before, rss(&tern), n);
    let took = served(addr);
    eprintln!("slowloris: a well-behaved request took {took:?} meanwhile");

    let mut i = 0;
    until_all_closed(&mut conns, TIMEOUT + SLACK, |c| {
        let k = i % n;
        i += 1;
        let at = sent[k] % dribble.len();
        c.send(&dribble[at..=at]);
        sent[k] += 1;
    });
    all_lived_their_timeout("slowloris", &conns);
    for c in &conns {
        let text = String::from_utf8_lossy(&c.got);
        assert!(text.starts_with("HTTP/1.1 408"), "not a 408: {text:?}");
    }
    fds_back_to(&tern, fds, SLACK);
    served(addr);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "request_timeouts"), n as u64);
}

#[test]
fn idle_keep_alive_connections_are_closed_silently_at_keep_alive() {
    let n = affordable(2000);
    let term = Term::start("s1");
    let tern = tern_with(&term, "keep_alive = \"3s\"", None);
    let addr = tern.addr();
    served(addr);
    let (fds, before) = (tern.open_fds(), rss(&tern));

    // One request each, answered, then nothing: the connection is hoarded.
    let mut conns: Vec<Conn> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut c = Conn::open(addr);
        c.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        conns.push(c);
    }
    // Wait for every answer; the keep-alive time counts from there.
    let deadline = Instant::now() + SLACK;
    for c in &mut conns {
        while !complete(&c.got) {
            c.poll();
            assert!(c.closed.is_none(), "closed before its answer");
            assert!(Instant::now() < deadline, "answers did not all arrive");
            std::thread::sleep(Duration::from_millis(1));
        }
        c.got.clear();
        c.opened = Instant::now();
    }
    per_connection("idle keep-alive", before, rss(&tern), n);
    let took = served(addr);
    eprintln!("idle keep-alive: a well-behaved request took {took:?} meanwhile");

    until_all_closed(&mut conns, TIMEOUT + SLACK, |_| {});
    // `opened` is when the last answer was read, after the server wrote it: allow for the wait.
    let longest = conns.iter().map(Conn::lived).max().unwrap();
    assert!(longest <= TIMEOUT + SLACK, "closed late: {longest:?}");
    assert!(
        conns.iter().all(|c| c.got.is_empty()),
        "the close was not silent"
    );
    fds_back_to(&tern, fds, SLACK);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "keepalive_timeouts"), n as u64);
}

#[test]
fn slow_readers_are_cut_at_the_client_timeout() {
    // Each slow reader holds a server connection too, and a response the kernel buffers
    // partly: fewer of them.
    let n = affordable(100);
    let term = Term::start("s1");
    let tern = tern_with(&term, "client = \"3s\"", None);
    let addr = tern.addr();
    served(addr);
    let (fds, before) = (tern.open_fds(), rss(&tern));

    // A small receive buffer, so the window closes after a few kilobytes; and no read.
    let mut conns: Vec<(socket2::Socket, Instant)> = (0..n)
        .map(|_| {
            let s =
                socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
            s.set_recv_buffer_size(4096).unwrap();
            s.connect(&addr.into()).unwrap();
            let mut s = std::net::TcpStream::from(s);
            s.write_all(b"GET /?s=64m HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            (socket2::Socket::from(s), Instant::now())
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    per_connection("slow readers", before, rss(&tern), n);
    // The kernel's side: what tern's sockets to the readers have queued and not had
    // acknowledged, capped by TCP_NOTSENT_LOWAT (128 KiB unsent) plus the readers' small
    // windows; without the cap Linux grows each towards `tcp_wmem`'s maximum (4 MiB).
    let queued = send_queues(&tern, addr.port());
    eprintln!(
        "slow readers: tern's sockets to them queue {queued} bytes, {} each",
        queued / n as u64
    );
    assert!(
        queued / n as u64 <= 512 * 1024,
        "{queued} bytes queued in the kernel"
    );
    let took = served(addr);
    eprintln!("slow readers: a well-behaved request took {took:?} meanwhile");

    // tern gives up on each after `client` without progress: its descriptors (client and
    // server side) are closed.
    let gone = fds_back_to(&tern, fds, TIMEOUT + SLACK);
    eprintln!("slow readers: all closed {gone:?} after the last request");
    assert!(gone + Duration::from_secs(1) >= TIMEOUT - Duration::from_millis(100));
    // What each reader gets then is a cut response: less than its 64 MiB, then the close.
    for (s, _) in &mut conns {
        let mut s: &socket2::Socket = s;
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut total = 0usize;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => total += k,
            }
        }
        assert!(total < 64 << 20, "a slow reader got the whole response");
    }
    served(addr);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "client_timeouts"), n as u64);
}

#[test]
fn tls_clients_stalled_after_the_client_hello_are_cut_at_handshake() {
    let n = affordable(1000);
    let term = Term::start("s1");
    let dir = temp_dir("slow-tls");
    let tern = tern_with(&term, "handshake = \"3s\"", Some(&dir));
    let addr = tern.addr();
    block_on(get(addr, true, "/"));
    let (fds, before) = (tern.open_fds(), rss(&tern));

    // A real ClientHello (rustls), then silence: tern answers and waits for the rest.
    let hello = client_hello();
    let mut conns: Vec<Conn> = (0..n)
        .map(|_| {
            let mut c = Conn::open(addr);
            c.send(&hello);
            c
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    per_connection("stalled TLS handshakes", before, rss(&tern), n);
    let start = Instant::now();
    let ok = block_on(get(addr, true, "/"));
    assert_eq!(ok.status, 200);
    eprintln!(
        "stalled TLS handshakes: a well-behaved TLS request took {:?} meanwhile",
        start.elapsed()
    );

    until_all_closed(&mut conns, TIMEOUT + SLACK, |_| {});
    all_lived_their_timeout("stalled TLS handshakes", &conns);
    fds_back_to(&tern, fds, SLACK);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_timeouts"), n as u64);
}

/// Whether `got` holds a whole response with a Content-Length body.
fn complete(got: &[u8]) -> bool {
    let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    got.len() >= end + 4 + length
}

/// The first flight of a rustls client to `localhost`.
fn client_hello() -> Vec<u8> {
    let config = tls_client(false);
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut conn = rustls::ClientConnection::new(Arc::clone(&config), name).unwrap();
    let mut out = Vec::new();
    while conn.wants_write() {
        conn.write_tls(&mut out).unwrap();
    }
    out
}
