//! Half-closed TCP sessions through the real binary: `timeouts.client_fin` and `server_fin`
//! (HAProxy's `timeout client-fin` / `server-fin`) let go of a session whose other side
//! finished, sooner than the session's own timeouts; `tern convert` carries them over from a
//! haproxy.cfg. A server's half-close reaches a TLS client as close_notify *and* a TCP FIN, while
//! the client's direction stays open. `show stat`'s text table counts the sessions. Servers are
//! small threads on loopback; every wait is bounded.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use tern_tls::{ClientOptions, KeyKind, Verify};

/// Longest wait for anything in these tests.
const WAIT: Duration = Duration::from_secs(10);

/// A TCP frontend `web` with `frontend` timeouts routing to a TCP backend with one server at
/// `server` and `backend` timeouts (inline TOML tables).
fn config(server: SocketAddr, frontend: &str, backend: &str) -> String {
    format!(
        "[global]\nworkers = 1\n\n[[frontend]]\nname = \"web\"\nmode = \"tcp\"\n\
         bind = [\"127.0.0.1:0\"]\ndefault_backend = \"app\"\ntimeouts = {frontend}\n\n\
         [[backend]]\nname = \"app\"\nmode = \"tcp\"\ntimeouts = {backend}\n\
         servers = [{{ name = \"s\", address = \"{server}\" }}]\n"
    )
}

/// A server running `serve` on its one connection, on a thread.
fn one_connection<F: FnOnce(TcpStream) + Send + 'static>(serve: F) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        if let Ok((conn, _)) = listener.accept() {
            conn.set_read_timeout(Some(WAIT)).unwrap();
            serve(conn);
        }
    });
    addr
}

/// Reads until end of stream (bounded by `WAIT`); what was read.
fn read_to_eof(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(WAIT)).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    out
}

#[test]
fn server_fin_closes_a_session_whose_client_finished_and_server_went_quiet() {
    // The server reads the client's bytes and end of stream, then neither answers nor closes.
    let (tx, rx) = mpsc::channel();
    let server = one_connection(move |mut conn| {
        let got = read_to_eof(&mut conn);
        tx.send(got).unwrap();
        thread::sleep(WAIT);
    });
    let tern = Tern::run(&config(
        server,
        "{ client = \"30s\" }",
        "{ server = \"30s\", server_fin = \"300ms\" }",
    ));
    let mut c = TcpStream::connect(tern.addr()).unwrap();
    c.write_all(b"last words").unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let finished = Instant::now();
    assert_eq!(rx.recv_timeout(WAIT).unwrap(), b"last words");
    // tern lets the session go after `server_fin`, not the 30 s of `server`.
    assert_eq!(read_to_eof(&mut c), b"");
    let waited = finished.elapsed();
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "tcp_sessions"), 1);
    assert_eq!(c.get("frontend web", "bytes_in"), 10);
}

#[test]
fn client_fin_closes_a_session_whose_server_finished_and_client_went_quiet() {
    // The server says goodbye and closes its sending side, then waits for tern's close.
    let (tx, rx) = mpsc::channel();
    let server = one_connection(move |mut conn| {
        conn.write_all(b"goodbye").unwrap();
        conn.shutdown(Shutdown::Write).unwrap();
        let finished = Instant::now();
        let rest = read_to_eof(&mut conn);
        tx.send((rest, finished.elapsed())).unwrap();
    });
    let tern = Tern::run(&config(
        server,
        "{ client = \"30s\", client_fin = \"300ms\" }",
        "{ server = \"30s\" }",
    ));
    let mut c = TcpStream::connect(tern.addr()).unwrap();
    // The client reads the goodbye and the end of stream, then stays silent and open.
    assert_eq!(read_to_eof(&mut c), b"goodbye");
    let (rest, waited) = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(rest, b"");
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    drop(c);
    tern.stop();
}

