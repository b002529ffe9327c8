//! A proxy that is unsafe on purpose: it parses the first request head of a connection only
//! as far as its request line, adds the `X-Parsed` marker, and passes every other byte on as it
//! came. A suite that reports such a proxy as safe could not fail, so the runner is checked
//! against it (`smuggling.rs`).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The relay: one listener, two copying threads per connection.
pub struct Relay {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Every socket it opened, shut down when the relay stops.
    sockets: Arc<Mutex<Vec<TcpStream>>>,
    accepter: Option<JoinHandle<()>>,
}

impl Relay {
    pub fn start(server: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let sockets = Arc::new(Mutex::new(Vec::new()));
        let (flag, open) = (Arc::clone(&stop), Arc::clone(&sockets));
        let accepter = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => relay(client, server, &open),
                    // A bounded poll: the relay lives as long as one vector.
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        Relay {
            addr,
            stop,
            sockets,
            accepter: Some(accepter),
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for s in self.sockets.lock().unwrap().iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
        if let Some(t) = self.accepter.take() {
            let _ = t.join();
        }
    }
}

/// Connects `client` to `server` through the two copying threads.
fn relay(client: TcpStream, server: SocketAddr, open: &Mutex<Vec<TcpStream>>) {
    client.set_nonblocking(false).unwrap();
    let upstream = TcpStream::connect(server).unwrap();
    {
        let mut open = open.lock().unwrap();
        open.push(client.try_clone().unwrap());
        open.push(upstream.try_clone().unwrap());
    }
    let (c, u) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
    std::thread::spawn(move || up(c, u));
    std::thread::spawn(move || copy(upstream, client));
}

/// Client to server: the marker after the first line, everything else as received.
fn up(mut client: TcpStream, mut server: TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let line_end = loop {
        if let Some(i) = buf.iter().position(|b| *b == b'\n') {
            break i + 1;
        }
        match client.read(&mut chunk) {
            Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    };
    let line = String::from_utf8_lossy(&buf[..line_end]).into_owned();
    let mut words = line.split_whitespace();
    let marker = format!(
        "X-Parsed: {} {}\r\n",
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default()
    );
    let mut first = buf[..line_end].to_vec();
    first.extend_from_slice(marker.as_bytes());
    first.extend_from_slice(&buf[line_end..]);
    if server.write_all(&first).is_ok() {
        copy(client, server);
    }
}

/// Copies until either side ends, then passes the end on.
fn copy(mut from: TcpStream, mut to: TcpStream) {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match from.read(&mut chunk) {
            Ok(n) if n > 0 => {
                if to.write_all(&chunk[..n]).is_err() {
                    break;
                }
            }
            _ => break,
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
