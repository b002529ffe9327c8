//! The TLVs of a server's `proxy_v2_tlvs` (HAProxy's `set-proxy-v2-tlv-fmt(<id>) <fmt>`):
//! formats evaluated for the client connection when a server connection opens, each written as
//! one TLV after tern's own.
//!
//! Values are the formats' bytes as they are, no escaping: a TLV is binary, and passing a
//! received TLV on (`%[fc_pp_tlv(0xE1)]`) must keep it whole. A sample that is absent writes
//! nothing, so its TLV goes with an empty value, as HAProxy sends it. The header stays within
//! what a receiver accepts (tern-proxy-protocol's `MAX_V2_BODY`, as HAProxy's default): a TLV
//! that would pass it is left out, with a debug line.

use std::io::Write;
use std::net::SocketAddr;

use tern_config::{Fetch, Piece, ProxyV2Tlv};
use tern_proxy_protocol::{Tlvs, MAX_V2_BODY, PP2_TYPE_ALPN, PP2_TYPE_AUTHORITY};

use super::tls::tlv;

/// A server's `proxy_v2_tlvs`, with what their formats read of the client connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Custom<'a> {
    pub formats: &'a [ProxyV2Tlv],
    /// Whether the client connection is TLS (`ssl_fc`).
    pub tls: bool,
    /// The server name of its ClientHello (`ssl_fc_sni`).
    pub sni: Option<&'a str>,
    /// The TLVs of the PROXY v2 header it opened with (`fc_pp_tlv`).
    pub received: Option<&'a Tlvs>,
}

impl Custom<'_> {
    /// Whether a format sets TLV `kind`, whose own value tern then does not write (ALPN,
    /// authority: the operator's replaces it).
    pub(super) fn sets(&self, kind: u8) -> bool {
        matches!(kind, PP2_TYPE_ALPN | PP2_TYPE_AUTHORITY)
            && self.formats.iter().any(|t| t.id == kind)
    }

    /// Appends one TLV per format to the v2 header `out` (16 bytes of preamble, then its body),
    /// for a client at `source` connected to `destination`.
    pub(super) fn write(&self, source: SocketAddr, destination: SocketAddr, out: &mut Vec<u8>) {
        let mut value = Vec::new();
        for format in self.formats {
            value.clear();
            for piece in &format.format.pieces {
                match piece {
                    Piece::Text(text) => value.extend_from_slice(text.as_bytes()),
                    Piece::Fetch(fetch) => self.sample(fetch, source, destination, &mut value),
                }
            }
            if out.len() - 16 + 3 + value.len() > MAX_V2_BODY {
                tracing::debug!(
                    tlv = format.id,
                    len = value.len(),
                    "proxy_v2_tlvs: left out, the PROXY header would pass its size limit"
                );
                continue;
            }
            tlv(out, format.id, &value);
        }
    }

    /// Appends the sample `fetch`; validation allows connection samples only.
    fn sample(
        &self,
        fetch: &Fetch,
        source: SocketAddr,
        destination: SocketAddr,
        out: &mut Vec<u8>,
    ) {
        // Writing to a Vec cannot fail.
        match fetch {
            Fetch::Src => {
                let _ = write!(out, "{}", source.ip().to_canonical());
            }
            Fetch::DstPort => {
                let _ = write!(out, "{}", destination.port());
            }
            Fetch::Tls => out.push(if self.tls { b'1' } else { b'0' }),
            Fetch::Sni => out.extend_from_slice(self.sni.unwrap_or_default().as_bytes()),
            Fetch::PpTlv(id) => {
                let value = self.received.and_then(|t| t.value(*id));
                out.extend_from_slice(value.unwrap_or_default());
            }
            _ => {}
        }
    }
}
