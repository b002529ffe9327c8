//! The PROXY protocol header received at the start of a connection on a bind with
//! `accept_proxy` (HAProxy's `accept-proxy`): the addresses of the client as the proxy in front
//! of tern saw them, which then stand for the connection's own everywhere (logs, `src` and
//! `dst_port` conditions, stickiness, `source` hashing, X-Forwarded-For, the PROXY header sent
//! on to servers).
//!
//! It is read first, before the TLS handshake, since the header precedes everything on the wire.
//! The parser (crate tern-proxy-protocol) has no I/O; here the bytes are taken off the socket without ever
//! reading past the header's end, so the ClientHello or the request that follows stays in the
//! kernel for the next reader:
//!
//! 1. peek what has arrived;
//! 2. the header is complete in it: read exactly its length (the bytes are there: no wait);
//! 3. it is a correct beginning: every byte peeked belongs to the header, so read them all
//!    (the next peek then waits for new bytes instead of spinning on the same ones) and peek
//!    again.
//!
//! A header usually arrives in one segment: one peek and one read. The whole wait is bounded by
//! the frontend's `timeouts.handshake` (the setting-up of the connection; on a TLS bind the TLS
//! handshake then has its own full `handshake` timeout). Anything else — not a PROXY header,
//! malformed, cut short by the close, late — closes the connection before any server sees it,
//! and counts in the frontend's `proxy_errors`.
//!
//! A bind with `accept_proxy_from` ([`Expect::From`]) expects the header only from the listed
//! sources (the proxies in front, HAProxy's `tcp-request connection expect-proxy layer4 if {
//! src ... }`); connections from anywhere else are read as they come, with their own
//! addresses, so one port serves both the proxy and direct clients and only the proxy can
//! choose the address tern believes.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tern_config::{Bind, IpNet};

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tracing::debug;

use tern_proxy_protocol::{Header, Origin, Parsed, Refused, Tlvs, MAX_HEADER};

use crate::listen::accept::Acceptor;
use crate::stats::{bump, FrontendCounters};

/// What the first peek reads: a v1 line, or a v2 header with IPv6 addresses and a few TLVs.
const FIRST_PEEK: usize = 256;

/// Which connections of a bind open with a PROXY header.
#[derive(Debug, Clone)]
pub(crate) enum Expect {
    /// None (no `accept_proxy`).
    Never,
    /// Every connection (`accept_proxy`).
    Always,
    /// Those from these sources (`accept_proxy_from`).
    From(Arc<[IpNet]>),
}

impl Expect {
    /// What `bind` expects.
    pub(crate) fn of(bind: &Bind) -> Self {
        match (bind.accept_proxy, bind.accept_proxy_from.is_empty()) {
            (false, _) => Expect::Never,
            (true, true) => Expect::Always,
            (true, false) => Expect::From(bind.accept_proxy_from.as_slice().into()),
        }
    }

    /// Whether a connection from `source` must open with the header.
    pub(crate) fn from(&self, source: IpAddr) -> bool {
        match self {
            Expect::Never => false,
            Expect::Always => true,
            Expect::From(nets) => nets.iter().any(|net| net.contains(source)),
        }
    }
}

/// The client's addresses as the session uses them, and the TLVs of the PROXY v2 header that
/// carried them (`fc_pp_tlv`, `proxy_v2_tlvs`).
///
/// The TLVs share one allocation with the carried local address, so a connection without them
/// holds no more than the two addresses: the session's task keeps this for its whole life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Addrs {
    /// The client: the socket's peer, or the source a PROXY header carried.
    pub peer: SocketAddr,
    local: Local,
}

/// Where the address the client connected to comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Local {
    /// The socket's own (read with `getsockname` only when needed).
    Socket,
    /// A PROXY header's, without TLVs.
    Carried(SocketAddr),
    /// A PROXY v2 header's, with TLVs.
    WithTlvs(Arc<Proxied>),
}

/// What a PROXY v2 header with TLVs gave the session.
#[derive(Debug, PartialEq, Eq)]
struct Proxied {
    local: SocketAddr,
    tlvs: Tlvs,
}

impl Addrs {
    /// `peer`, and the address the stream itself says the client connected to.
    pub(crate) fn stream(peer: SocketAddr) -> Self {
        Self {
            peer,
            local: Local::Socket,
        }
    }

    /// The addresses a PROXY header carried, with its v2 TLVs (`tlvs`, kept only when one of
    /// them can be read).
    pub(crate) fn carried(peer: SocketAddr, local: SocketAddr, tlvs: Tlvs) -> Self {
        let local = if tlvs.is_empty() {
            Local::Carried(local)
        } else {
            Local::WithTlvs(Arc::new(Proxied { local, tlvs }))
        };
        Self { peer, local }
    }

    /// The address the client connected to, when a PROXY header carried it; `None`: the
    /// socket's own.
    pub(crate) fn local(&self) -> Option<SocketAddr> {
        match &self.local {
            Local::Socket => None,
            Local::Carried(local) => Some(*local),
            Local::WithTlvs(proxied) => Some(proxied.local),
        }
    }

