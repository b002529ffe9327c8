//! The ticket key file: one key per line, base64 (standard alphabet, padding optional).
//!
//! A key is 48 bytes (16-byte name, 32-byte AES-256 key) or 80 bytes (16-byte name, 32 bytes
//! tern ignores, 32-byte AES-256 key: the layout of HAProxy's and nginx's 80-byte ticket keys,
//! so `openssl rand -base64 80` makes a key). Blank lines and lines starting with `#` are
//! skipped. The first key encrypts new tickets; every key decrypts. Key names must differ.

use std::path::Path;

use super::{TicketKey, NAME_LEN};
use crate::TlsError;

/// Reads and parses the key file at `path`.
pub(crate) fn parse_key_file(path: &Path) -> Result<Vec<TicketKey>, TlsError> {
    let text = tern_config::files::read_to_string(path).map_err(|cause| TlsError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    parse_keys(&text).map_err(|reason| TlsError::TicketKeys {
        path: path.to_path_buf(),
        reason,
    })
}

pub(crate) fn parse_keys(text: &str) -> Result<Vec<TicketKey>, String> {
    let mut keys: Vec<TicketKey> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let lineno = index + 1;
        let bytes = decode_base64(line).ok_or_else(|| format!("line {lineno}: not base64"))?;
        let (name, key) = match bytes.len() {
            48 => (&bytes[..NAME_LEN], &bytes[NAME_LEN..]),
            80 => (&bytes[..NAME_LEN], &bytes[48..]),
            n => return Err(format!("line {lineno}: {n} bytes, expected 48 or 80")),
        };
        let name: [u8; NAME_LEN] = name.try_into().map_err(|_| "bad name".to_owned())?;
        if keys.iter().any(|k| k.name == name) {
            return Err(format!("line {lineno}: repeats the name of an earlier key"));
        }
        let key: &[u8; 32] = key.try_into().map_err(|_| "bad key".to_owned())?;
        let key = TicketKey::new(name, key).ok_or_else(|| format!("line {lineno}: bad key"))?;
        keys.push(key);
    }
    if keys.is_empty() {
        return Err("no key found".to_owned());
    }
    Ok(keys)
}

/// Standard base64 (RFC 4648), `=` padding optional.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let digits = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in digits {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits must be zero padding of the last byte (at most 4 of them).
    (bits < 6 && acc == 0).then_some(out)
}

#[cfg(test)]
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    while out.len() % 4 != 0 {
        out.push('=');
    }
    out
}
