//! The recording backend: a raw TCP server that keeps every byte each connection brings, reads
//! requests with the strict reader and answers each one with a response stamped `X-Seq: N`
//! (a number unique for the backend's life), so the runner can tell which of the client's
//! responses came from which request the server read.
//!
//! Once a connection's bytes stop making sense to the strict reader, the backend answers nothing
//! more on it and only records, until the proxy closes it. The backend answers 200 to every
//! request, 405 to CONNECT (so a proxy has no reason to open a tunnel) and never 101 (so an
//! `Upgrade` offer never turns a connection into one): whatever follows must still be parsed
//! as requests.

use std::io::{Read as _, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::strict::{read_request, Read, Request};

/// Longest a connection is recorded: a vector's exchange and the proxy's stop take far less.
const RECORD_AT_MOST: Duration = Duration::from_secs(30);

/// What one connection brought.
#[derive(Debug, Default)]
pub struct Connection {
    pub bytes: Vec<u8>,
    /// The requests read in full, with the number their response carried.
    pub requests: Vec<(u64, Request)>,
    /// Why the strict reader stopped, if it did.
    pub ambiguous: Option<String>,
    /// Bytes of a request that never ended (the proxy closed in the middle of it).
    pub cut: bool,
}

/// A running recording backend.
#[derive(Debug)]
pub struct Backend {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accepter: JoinHandle<Vec<Connection>>,
}

impl Backend {
    pub fn start() -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let seq = Arc::new(AtomicU64::new(1));
        let flag = Arc::clone(&stop);
        let accepter = std::thread::spawn(move || accept_all(&listener, &flag, &seq));
        Backend {
            addr,
            stop,
            accepter,
        }
    }

    /// Stops accepting and returns every connection once each has closed (bounded). Call it
    /// after the proxy has stopped.
    pub fn finish(self) -> Vec<Connection> {
        self.stop.store(true, Ordering::SeqCst);
        self.accepter.join().unwrap()
    }
}

/// Accepts connections until `stop`, then collects what each brought.
fn accept_all(listener: &TcpListener, stop: &AtomicBool, seq: &Arc<AtomicU64>) -> Vec<Connection> {
    let mut served = Vec::new();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        match listener.accept() {
            Ok((s, _)) => {
                let seq = Arc::clone(seq);
                served.push(std::thread::spawn(move || serve(s, &seq)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                // The backlog is empty: done if asked to stop, else a bounded poll.
                if stopping {
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
    served.into_iter().map(|t| t.join().unwrap()).collect()
}

/// Records one connection, answering each request the strict reader reads.
fn serve(mut s: TcpStream, seq: &AtomicU64) -> Connection {
    s.set_nonblocking(false).unwrap();
    let mut c = Connection::default();
    let mut at = 0;
    let mut buf = [0u8; 16 * 1024];
    let deadline = Instant::now() + RECORD_AT_MOST;
    loop {
        if c.ambiguous.is_none() {
            at += answer(&mut s, &mut c, at, seq);
        }
        // Until the proxy closes: the runner stops it once the client's exchange is over.
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => c.bytes.extend_from_slice(&buf[..n]),
        }
    }
    c.cut = c.ambiguous.is_none() && at < c.bytes.len();
    c
}

/// Answers the complete requests from offset `at`; returns the bytes they took.
fn answer(s: &mut TcpStream, c: &mut Connection, at: usize, seq: &AtomicU64) -> usize {
    let mut used = 0;
    loop {
        match read_request(&c.bytes[at + used..]) {
            Ok(Read::Complete(req, n)) => {
                let id = seq.fetch_add(1, Ordering::SeqCst);
                let _ = s.write_all(&response(&req, id));
                c.requests.push((id, req));
                used += n;
            }
            Ok(Read::Partial) => return used,
            Err(why) => {
                c.ambiguous = Some(why);
                return used;
            }
        }
    }
}

/// The stamped answer to `req`.
fn response(req: &Request, id: u64) -> Vec<u8> {
    let (status, body): (&str, &str) = match req.method.as_str() {
        "CONNECT" => ("405 Method Not Allowed", "no"),
        "HEAD" => ("200 OK", ""),
        _ => ("200 OK", "ok"),
    };
    format!("HTTP/1.1 {status}\r\nContent-Length: 2\r\nX-Seq: {id}\r\n\r\n{body}").into_bytes()
}
