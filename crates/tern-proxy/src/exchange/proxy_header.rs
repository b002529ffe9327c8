//! The PROXY protocol header sent at the start of a connection to a server with
//! `proxy_protocol` (HAProxy's `send-proxy`, `send-proxy-v2`; spec: HAProxy's
//! doc/proxy-protocol.txt).
//!
//! Why tern writes it itself: both forms are a few dozen bytes of fixed layout, and only the
//! sending side is needed, without TLVs; a dependency would bring a parser tern never runs.
//! - **v1** is one text line: `PROXY TCP4 <src> <dst> <sport> <dport>\r\n` (`TCP6` for IPv6),
//!   or `PROXY UNKNOWN\r\n` when the addresses are unknown or of different families.
//! - **v2** is binary: a 12-byte signature, version and command (`0x21` PROXY, `0x20` LOCAL),
//!   family and transport (`0x11` TCP over IPv4, `0x21` TCP over IPv6, `0x00` unspecified), the
//!   length of what follows (big endian), then source address, destination address, source
//!   port, destination port.
//!
//! A health check is a connection of tern's own, not a client's: v2 says so with the LOCAL
//! command, v1 (which has no such command) with `UNKNOWN`, as HAProxy does.

use std::io::Write;
use std::net::IpAddr;

use tern_config::ProxyProtocol;

/// The v2 signature.
const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// Version 2, command PROXY (a relayed connection).
const V2_PROXY: u8 = 0x21;
/// Version 2, command LOCAL (a connection of the proxy's own, such as a health check).
const V2_LOCAL: u8 = 0x20;
/// Family and transport: TCP over IPv4.
const V2_TCP4: u8 = 0x11;
/// Family and transport: TCP over IPv6.
const V2_TCP6: u8 = 0x21;
/// Family and transport: unspecified (no addresses follow).
const V2_UNSPEC: u8 = 0x00;

/// What the header tells the server about the connection (`Client`: the client's address and
/// the one it connected to; `Unknown`: addresses that could not be read; `Local`: a health
/// check). The type is the one the received headers are parsed into (tern-proxy-protocol).
pub(crate) use tern_proxy_protocol::Origin;

/// The header of `version` for `origin`.
pub(crate) fn header(version: ProxyProtocol, origin: Origin) -> Vec<u8> {
    match version {
        ProxyProtocol::V1 => v1(origin),
        ProxyProtocol::V2 => v2(origin),
    }
}

/// The text form: at most 107 bytes.
fn v1(origin: Origin) -> Vec<u8> {
    let mut out = Vec::with_capacity(108);
    let (source, destination) = match origin {
        Origin::Client {
            source,
            destination,
        } if source.is_ipv4() == destination.is_ipv4() => (source, destination),
        _ => {
            out.extend_from_slice(b"PROXY UNKNOWN\r\n");
            return out;
        }
    };
    let family = if source.is_ipv4() { "TCP4" } else { "TCP6" };
    // Writing into a Vec cannot fail.
    let _ = write!(
        out,
        "PROXY {family} {} {} {} {}\r\n",
        source.ip(),
        destination.ip(),
        source.port(),
        destination.port()
    );
    out
}

/// The binary form: 16 bytes, then 12 (IPv4) or 36 (IPv6) of addresses.
fn v2(origin: Origin) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + 36);
    out.extend_from_slice(&V2_SIGNATURE);
    let (source, destination) = match origin {
        Origin::Client {
            source,
            destination,
        } => (source, destination),
        Origin::Unknown | Origin::Local => {
            let command = if origin == Origin::Local {
                V2_LOCAL
            } else {
                V2_PROXY
            };
            out.extend_from_slice(&[command, V2_UNSPEC, 0, 0]);
            return out;
        }
    };
    match (source.ip(), destination.ip()) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => {
            out.extend_from_slice(&[V2_PROXY, V2_TCP4, 0, 12]);
            out.extend_from_slice(&src.octets());
            out.extend_from_slice(&dst.octets());
        }
        (IpAddr::V6(src), IpAddr::V6(dst)) => {
            out.extend_from_slice(&[V2_PROXY, V2_TCP6, 0, 36]);
            out.extend_from_slice(&src.octets());
            out.extend_from_slice(&dst.octets());
        }
        // Both ends of one TCP socket have one family; should they not, say nothing.
        _ => {
            out.extend_from_slice(&[V2_PROXY, V2_UNSPEC, 0, 0]);
            return out;
        }
    }
    out.extend_from_slice(&source.port().to_be_bytes());
    out.extend_from_slice(&destination.port().to_be_bytes());
    out
}

#[cfg(test)]
mod tests;