#[test]
fn tern_convert_carries_client_fin_and_server_fin_over() {
    let dir = temp_dir("tcp-fin-cfg");
    let cfg = "defaults\n  mode tcp\n  timeout client 10s\n  timeout server 10s\n  \
               timeout connect 2s\n  timeout client-fin 1s\n  timeout server-fin 2500ms\n\
               listen db\n  bind 127.0.0.1:0\n  server d 127.0.0.1:5432\n";
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg).unwrap();
    let (code, out, err) = tern_output(&["convert", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("client_fin = \"1s\""), "{out}");
    assert!(out.contains("server_fin = \"2500ms\""), "{out}");
    let toml = dir.join("tern.toml");
    std::fs::write(&toml, &out).unwrap();
    let (code, out, err) = tern_output(&["check", "-c", toml.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_server_half_close_reaches_a_tls_client_as_close_notify_and_fin() {
    // The server says hello and finishes its side, then reads what the client still sends.
    let (tx, rx) = mpsc::channel();
    let server = one_connection(move |mut conn| {
        conn.write_all(b"hello").unwrap();
        conn.shutdown(Shutdown::Write).unwrap();
        tx.send(read_to_eof(&mut conn)).unwrap();
    });
    let dir = temp_dir("tcp-tls-half-close");
    let cert = write_cert(&dir, "c", KeyKind::EcdsaP256);
    let toml = config(server, "{ client = \"30s\" }", "{ server = \"30s\" }").replace(
        "bind = [\"127.0.0.1:0\"]",
        &format!("bind = [\"127.0.0.1:0\"]\ntls = {{ certs = [\"{cert}\"] }}"),
    );
    let tern = Tern::run_in(dir, &toml);
    let config: Arc<rustls::ClientConfig> = tern_tls::client_config(&ClientOptions {
        verify: Verify::Insecure,
        ..ClientOptions::default()
    });
    let name = ServerName::try_from("localhost").unwrap();
    let mut conn = rustls::ClientConnection::new(config, name).unwrap();
    let mut tcp = TcpStream::connect(tern.addr()).unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let mut got = Vec::new();
    rustls::Stream::new(&mut conn, &mut tcp)
        .read_to_end(&mut got)
        .unwrap();
    // The TLS layer ended with close_notify...
    assert_eq!(got, b"hello");
    // ...and the TCP stream ends too: a FIN, not a connection left open (before the fix, this
    // read waited for the whole timeout).
    assert_eq!(tcp.read(&mut [0u8; 64]).unwrap(), 0);
    // The client's direction is still open: it says more, then closes its side.
    let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
    tls.write_all(b"still here").unwrap();
    tls.conn.send_close_notify();
    tls.flush().unwrap();
    tcp.shutdown(Shutdown::Write).unwrap();
    assert_eq!(rx.recv_timeout(WAIT).unwrap(), b"still here");
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "bytes_in"), 10);
    assert_eq!(c.get("frontend web", "bytes_out"), 5);
}

/// The column of `show stat`'s text table named `column`, on the row starting with `row`.
fn stat_cell(table: &str, row: &str, column: &str) -> String {
    let mut header: Vec<&str> = Vec::new();
    for line in table.lines() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        if cells.contains(&column) {
            header = cells;
        } else if cells.first() == Some(&row) {
            if let Some(i) = header.iter().position(|c| *c == column) {
                return cells[i].to_owned();
            }
        }
    }
    panic!("no {column} for {row} in:\n{table}")
}

#[test]
fn show_stat_counts_tcp_sessions_in_its_text_table() {
    let server = one_connection(|mut conn| {
        let got = read_to_eof(&mut conn);
        let _ = conn.write_all(&got);
    });
    let dir = temp_dir("tcp-stat");
    let socket = dir.join("tern.sock");
    let toml = config(server, "{ client = \"30s\" }", "{ server = \"30s\" }")
        + &format!("\n[control]\nsocket = {socket:?}\n");
    let tern = Tern::run_in(dir, &toml);
    let mut c = TcpStream::connect(tern.addr()).unwrap();
    c.write_all(b"ping").unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    assert_eq!(read_to_eof(&mut c), b"ping");
    let (code, table, err) = tern_output(&["ctl", "-s", socket.to_str().unwrap(), "show stat"]);
    assert_eq!(code, 0, "{table}{err}");
    assert_eq!(stat_cell(&table, "web", "tcp_sessions"), "1");
    assert_eq!(stat_cell(&table, "web", "proxy_err"), "0");
    assert_eq!(stat_cell(&table, "app", "tcp_sessions"), "1");
    assert_eq!(stat_cell(&table, "app/s", "tcp_sessions"), "1");
    tern.stop();
}
