//! The PROXY protocol (HAProxy's doc/proxy-protocol.txt) as tern reads it, with no I/O: what a
//! proxy in front of tern says about the client's connection, at the start of that connection.
//!
//! Why a crate of its own: the header is untrusted input read before anything else on a bind
//! with `accept_proxy`, so its parser is fuzzed (`fuzz/`, checks in tern-fuzz) and tested apart
//! from the data path, with one dependency only (`crc32c`, for the checksum TLV a v2 header may
//! carry; as tern-h1 is for HTTP/1.1 heads). The TLV type numbers are public: tern-proxy writes
//! the same TLVs in the headers it sends, and [`append_crc32c`] seals them with the checksum
//! [`parse`] verifies (one function computes it for both). The
//! socket side (peek, exact reads, the timeout) is tern-proxy's `listen/proxy_in.rs`; the
//! header tern *sends* to servers is written by tern-proxy's `exchange/proxy_header.rs`, with
//! the same [`Origin`].

#![forbid(unsafe_code)]

mod crc;
mod parse;

use std::net::SocketAddr;

pub use crc::{append_crc32c, crc32c_of};
pub use parse::{
    parse, Header, Parsed, Refused, Ssl, Tlvs, MAX_HEADER, MAX_V2_BODY, PP2_CLIENT_CERT_CONN,
    PP2_CLIENT_CERT_SESS, PP2_CLIENT_SSL, PP2_SUBTYPE_SSL_CIPHER, PP2_SUBTYPE_SSL_CN,
    PP2_SUBTYPE_SSL_VERSION, PP2_TYPE_ALPN, PP2_TYPE_AUTHORITY, PP2_TYPE_CRC32C, PP2_TYPE_NOOP,
    PP2_TYPE_SSL, V1_MAX,
};

/// What a PROXY header says about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A client's connection relayed by a proxy: the client's address (`source`) and the
    /// address it connected to (`destination`, the proxy's own).
    Client {
        source: SocketAddr,
        destination: SocketAddr,
    },
    /// A client's connection whose addresses are not told (v1 `UNKNOWN`, v2 unspecified or
    /// Unix families): the receiver uses the connection's own.
    Unknown,
    /// A connection of the proxy's own, such as a health check (v2 LOCAL).
    Local,
}
