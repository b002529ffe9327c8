//! The client's TLS connection: rustls driven directly over a tokio `TcpStream`.
//!
//! Why not tokio-rustls: the generator must spend as little CPU per handshake as a client can.
//! tokio-rustls flushes the client's Finished as soon as the handshake completes, then the
//! request goes in a second `writev` and a second TCP segment. Here the handshake stops as
//! soon as rustls has the server's Finished; the client Finished stays queued in rustls and
//! leaves with the first request in one `writev` (TLS 1.3 allows application data right after
//! Finished). Reads go straight from the socket into rustls and from rustls into the caller's
//! buffer, with tokio's readiness instead of poll-level adapters.

use std::io::{self, Read, Write};

use rustls::ClientConnection;
use tokio::io::Interest;
use tokio::net::TcpStream;

/// A TLS client connection over TCP.
#[derive(Debug)]
pub(crate) struct TlsConn {
    pub(super) tcp: TcpStream,
    pub(super) conn: ClientConnection,
}

/// `io::Read` for `read_tls`: one non-blocking read.
pub(super) struct TryRead<'a>(pub(super) &'a TcpStream);

impl Read for TryRead<'_> {
    /// A read that did not fill `buf` drained the socket: its readiness is cleared then (as
    /// tokio's own `poll_read` does), so the next wait goes to epoll instead of first trying a
    /// read that can only fail with `EAGAIN`. Readiness is edge-triggered: data arriving later
    /// sets it again.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let len = buf.len();
        let mut short = None;
        let result = self.0.try_io(Interest::READABLE, || {
            let n = self.0.try_read(buf)?;
            if n < len {
                short = Some(n);
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        });
        match (result, short) {
            (_, Some(n)) => Ok(n),
            (result, None) => result,
        }
    }
}

/// `io::Write` for `write_tls`: one non-blocking (vectored) write.
pub(super) struct TryWrite<'a>(pub(super) &'a TcpStream);

impl Write for TryWrite<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TlsConn {
    /// Runs the handshake until rustls has verified the server's Finished; the client's last
    /// flight is left queued for the first [`TlsConn::send`].
    pub async fn handshake(tcp: TcpStream, conn: ClientConnection) -> io::Result<Self> {
        let mut tls = Self { tcp, conn };
        while tls.conn.is_handshaking() {
            if tls.conn.wants_write() {
                tls.flush().await?;
            } else if tls.read_more().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(tls)
    }

    /// The rustls connection (negotiated parameters, handshake kind).
    pub fn rustls(&self) -> &ClientConnection {
        &self.conn
    }

    /// Encrypts `data` and writes it with whatever rustls had queued, in as few writes as the
    /// socket allows.
    pub async fn send(&mut self, data: &[u8]) -> io::Result<()> {
        self.conn.writer().write_all(data)?;
        self.flush().await
    }

    /// Reads plaintext into `buf`; `Ok(0)` after the server's close_notify. A TCP close without
    /// close_notify is `UnexpectedEof`.
    pub async fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => return other,
            }
            if self.read_more().await? == 0 {
                // rustls now knows of the EOF: the next read reports it (clean or not).
                return match self.conn.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
                    other => other,
                };
            }
        }
    }

    /// Whether an idle connection can carry another request: nothing but TLS housekeeping (a
    /// session ticket) arrived, and the server has not closed it.
    pub fn reusable(&mut self) -> bool {
        loop {
            match self.conn.read_tls(&mut TryRead(&self.tcp)) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Ok(0) | Err(_) => return false,
                Ok(_) => {
                    if self.conn.process_new_packets().is_err() {
                        return false;
                    }
                }
            }
        }
        let mut byte = [0u8; 1];
        matches!(self.conn.reader().read(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    /// Writes everything rustls has queued.
    async fn flush(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut TryWrite(&self.tcp)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.tcp.writable().await?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads what the socket has into rustls and processes it; returns the bytes read (0 at
    /// EOF). A TLS error (alert, bad record) is `InvalidData`.
    async fn read_more(&mut self) -> io::Result<usize> {
        loop {
            match self.conn.read_tls(&mut TryRead(&self.tcp)) {
                Ok(n) => {
                    if let Err(e) = self.conn.process_new_packets() {
                        // Send the alert rustls queued for the server, best effort.
                        let _ = self.conn.write_tls(&mut TryWrite(&self.tcp));
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.tcp.readable().await?,
                Err(e) => return Err(e),
            }
        }
    }
}
