//! Hashing of request keys (client address, path, query parameter, header value) and the
//! extraction of a query parameter.
//!
//! The hash reads the key 8 bytes at a time, each word folded in with a xor, a multiplication
//! by an odd constant and a rotation (each step a bijection, so keys that differ in one word never
//! collide), then the SplitMix64 finalizer spreads every input bit over the 64 output bits, which
//! both the ring (top 32 bits) and the map (multiply-shift) rely on. A byte-at-a-time hash such as
//! FNV-1a costs one dependent multiplication per byte: three times slower on a typical path.
//! Nothing here needs to resist crafted keys: a client that wants one server can always send the
//! same key. The function is fixed, not seeded: every worker and every restart must send the same
//! key to the same server, and a test pins its values.

use std::net::IpAddr;

use crate::rng::mix64;

/// An odd constant with well-mixed bits (2^64 / golden ratio).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

fn fold(h: u64, word: u64) -> u64 {
    (h ^ word).wrapping_mul(K).rotate_left(29)
}

/// Hash of a byte string (header value, query parameter value, path).
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = (bytes.len() as u64 + 1).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    let mut word = [0u8; 8];
    for chunk in &mut chunks {
        word.copy_from_slice(chunk);
        h = fold(h, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = fold(h, u64::from_le_bytes(word));
    }
    mix64(h)
}

/// Hash of a client address; an IPv4-mapped IPv6 address hashes as its IPv4 form, so a client
/// keeps its server whichever socket family it arrived on.
pub(crate) fn hash_addr(addr: IpAddr) -> u64 {
    match addr.to_canonical() {
        IpAddr::V4(v4) => hash_bytes(&v4.octets()),
        IpAddr::V6(v6) => hash_bytes(&v6.octets()),
    }
}

/// Hash of a path, combined with the query's when one is given.
pub(crate) fn hash_path(path: &[u8], query: Option<&[u8]>) -> u64 {
    let h = hash_bytes(path);
    match query {
        Some(q) => mix64(h ^ hash_bytes(q).rotate_left(32)),
        None => h,
    }
}

/// The value of the first `name=value` pair of a query string (`a=1&b=2`), the name compared
/// exactly. A name without `=` has no value and does not count.
pub(crate) fn url_param<'q>(query: &'q [u8], name: &[u8]) -> Option<&'q [u8]> {
    query.split(|&b| b == b'&').find_map(|pair| {
        let value = pair.strip_prefix(name)?;
        value.strip_prefix(b"=")
    })
}

#[cfg(test)]
mod tests;
