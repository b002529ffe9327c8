//! The text handshake: the connecting peer sends a hello of three lines, the accepting peer
//! answers one status line, then both send binary messages.
//!
//! ```text
//! HAProxyS 2.1\n                  protocol and version
//! <remote peer name>\n            who the hello is for
//! <local peer name> <pid> <rel>\n who sends it, its process id and relative process id
//! ```
//!
//! Lines are at most [`MAX_LINE`] bytes; a name is printable ASCII without spaces.

use crate::Error;

/// The protocol identifier and the version spoken.
pub const PROTOCOL: &str = "HAProxyS";
pub const VERSION: &str = "2.1";

/// The longest handshake line accepted.
pub const MAX_LINE: usize = 256;

/// A hello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The name of the peer the hello is for (the accepting side).
    pub remote: String,
    /// The name of the peer sending it.
    pub local: String,
    pub pid: u32,
    pub relative_pid: u32,
}

/// The answer to a hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    TryAgain,
    ProtocolError,
    BadVersion,
    /// The hello is for a peer name that is not the accepting side's own.
    LocalMismatch,
    /// The sender is not a peer the accepting side knows.
    RemoteMismatch,
}

impl Status {
    pub fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::TryAgain => 300,
            Status::ProtocolError => 501,
            Status::BadVersion => 502,
            Status::LocalMismatch => 503,
            Status::RemoteMismatch => 504,
        }
    }

    pub fn from_code(code: u16) -> Option<Status> {
        Some(match code {
            200 => Status::Ok,
            300 => Status::TryAgain,
            501 => Status::ProtocolError,
            502 => Status::BadVersion,
            503 => Status::LocalMismatch,
            504 => Status::RemoteMismatch,
            _ => return None,
        })
    }

    /// `200\n`.
    pub fn line(self) -> String {
        format!("{}\n", self.code())
    }

    /// The status line at the front of `buf`: `None` until a whole line arrived.
    pub fn parse(buf: &[u8]) -> Result<Option<(Status, usize)>, Error> {
        let Some((line, used)) = split_line(buf)? else {
            return Ok(None);
        };
        let code: u16 = std::str::from_utf8(line)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .ok_or(Error::Bad("status line"))?;
        let status = Status::from_code(code).ok_or(Error::Bad("status code"))?;
        Ok(Some((status, used)))
    }
}

impl Hello {
    /// The hello's three lines.
    pub fn encode(&self) -> String {
        format!(
            "{PROTOCOL} {VERSION}\n{}\n{} {} {}\n",
            self.remote, self.local, self.pid, self.relative_pid
        )
    }

    /// The hello at the front of `buf`: `None` until its three lines arrived. A hello in a
    /// version other than 2.x is `Err(Error::Bad("version"))`: the caller answers 502.
    pub fn parse(buf: &[u8]) -> Result<Option<(Hello, usize)>, Error> {
        let mut rest = buf;
        let mut lines = [""; 3];
        let mut used = 0;
        for line in &mut lines {
            let Some((l, n)) = split_line(rest)? else {
                return Ok(None);
            };
            *line = std::str::from_utf8(l).map_err(|_| Error::Bad("hello text"))?;
            rest = &rest[n..];
            used += n;
        }
        let mut first = lines[0].split(' ');
        if first.next() != Some(PROTOCOL) {
            return Err(Error::Bad("protocol identifier"));
        }
        let version = first.next().ok_or(Error::Bad("version"))?;
        if first.next().is_some() || !version.starts_with("2.") {
            return Err(Error::Bad("version"));
        }
        let remote = name(lines[1])?;
        let mut last = lines[2].split(' ');
        let local = name(last.next().unwrap_or_default())?;
        let mut number = || -> Result<u32, Error> {
            last.next()
                .and_then(|n| n.parse().ok())
                .ok_or(Error::Bad("process id"))
        };
        let pid = number()?;
        let relative_pid = number()?;
        if last.next().is_some() {
            return Err(Error::Bad("hello sender line"));
        }
        let hello = Hello {
            remote,
            local,
            pid,
            relative_pid,
        };
        Ok(Some((hello, used)))
    }
}

/// A peer name: 1 to 64 printable ASCII bytes, no spaces.
fn name(text: &str) -> Result<String, Error> {
    let ok = !text.is_empty() && text.len() <= 64 && text.bytes().all(|b| b.is_ascii_graphic());
    ok.then(|| text.to_owned()).ok_or(Error::Bad("peer name"))
}

/// The first line of `buf` without its `\n` (a `\r` before it is dropped), and the bytes used.
fn split_line(buf: &[u8]) -> Result<Option<(&[u8], usize)>, Error> {
    match buf.iter().take(MAX_LINE + 1).position(|&b| b == b'\n') {
        Some(i) => {
            let line = &buf[..i];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            Ok(Some((line, i + 1)))
        }
        None if buf.len() > MAX_LINE => Err(Error::Bad("handshake line longer than 256 bytes")),
        None => Ok(None),
    }
}
