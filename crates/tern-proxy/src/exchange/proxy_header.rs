//! The PROXY protocol header sent at the start of a connection to a server with
//! `proxy_protocol` (HAProxy's `send-proxy`, `send-proxy-v2`; spec: HAProxy's
//! doc/proxy-protocol.txt).
//!
//! Why tern writes it itself: both forms are a few dozen bytes of fixed layout; a dependency
//! would bring a parser tern never runs here (the one tern does run, for headers received, is
//! crate tern-proxy-protocol, whose TLV numbers are used below).
//! - **v1** is one text line: `PROXY TCP4 <src> <dst> <sport> <dport>\r\n` (`TCP6` for IPv6),
//!   or `PROXY UNKNOWN\r\n` when the addresses are unknown or of different families.
//! - **v2** is binary: a 12-byte signature, version and command (`0x21` PROXY, `0x20` LOCAL),
//!   family and transport (`0x11` TCP over IPv4, `0x21` TCP over IPv6, `0x00` unspecified), the
//!   length of what follows (big endian), then source address, destination address, source
//!   port, destination port.
//!
//! A health check is a connection of tern's own, not a client's: v2 says so with the LOCAL
//! command, v1 (which has no such command) with `UNKNOWN`, as HAProxy does.
//!
//! When tern terminated the client's TLS, a v2 header carried addresses is followed by TLVs
//! (2.2.1 - 2.2.5) saying what the server can no longer see for itself, as hitch's
//! `write-proxy-v2` and HAProxy's `proxy-v2-options ssl,ssl-cipher,authority,alpn` do
//! ([`ClientTls`], `proxy_header/tls.rs`): `PP2_TYPE_ALPN` (the protocol ALPN chose, if any),
//! `PP2_TYPE_AUTHORITY` (the SNI, if any), and `PP2_TYPE_SSL` with the client flags
//! (`PP2_CLIENT_SSL`; `PP2_CLIENT_CERT_CONN` and `PP2_CLIENT_CERT_SESS` when the client
//! presented a certificate, which `client_auth` verified), the verify result and the
//! `PP2_SUBTYPE_SSL_VERSION` and `PP2_SUBTYPE_SSL_CIPHER` sub-TLVs (OpenSSL's names, as hitch
//! and HAProxy write them). The verify result is 0 only when a certificate was presented and
//! verified, 1 otherwise, as the spec says (HAProxy and hitch send 0 also when no certificate
//! came; a server should read the flags first, as the spec tells it to).
//!
//! A server with `proxy_v2_tlvs` (HAProxy's `set-proxy-v2-tlv-fmt`) gets one TLV per entry after
//! those, its value the entry's format evaluated for the client connection ([`Custom`],
//! `proxy_header/custom.rs`): a TLV received from the proxy in front passed on, the client's
//! address, a constant. Health checks send none, as HAProxy's (they have no client).
//!
//! A server with `proxy_v2_crc32c` (HAProxy's `proxy-v2-options crc32c`) gets a
//! `PP2_TYPE_CRC32C` TLV last in every v2 header, checks' LOCAL headers included as in HAProxy:
//! the CRC32c of the whole header with the TLV's value zeroed (2.2.2), computed by
//! tern-proxy-protocol's `append_crc32c`, the same code that verifies received ones. Off by
//! default: a loopback or TLS-protected hop has its own checksums.

use std::io::Write;
use std::net::IpAddr;

use tern_config::{ProxyProtocol, Server};

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

pub(crate) use custom::Custom;
pub(crate) use tls::ClientTls;

/// The PROXY header of a new server connection: its version, what it says about the
/// addresses, and the client's TLS when tern terminated it (v2 TLVs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Proxied<'a> {
    pub version: ProxyProtocol,
    pub origin: Origin,
    pub tls: Option<ClientTls<'a>>,
    /// v2 only: a `PP2_TYPE_CRC32C` TLV seals the header (`proxy_v2_crc32c`).
    pub crc32c: bool,
    /// v2 only: the server's `proxy_v2_tlvs`, when it has some.
    pub custom: Option<Custom<'a>>,
}

impl Proxied<'_> {
    /// The header's bytes.
    pub(crate) fn header(&self) -> Vec<u8> {
        match self.version {
            ProxyProtocol::V1 => v1(self.origin),
            ProxyProtocol::V2 => {
                let mut out = v2(self.origin, self.tls.as_ref(), self.custom.as_ref());
                if self.crc32c {
                    // A v2 header of at most a few hundred bytes: it always takes the TLV.
                    tern_proxy_protocol::append_crc32c(&mut out);
                }
                out
            }
        }
    }

    /// The header of a health check of `server` (a connection of tern's own), when it has
    /// `proxy_protocol`.
    pub(crate) fn local(server: &Server) -> Option<Proxied<'static>> {
        Some(Proxied {
            version: server.proxy_protocol?,
            origin: Origin::Local,
            tls: None,
            crc32c: server.proxy_v2.crc32c,
            custom: None,
        })
    }
}

/// The header of `version` for `origin`, without TLVs.
#[cfg(test)]
pub(crate) fn header(version: ProxyProtocol, origin: Origin) -> Vec<u8> {
    Proxied {
        version,
        origin,
        tls: None,
        crc32c: false,
        custom: None,
    }
    .header()
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

/// The binary form: 16 bytes, then 12 (IPv4) or 36 (IPv6) of addresses, then the TLVs of
/// `tls` and of `custom`.
fn v2(origin: Origin, tls: Option<&ClientTls<'_>>, custom: Option<&Custom<'_>>) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + 36 + tls.map_or(0, |_| 128));
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
    if let Some(tls) = tls {
        tls.write_tlvs(&mut out, |kind| custom.is_some_and(|c| c.sets(kind)));
    }
    if let Some(custom) = custom {
        custom.write(source, destination, &mut out);
    }
    // The TLVs are bounded (an SNI and an ALPN protocol are at most 255 bytes each, the custom
    // ones by `MAX_V2_BODY`).
    let len = u16::try_from(out.len() - 16).unwrap_or(u16::MAX);
    out[14..16].copy_from_slice(&len.to_be_bytes());
    out
}

// The TLVs of a client's TLS.
mod tls;
// The TLVs of `proxy_v2_tlvs`.
mod custom;

#[cfg(test)]
mod tests;