    /// The TLVs of the PROXY v2 header the connection opened with, if it had any.
    pub(crate) fn pp_tlvs(&self) -> Option<&Tlvs> {
        match &self.local {
            Local::WithTlvs(proxied) => Some(&proxied.tlvs),
            _ => None,
        }
    }
}

/// The addresses of a connection just accepted on `frontend`: its socket's, or on a bind with
/// `accept_proxy` those of its PROXY header; `None` when the connection must be closed.
/// A stop closes a connection still waiting for its header, as it does one in its TLS handshake.
pub(crate) async fn addresses_of<A: Acceptor>(
    a: &A,
    frontend: usize,
    accept_proxy: bool,
    tcp: &mut TcpStream,
    peer: SocketAddr,
) -> Option<Addrs> {
    if !accept_proxy {
        return Some(Addrs::stream(peer));
    }
    let h = a.handshakes();
    let limit = h.shared.frontend(frontend).timeouts.handshake;
    tokio::select! {
        got = receive(tcp, peer, limit, &h.stats.frontends[frontend]) => got,
        () = a.life().closing_idle() => None,
    }
}

/// Reads the PROXY header on `tcp` (whose peer is `peer`) within `limit`: the addresses to use,
/// or `None` when the connection must be closed (counted in `proxy_errors`).
async fn receive(
    tcp: &mut TcpStream,
    peer: SocketAddr,
    limit: Duration,
    counters: &FrontendCounters,
) -> Option<Addrs> {
    let why = match tokio::time::timeout(limit, read(tcp)).await {
        Ok(Ok(header)) => return Some(addresses(header, peer)),
        Ok(Err(why)) => why,
        Err(_) => Refused("no complete PROXY header within the handshake timeout"),
    };
    bump(&counters.proxy_errors);
    debug!(%peer, why = why.0, "PROXY protocol header refused: closing the connection");
    None
}

/// The addresses `header` gives the session: the carried ones, else the socket's.
fn addresses(header: Header, peer: SocketAddr) -> Addrs {
    match header.origin {
        Origin::Client {
            source,
            destination,
        } => {
            debug!(
                %peer, client = %source, alpn = ?header.tlvs.alpn.as_deref().map(String::from_utf8_lossy),
                authority = ?header.tlvs.authority.as_deref().map(String::from_utf8_lossy),
                ssl = header.tlvs.client_ssl(), crc32c = header.tlvs.crc32c,
                other_tlvs = ?header.tlvs.others.iter().map(|(kind, _)| *kind).collect::<Vec<_>>(),
                "PROXY header received"
            );
            Addrs::carried(source, destination, header.tlvs)
        }
        Origin::Unknown | Origin::Local => Addrs::stream(peer),
    }
}

/// Takes the header off the socket, and nothing after it.
async fn read(tcp: &mut TcpStream) -> Result<Header, Refused> {
    let mut buf = vec![0u8; FIRST_PEEK];
    let mut have = 0;
    loop {
        if have == buf.len() {
            // Only a long v2 header gets here; the parser refuses one beyond MAX_HEADER.
            buf.resize(MAX_HEADER, 0);
        }
        let n = tcp.peek(&mut buf[have..]).await.map_err(io_refused)?;
        if n == 0 {
            return Err(Refused(
                "connection closed before the end of the PROXY header",
            ));
        }
        match tern_proxy_protocol::parse(&buf[..have + n])? {
            Parsed::Complete(header) => {
                tcp.read_exact(&mut buf[have..header.len])
                    .await
                    .map_err(io_refused)?;
                return Ok(header);
            }
            Parsed::Partial => {
                tcp.read_exact(&mut buf[have..have + n])
                    .await
                    .map_err(io_refused)?;
                have += n;
            }
        }
    }
}

fn io_refused(_: io::Error) -> Refused {
    Refused("connection failed before the end of the PROXY header")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tlvs_cost_a_connection_without_them_nothing() {
        // What the session's task keeps for every connection: two addresses, as before the
        // TLVs had a place.
        let two = std::mem::size_of::<(SocketAddr, Option<SocketAddr>)>();
        assert_eq!(std::mem::size_of::<Addrs>(), two);
    }

    #[test]
    fn tlvs_are_kept_only_when_one_can_be_read() {
        let peer = SocketAddr::from(([192, 0, 2, 1], 1000));
        let local = SocketAddr::from(([10, 0, 0, 1], 443));
        let none = Addrs::carried(peer, local, Tlvs::default());
        assert_eq!((none.local(), none.pp_tlvs()), (Some(local), None));
        let tlvs = Tlvs {
            others: vec![(0xE1, b"x".to_vec())],
            ..Tlvs::default()
        };
        let with = Addrs::carried(peer, local, tlvs);
        assert_eq!(with.local(), Some(local));
        assert_eq!(with.pp_tlvs().and_then(|t| t.value(0xE1)), Some(&b"x"[..]));
        assert_eq!(Addrs::stream(peer).local(), None);
    }
}
