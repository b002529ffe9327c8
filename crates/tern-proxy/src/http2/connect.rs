//! WebSocket over an HTTP/2 stream (RFC 8441, "extended CONNECT") to an HTTP/1.1 WebSocket
//! server: the stream is served as an HTTP/1.1 upgrade request, as every stream is served as an
//! HTTP/1.1 exchange (design note 0003), so rules, routing, balancing, queues, logs and
//! counters apply to it as to a WebSocket opened over HTTP/1.1.
//!
//! | RFC 8441 on the stream | the HTTP/1.1 exchange inside tern |
//! |---|---|
//! | HEADERS `:method CONNECT`, `:protocol websocket`, `:path`, `:authority` | `GET <path> HTTP/1.1`, `host`, `connection: upgrade`, `upgrade: websocket` (§5) |
//! | (no key: HTTP/2 has no use for it, §5) | `sec-websocket-key` made up here (16 random bytes, RFC 6455 §4.1) |
//! | `sec-websocket-version`, `-protocol`, `-extensions`, `origin`, ... | passed as they are |
//! | the server's `101` with the matching `sec-websocket-accept` | HEADERS `:status 200`, without `sec-websocket-accept` (§5) |
//! | a `101` whose `sec-websocket-accept` does not answer the key | `502` (the relay refuses it) |
//! | any other answer | that response, as for any stream |
//! | DATA ↔ the server connection's bytes | the tunnel (`tunnel.rs`) with `timeout tunnel` |
//! | END_STREAM ↔ a half-close (FIN) | the tunnel's half-close |
//! | RST_STREAM (CANCEL) ↔ a reset or a failure of either end (§5) | the tunnel's failure |
//!
//! tern checks the server's `sec-websocket-accept` because it is the WebSocket client of that
//! handshake: the HTTP/2 client cannot (it never sees the key), and a server that does not
//! answer the key did not understand the request as a WebSocket opening (RFC 6455 §4.1, the
//! client's last checks).
//!
//! Plain CONNECT (no `:protocol`) stays refused (501, `request.rs`), and so does any
//! `:protocol` but `websocket` (501: tern relays no other protocol over a stream).

use aws_lc_rs::digest;
use http::header::{CONTENT_LENGTH, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY};
use http::request::Parts;

use super::request::{start_head, write_fields, Refused};

/// RFC 6455 §1.3: appended to the key before hashing.
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Length of a key (16 bytes in base64) and of an accept value (20 bytes in base64).
const KEY_LEN: usize = 24;
const ACCEPT_LEN: usize = 28;

/// The WebSocket handshake tern makes with the server for one stream: what the server's `101`
/// must carry in `sec-websocket-accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Handshake {
    accept: [u8; ACCEPT_LEN],
}

impl Handshake {
    /// Whether `value` (a `sec-websocket-accept` field's) answers this handshake's key.
    pub(crate) fn accepts(&self, value: &[u8]) -> bool {
        value.trim_ascii() == self.accept
    }
}

/// Writes the HTTP/1.1 upgrade request that stands for an extended CONNECT whose `:protocol`
/// is `protocol` into `out` (cleared first); the handshake to check the answer against.
pub(crate) fn write_head(
    protocol: &h2::ext::Protocol,
    parts: &Parts,
    out: &mut Vec<u8>,
) -> Result<Handshake, Refused> {
    // Upgrade tokens are case-insensitive (RFC 9110 §7.8).
    if !protocol.as_str().eq_ignore_ascii_case("websocket") {
        return Err(Refused::Protocol);
    }
    let mut nonce = [0u8; 16];
    aws_lc_rs::rand::fill(&mut nonce).map_err(|_| Refused::NoRandom)?;
    let key = base64::<KEY_LEN>(&nonce);
    let authority = start_head("GET", parts, out)?;
    out.extend_from_slice(b"connection: upgrade\r\nupgrade: websocket\r\nsec-websocket-key: ");
    out.extend_from_slice(&key);
    out.extend_from_slice(b"\r\n");
    // A tunnel has no length; a key or accept value from the client is not the handshake's.
    write_fields(parts, authority, out, |name| {
        name == CONTENT_LENGTH || name == SEC_WEBSOCKET_KEY || name == SEC_WEBSOCKET_ACCEPT
    })?;
    out.extend_from_slice(b"\r\n");
    Ok(Handshake {
        accept: accept_for(&key),
    })
}

/// The `sec-websocket-accept` value that answers `key` (RFC 6455 §4.2.2, step 5.4); also what
/// tern answers an HTTP/1.1 client's key with when an HTTP/2 server accepted its WebSocket
/// (`exchange/h2/upgrade.rs`).
pub(crate) fn accept_for(key: &[u8]) -> [u8; ACCEPT_LEN] {
    let mut ctx = digest::Context::new(&digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(key);
    ctx.update(GUID);
    base64::<ACCEPT_LEN>(ctx.finish().as_ref())
}

/// `bytes` in base64 (RFC 4648 §4, with padding), `N` characters long: the two values of the
/// handshake, and nothing else needs the encoding.
fn base64<const N: usize>(bytes: &[u8]) -> [u8; N] {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    debug_assert_eq!(bytes.len().div_ceil(3) * 4, N);
    let mut out = [b'='; N];
    for (group, chunk) in bytes.chunks(3).enumerate() {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        // One character per 6 bits of input; the rest of the group stays padding.
        for i in 0..=chunk.len() {
            out[group * 4 + i] = ALPHABET[(n >> (18 - 6 * i)) as usize & 63];
        }
    }
    out
}

#[cfg(test)]
mod tests;
