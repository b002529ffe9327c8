//! A look at the ClientHello before the handshake starts, for handshake admission
//! (`admission.rs`): does the client offer to resume a session? And, in [`server_name`], the
//! host name of a ClientHello tern relays without terminating.
//!
//! A resumption costs a fraction of a full handshake, so under the full-handshake rate cap it is
//! let through without waiting. rustls' `Acceptor` would parse the ClientHello for us, but the
//! `ClientHello` it hands out does not say whether a PSK, a session ticket or a session ID was
//! offered, so tern reads the first record itself (cheap: no crypto, one pass over ~500 bytes),
//! and gives the bytes to rustls afterwards ([`crate::tls::stream::TlsStream::accept`]). This
//! runs only when a cap is configured; without one, the handshake reads the socket directly as
//! before.
//!
//! A resumption offer is only a claim: the handshake may still turn out full (unknown or expired
//! ticket). The session then charges the rate cap after the fact, so fake offers cannot buy
//! more full handshakes than the cap allows over time.

// The client's X25519 key share, for batched key exchanges (`global.crypto_batch`).
mod key_share;
// The host name of a ClientHello relayed without terminating (TLS passthrough).
mod server_name;

use std::io;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

pub(crate) use key_share::x25519_share;
pub use server_name::{read_hello, Hello, MAX_HELLO};

/// Content type of a handshake record.
const HANDSHAKE: u8 = 22;
/// Handshake message type of a ClientHello.
const CLIENT_HELLO: u8 = 1;
/// Largest TLS plaintext record (2^14) plus the slack the record layer allows.
const MAX_RECORD: usize = 16_384 + 2_048;
const RECORD_HEADER: usize = 5;

const EXT_SESSION_TICKET: u16 = 35;
const EXT_PRE_SHARED_KEY: u16 = 41;
const EXT_SUPPORTED_VERSIONS: u16 = 43;
const TLS13: [u8; 2] = [3, 4];

/// What the first bytes of a connection turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peek {
    /// Not all of the first record has arrived yet.
    Incomplete,
    /// Not a ClientHello in a handshake record (plain HTTP on a TLS port, garbage): rustls will
    /// refuse it at once, so it needs no admission.
    NotHello,
    /// A ClientHello; `resumption` tells whether it offers to resume a session.
    Hello { resumption: bool },
}

/// Judges the bytes received so far.
pub fn peek(buf: &[u8]) -> Peek {
    if buf.len() < RECORD_HEADER {
        // One byte is enough to tell plain text from a handshake record.
        return match buf.first() {
            Some(&b) if b != HANDSHAKE => Peek::NotHello,
            _ => Peek::Incomplete,
        };
    }
    if buf[0] != HANDSHAKE {
        return Peek::NotHello;
    }
    let len = usize::from(u16::from_be_bytes([buf[3], buf[4]]));
    if len > MAX_RECORD {
        return Peek::NotHello;
    }
    let Some(record) = buf.get(RECORD_HEADER..RECORD_HEADER + len) else {
        return Peek::Incomplete;
    };
    match parse_hello(record) {
        Some(resumption) => Peek::Hello { resumption },
        // A ClientHello split over several records, or one we cannot read: treat it as a full
        // handshake (charged); rustls has the last word on whether it is valid.
        None if record.first() == Some(&CLIENT_HELLO) => Peek::Hello { resumption: false },
        None => Peek::NotHello,
    }
}

/// Reads from `tcp` into `buf` until [`peek`] can judge the first record. End of stream is
/// `UnexpectedEof`. Each read adds at least one byte and the record is bounded, so this ends.
pub(crate) async fn read(tcp: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<Peek> {
    loop {
        match peek(buf) {
            Peek::Incomplete => {}
            judged => return Ok(judged),
        }
        if buf.len() >= RECORD_HEADER + MAX_RECORD {
            return Ok(Peek::NotHello);
        }
        buf.reserve(1024);
        if tcp.read_buf(buf).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
}

/// A forward-only reader over a handshake message.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }

    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
}

/// What every reader of a ClientHello here (resumption offers, the X25519 key share, the host
/// name) takes from it: the session ID and the extensions block
/// (empty when the client sent none).
struct HelloParts<'a> {
    session_id: &'a [u8],
    extensions: &'a [u8],
}

impl<'a> HelloParts<'a> {
    /// The ClientHello of a record holding a whole one; `None` if it is not a well-formed one.
    fn parse(record: &'a [u8]) -> Option<Self> {
        let mut c = Cursor(record);
        if c.u8()? != CLIENT_HELLO {
            return None;
        }
        let len = c.take(3)?;
        let len = usize::from(len[0]) << 16 | usize::from(len[1]) << 8 | usize::from(len[2]);
        Self::from_body(c.take(len)?)
    }

    /// The ClientHello whose handshake message body (after type and length) is `body`.
    fn from_body(body: &'a [u8]) -> Option<Self> {
        let mut c = Cursor(body);
        c.take(2 + 32)?; // legacy_version, random
        let session_id = c.vec8()?;
        c.vec16()?; // cipher_suites
        c.vec8()?; // compression methods
        let extensions = if c.0.is_empty() { &[][..] } else { c.vec16()? };
        Some(Self {
            session_id,
            extensions,
        })
    }

    /// Calls `f` with each extension's type and data, in order; `None` if the block or `f`
    /// finds one malformed.
    fn each_extension(&self, mut f: impl FnMut(u16, &'a [u8]) -> Option<()>) -> Option<()> {
        let mut exts = Cursor(self.extensions);
        while !exts.0.is_empty() {
            let kind = exts.u16()?;
            f(kind, exts.vec16()?)?;
        }
        Some(())
    }
}

/// Whether the supported_versions extension's data offers TLS 1.3.
fn offers_tls13(data: &[u8]) -> Option<bool> {
    let versions = Cursor(data).vec8()?;
    Some(versions.chunks_exact(2).any(|v| v == TLS13))
}

/// Whether a complete ClientHello (in one record) offers resumption; `None` if the record does
/// not hold a whole, well-formed ClientHello.
fn parse_hello(record: &[u8]) -> Option<bool> {
    let hello = HelloParts::parse(record)?;
    let (mut psk, mut ticket, mut tls13) = (false, false, false);
    hello.each_extension(|kind, data| {
        match kind {
            EXT_PRE_SHARED_KEY => psk = true,
            EXT_SESSION_TICKET => ticket = !data.is_empty(),
            EXT_SUPPORTED_VERSIONS => tls13 = offers_tls13(data)?,
            _ => {}
        }
        Some(())
    })?;
    // A TLS 1.3 client sends a random session ID for middlebox compatibility, so a session ID is
    // a resumption offer only from a client that cannot do TLS 1.3.
    let session_id_offer = !hello.session_id.is_empty() && !tls13;
    Some(psk || ticket || session_id_offer)
}

#[cfg(test)]
mod tests;
