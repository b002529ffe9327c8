//! A reload (SIGHUP, a new generation) and established TCP-mode sessions, through the real
//! binary: a session of the old generation keeps relaying while new connections reach the new
//! one, until `global.hard_stop_after`, when the old generation closes it. The server is a
//! plain echo on loopback; every wait is bounded.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

/// Longest wait for anything in these tests.
const WAIT: Duration = Duration::from_secs(10);

/// An echo server: writes back what it reads, one thread per connection.
fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for mut conn in listener.incoming().map_while(Result::ok) {
            thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = conn.read(&mut buf) {
                    if conn.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
                let _ = conn.shutdown(Shutdown::Write);
            });
        }
    });
    addr
}

/// A TCP frontend relaying to `echo`; `hard_stop_after` for old generations, and a `marker`
/// comment that makes two files differ.
fn config(echo: SocketAddr, hard_stop_after: &str, marker: &str) -> String {
    format!(
        "# {marker}\n[global]\nworkers = 1\nhard_stop_after = \"{hard_stop_after}\"\n\n\
         [[frontend]]\nname = \"web\"\nmode = \"tcp\"\nbind = [\"127.0.0.1:0\"]\n\
         default_backend = \"app\"\ntimeouts = {{ client = \"30s\" }}\n\n\
         [[backend]]\nname = \"app\"\nmode = \"tcp\"\ntimeouts = {{ server = \"30s\" }}\n\
         servers = [{{ name = \"e\", address = \"{echo}\" }}]\n"
    )
}

/// Sends `bytes` on `s` and reads them back.
fn round_trip(s: &mut TcpStream, bytes: &[u8]) {
    s.write_all(bytes).unwrap();
    let mut back = vec![0u8; bytes.len()];
    s.read_exact(&mut back).unwrap();
    assert_eq!(back, bytes);
}

#[test]
fn a_reload_keeps_an_established_session_until_hard_stop_after() {
    let echo = echo_server();
    let mut tern = Tern::run(&config(echo, "2s", "first"));
    let addr = tern.addr();
    let mut old = TcpStream::connect(addr).unwrap();
    old.set_read_timeout(Some(WAIT)).unwrap();
    round_trip(&mut old, b"before the reload");

    let binds = tern.reload(&config(echo, "2s", "second"));
    assert_eq!(binds[0].1, addr, "the bind is kept across the reload");
    let reloaded = Instant::now();
    // The old generation's session goes on relaying while it drains...
    round_trip(&mut old, b"during the drain");
    // ...and new connections are the new generation's.
    let mut new = TcpStream::connect(addr).unwrap();
    new.set_read_timeout(Some(WAIT)).unwrap();
    round_trip(&mut new, b"new generation");
    thread::sleep(Duration::from_millis(500));
    round_trip(&mut old, b"still there");

    // At hard_stop_after the old generation closes what it still has.
    let mut rest = Vec::new();
    // An end of stream, or a reset; not the read timeout (which the bound below refuses too).
    let _ = old.read_to_end(&mut rest);
    let waited = reloaded.elapsed();
    assert!(rest.is_empty(), "{rest:?}");
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(8),
        "closed after {waited:?}"
    );
    // The new generation's session is untouched.
    round_trip(&mut new, b"after the old one ended");
    drop(new);
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "tcp_sessions"), 2);
}
