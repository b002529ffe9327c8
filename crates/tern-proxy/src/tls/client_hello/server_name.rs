//! The server name of a ClientHello that tern relays without terminating (TLS passthrough,
//! `req.ssl_sni` and `req.ssl_hello_type` on a TCP frontend's plain bind).
//!
//! Unlike [`super::peek`], which judges the first record for admission, this reassembles the
//! first handshake message across records: a ClientHello with many extensions (post-quantum
//! key shares are over 1 KiB, ECH and long PSK identities add more) may be split over several
//! records, and each record over several TCP segments. The bytes are only read, never
//! consumed: the caller keeps them and relays them to the server first.
//!
//! Bounded by [`MAX_HELLO`] bytes of records (HAProxy reads only the first record; tern reads
//! up to 16 KiB, which a real ClientHello never exceeds). Nothing here allocates but the name.

use super::{Cursor, HelloParts, CLIENT_HELLO, HANDSHAKE, RECORD_HEADER};

/// Most bytes of records read to find the first handshake message.
pub const MAX_HELLO: usize = 16 * 1024;

/// Extension type of server_name (RFC 6066 §3).
const EXT_SERVER_NAME: u16 = 0;
/// `NameType` of a host name.
const HOST_NAME: u8 = 0;
/// Handshake message header: type (1 byte) and length (3 bytes).
const HANDSHAKE_HEADER: usize = 4;

/// What the first bytes of a connection say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hello {
    /// More bytes are needed.
    Incomplete,
    /// Not TLS handshake records, or a first message too large or malformed to read.
    NotTls,
    /// The first handshake message arrived whole: its type (1: ClientHello) and, for a
    /// ClientHello, the host name it asks for.
    Complete { kind: u8, sni: Option<String> },
}

/// Judges the bytes received so far.
pub fn read_hello(buf: &[u8]) -> Hello {
    let mut at = 0;
    // The first handshake message's bytes gathered so far, if they span records.
    let mut gathered: Vec<u8> = Vec::new();
    loop {
        let Some(header) = buf.get(at..at + RECORD_HEADER) else {
            // One byte is enough to tell something else from a handshake record.
            return match buf.get(at) {
                Some(&b) if b != HANDSHAKE => Hello::NotTls,
                _ => Hello::Incomplete,
            };
        };
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if header[0] != HANDSHAKE || header[1] != 3 || len == 0 {
            return Hello::NotTls;
        }
        let end = at + RECORD_HEADER + len;
        if end > MAX_HELLO {
            return Hello::NotTls;
        }
        let Some(body) = buf.get(at + RECORD_HEADER..end) else {
            return Hello::Incomplete;
        };
        // The common case, a message in its first record, needs no copy.
        let message = if at == 0 {
            body
        } else {
            gathered.extend_from_slice(body);
            &gathered
        };
        if let Some(hello) = judge(message) {
            return hello;
        }
        if at == 0 {
            gathered.extend_from_slice(body);
        }
        at = end;
    }
}

/// The first handshake message if `message` holds it whole; `None` when more is needed.
fn judge(message: &[u8]) -> Option<Hello> {
    let header = message.get(..HANDSHAKE_HEADER)?;
    let len = usize::from(header[1]) << 16 | usize::from(header[2]) << 8 | usize::from(header[3]);
    if HANDSHAKE_HEADER + len > MAX_HELLO {
        return Some(Hello::NotTls);
    }
    let body = message.get(HANDSHAKE_HEADER..HANDSHAKE_HEADER + len)?;
    let kind = header[0];
    let sni = if kind == CLIENT_HELLO {
        server_name(body)
    } else {
        None
    };
    Some(Hello::Complete { kind, sni })
}

/// The host name of a ClientHello's body; `None` without one (or if malformed: the server
/// will judge the ClientHello, tern only routes on it).
fn server_name(body: &[u8]) -> Option<String> {
    let mut sni = None;
    HelloParts::from_body(body)?.each_extension(|kind, data| {
        if kind == EXT_SERVER_NAME {
            sni = host_name_entry(data);
        }
        Some(())
    })?;
    sni
}

/// The host name entry of a server_name extension's data.
fn host_name_entry(data: &[u8]) -> Option<String> {
    let mut names = Cursor(Cursor(data).vec16()?);
    while !names.0.is_empty() {
        let name_type = names.u8()?;
        let name = names.vec16()?;
        if name_type == HOST_NAME {
            return host_name(name);
        }
    }
    None
}

/// A host name as sent, if it is one (ASCII letters, digits, `-`, `.`, `_`): anything else is
/// not a name a rule could match.
fn host_name(name: &[u8]) -> Option<String> {
    let valid = !name.is_empty()
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    valid.then(|| String::from_utf8_lossy(name).into_owned())
}

#[cfg(test)]
mod tests;
