//! The client's X25519 key share, when a TLS 1.3 handshake with this ClientHello will use it:
//! what `global.crypto_batch` computes the server's half for before rustls asks
//! (`tls/batch.rs`).
//!
//! It must predict rustls' choice, or the batch's work is wasted (counted as `unused`; the
//! handshake is still right, rustls computing its own): a rustls 0.23 server negotiates TLS 1.3
//! when the client offers it, then takes the first group of the client's `supported_groups`
//! that the server supports, and uses the client's key share for it if there is one (else it
//! asks for one: HelloRetryRequest). So: TLS 1.3 offered, the first supported group is X25519,
//! and a key share of 32 bytes for it.

use super::{offers_tls13, Cursor, HelloParts, EXT_SUPPORTED_VERSIONS, HANDSHAKE, RECORD_HEADER};
use rustls::NamedGroup;

const EXT_SUPPORTED_GROUPS: u16 = 10;
const EXT_KEY_SHARE: u16 = 51;
const X25519: u16 = 0x001d;

/// The client's X25519 key share if the handshake of the first record in `received` will use
/// it, given the groups the server supports (`server_groups`); `None` otherwise, or when the
/// bytes do not hold a whole ClientHello in one record.
pub(crate) fn x25519_share(
    received: &[u8],
    server_groups: impl Fn(NamedGroup) -> bool,
) -> Option<[u8; 32]> {
    if *received.first()? != HANDSHAKE {
        return None;
    }
    let header = received.get(..RECORD_HEADER)?;
    let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
    let record = received.get(RECORD_HEADER..RECORD_HEADER + len)?;
    let hello = HelloParts::parse(record)?;
    let (mut tls13, mut first_group, mut share) = (false, None, None);
    hello.each_extension(|kind, data| {
        match kind {
            EXT_SUPPORTED_VERSIONS => tls13 = offers_tls13(data)?,
            EXT_SUPPORTED_GROUPS => {
                let groups = Cursor(data).vec16()?;
                first_group = groups
                    .chunks_exact(2)
                    .map(|g| u16::from_be_bytes([g[0], g[1]]))
                    .find(|&g| server_groups(NamedGroup::from(g)));
            }
            EXT_KEY_SHARE => share = x25519_entry(data),
            _ => {}
        }
        Some(())
    })?;
    (tls13 && first_group == Some(X25519))
        .then_some(share)
        .flatten()
}

/// The 32-byte X25519 entry of a ClientHello's key_share extension.
fn x25519_entry(data: &[u8]) -> Option<[u8; 32]> {
    let mut entries = Cursor(Cursor(data).vec16()?);
    while !entries.0.is_empty() {
        let group = entries.u16()?;
        let key = entries.vec16()?;
        if group == X25519 {
            return key.try_into().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests;
