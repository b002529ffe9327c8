//! Sending one vector and judging what happened on both sides of the proxy.
//!
//! The client writes the vector in one piece, then shuts its sending side: a proxy that has
//! read everything it can answers what it parsed and closes, so the exchange ends by itself,
//! with no idle timer deciding when the proxy "had enough time". The verdict joins the two
//! records:
//!
//! - **unsafe** when the server got bytes the strict reader refuses (ambiguous framing), a
//!   request without the proxy's `X-Parsed` marker (never parsed by the proxy), or with a
//!   marker that names another request, or a request whose response never reached the client
//!   (read by the server but not by the proxy, or sent twice);
//! - otherwise an **outcome**: the client's responses in order (`fwd` for one from the server,
//!   the status for one the proxy wrote itself), and `(cut)` when the server got the start of
//!   a request the proxy then abandoned.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::backend::Connection;
use super::strict::{origin_form, printable};

/// Longest a client waits for the proxy to answer and close.
const CLIENT_WAIT: Duration = Duration::from_secs(5);

/// What the client got.
#[derive(Debug)]
pub struct ClientSide {
    pub bytes: Vec<u8>,
    /// The proxy closed the connection within [`CLIENT_WAIT`].
    pub closed: bool,
}

/// Sends `vector`, half-closes, reads until the proxy closes.
pub fn send(addr: SocketAddr, vector: &[u8]) -> ClientSide {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let mut side = ClientSide {
        bytes: Vec::new(),
        closed: false,
    };
    // A proxy may refuse and close before taking all of it: what it read is what counts.
    if s.write_all(vector).is_ok() {
        let _ = s.shutdown(Shutdown::Write);
    }
    let deadline = Instant::now() + CLIENT_WAIT;
    let mut buf = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return side;
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => side.bytes.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return side
            }
            // A reset after the proxy's answer: the answer was read already.
            Err(_) => break,
        }
    }
    side.closed = true;
    side
}

/// One response the client read: its status and, if the server wrote it, its `X-Seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub seq: Option<u64>,
}

/// The responses in the client's bytes, as far as they parse (a proxy's error page ends the
/// connection, so reading stops at anything unexpected).
pub fn answers(mut bytes: &[u8]) -> Vec<Answer> {
    let mut out = Vec::new();
    while let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let Some(status) = head
            .strip_prefix("HTTP/1.")
            .and_then(|r| r.get(2..5))
            .and_then(|s| s.parse::<u16>().ok())
        else {
            break;
        };
        let field = |name: &str| {
            head.lines().skip(1).find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_owned())
            })
        };
        let seq = field("x-seq").and_then(|v| v.parse().ok());
        let mut len: usize = field("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let rest = &bytes[end + 4..];
        if (100..200).contains(&status) || status == 204 || rest.starts_with(b"HTTP/1.") {
            // No body (or an answer to HEAD, which announces one it does not carry).
            len = 0;
        }
        out.push(Answer { status, seq });
        bytes = &rest[len.min(rest.len())..];
    }
    out
}

/// The verdict on one vector: the outcome, or why the proxy forwarded it unsafely.
pub fn judge(client: &ClientSide, conns: &[Connection]) -> Result<String, String> {
    for c in conns {
        if let Some(why) = &c.ambiguous {
            return Err(format!(
                "ambiguous bytes reached the server ({why}): {}",
                printable(&c.bytes)
            ));
        }
        for (_, req) in &c.requests {
            check_marker(req)?;
        }
    }
    let answers = answers(&client.bytes);
    let got: Vec<u64> = answers.iter().filter_map(|a| a.seq).collect();
    for c in conns {
        for (seq, req) in &c.requests {
            let times = got.iter().filter(|g| *g == seq).count();
            if times != 1 {
                return Err(format!(
                    "the server answered {} {} (#{seq}); the client got that answer {times} times",
                    req.method, req.target
                ));
            }
        }
    }
    let cut = conns.iter().any(|c| c.cut);
    Ok(render(&answers, cut, client.closed))
}

/// The request carries one marker, naming its own method and target.
fn check_marker(req: &super::strict::Request) -> Result<(), String> {
    let [marker] = &req.markers[..] else {
        return Err(format!(
            "{} {} reached the server with markers {:?}: not parsed by the proxy as one request",
            req.method, req.target, req.markers
        ));
    };
    let (method, target) = marker.split_once(' ').unwrap_or((marker, ""));
    if method != req.method || origin_form(target) != origin_form(&req.target) {
        return Err(format!(
            "the proxy parsed {marker:?} but sent {} {}",
            req.method, req.target
        ));
    }
    Ok(())
}

/// `fwd×2`, `400`, `100 fwd`, `fwd 400 (cut)`, `closed`...
fn render(answers: &[Answer], cut: bool, closed: bool) -> String {
    let mut words: Vec<String> = Vec::new();
    for a in answers {
        let word = match (a.seq, a.status) {
            (Some(_), 200) => "fwd".to_owned(),
            (Some(_), s) => format!("fwd {s}"),
            (None, s) => s.to_string(),
        };
        match words.last_mut() {
            Some(last) if last.split('×').next() == Some(word.as_str()) => {
                let n: u32 = last.split('×').nth(1).map_or(1, |n| n.parse().unwrap_or(1));
                *last = format!("{word}×{}", n + 1);
            }
            _ => words.push(word),
        }
    }
    if words.is_empty() {
        words.push("closed".into());
    }
    if cut {
        words.push("(cut)".into());
    }
    if !closed {
        words.push("(left open)".into());
    }
    words.join(" ")
}
