//! PROXY v2 TLV types as configurations name them (`fc_pp_tlv(<id>)`, `proxy_v2_tlvs`), and a
//! server's `proxy_v2_*` options.
//!
//! A TLV type is a number (decimal, `0x` hexadecimal or `0` octal, as HAProxy's `strtoul(.., 0)`
//! reads it) or one of the names HAProxy's `fc_pp_tlv` accepts (doc/proxy-protocol.txt 2.2).
//! The TLVs a server gets from `proxy_v2_tlvs` are formatted per connection from what the
//! connection knows (`src`, `dst_port`, `ssl_fc`, `ssl_fc_sni`, `fc_pp_tlv`): the header is
//! sent once per server connection, before any request, so a request's sample has no place in
//! it.

use super::http_rules::value;
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{Fetch, Piece, ProxyV2, ProxyV2Tlv};
use crate::raw::{RawProxyV2Tlv, RawServer, RawTlvId, TextOrInt};

/// HAProxy's names of TLV types (its `smp_check_tlv_type`).
const NAMES: &[(&str, u8)] = &[
    ("ALPN", 0x01),
    ("AUTHORITY", 0x02),
    ("CRC32C", 0x03),
    ("NOOP", 0x04),
    ("UNIQUE_ID", 0x05),
    ("SSL", 0x20),
    ("SSL_VERSION", 0x21),
    ("SSL_CN", 0x22),
    ("SSL_CIPHER", 0x23),
    ("SSL_SIG_ALG", 0x24),
    ("SSL_KEY_ALG", 0x25),
    ("NETNS", 0x30),
];

/// A TLV type as written in `fc_pp_tlv(<id>)` or `set-proxy-v2-tlv-fmt(<id>)`.
pub(crate) fn tlv_id(text: &str) -> Result<u8, String> {
    let text = text.trim();
    if let Some((_, id)) = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(text)) {
        return Ok(*id);
    }
    let number = if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u32::from_str_radix(hex, 16)
    } else if text.len() > 1 && text.starts_with('0') {
        u32::from_str_radix(&text[1..], 8)
    } else {
        text.parse::<u32>()
    };
    match number {
        Ok(n) => u8::try_from(n).map_err(|_| format!("TLV type `{text}` is over 0xFF")),
        Err(_) => Err(format!(
            "`{text}` is not a TLV type: write a number (0xE1) or one of {}",
            NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Why tern refuses to send TLV `id` from a format; `None` when it may.
fn reserved(id: u8) -> Option<&'static str> {
    match id {
        0x03 => {
            Some("0x03 is CRC32C, a checksum of the whole header: use `proxy_v2_crc32c = true`")
        }
        0x04 => Some("0x04 is NOOP, padding that receivers skip"),
        0x20..=0x25 => Some(
            "0x20-0x25 are PP2_TYPE_SSL and its sub-TLVs, which tern writes itself when it \
             terminated the client's TLS",
        ),
        _ => None,
    }
}

/// Whether `fetch` can be read when a server connection opens (see the module doc).
fn known_at_connect(fetch: &Fetch) -> bool {
    matches!(
        fetch,
        Fetch::Src | Fetch::DstPort | Fetch::Tls | Fetch::Sni | Fetch::PpTlv(_)
    )
}

impl Checker<'_> {
    /// `proxy_v2_*`: options of a v2 header, refused on a server that sends none (they would
    /// do nothing, and a checksum the operator believes is sent is not).
    pub(super) fn proxy_v2(&mut self, raw: &RawServer, path: &KeyPath) -> ProxyV2 {
        let v2 = raw
            .proxy_protocol
            .as_deref()
            .is_some_and(|p| p.eq_ignore_ascii_case("v2"));
        let crc32c = raw.proxy_v2_crc32c.unwrap_or(false);
        if crc32c && !v2 {
            let message = "`proxy_v2_crc32c` needs `proxy_protocol = \"v2\"` on the same server";
            self.issue(&path.key("proxy_v2_crc32c"), message);
        }
        let raw_tlvs = raw.proxy_v2_tlvs.as_deref().unwrap_or_default();
        if !raw_tlvs.is_empty() && !v2 {
            let message = "`proxy_v2_tlvs` needs `proxy_protocol = \"v2\"` on the same server";
            self.issue(&path.key("proxy_v2_tlvs"), message);
        }
        let at = path.key("proxy_v2_tlvs");
        let mut tlvs: Vec<ProxyV2Tlv> = Vec::new();
        for (i, raw) in raw_tlvs.iter().enumerate() {
            if let Some(tlv) = self.proxy_v2_tlv(raw, &at.index(i)) {
                if tlvs.iter().any(|t| t.id == tlv.id) {
                    let message = format!("TLV {:#04X} is already set by this server", tlv.id);
                    self.issue(&at.index(i).key("id"), message);
                }
                tlvs.push(tlv);
            }
        }
        ProxyV2 { crc32c, tlvs }
    }

    /// One entry of `proxy_v2_tlvs`.
    fn proxy_v2_tlv(&mut self, raw: &RawProxyV2Tlv, at: &KeyPath) -> Option<ProxyV2Tlv> {
        let id = match &raw.id {
            None => Err("missing key `id`: the TLV's type, e.g. 0xE1".to_owned()),
            Some(RawTlvId(TextOrInt::Int(n))) => u8::try_from(*n)
                .map_err(|_| format!("TLV type {n} is not within 0-255 (0x00-0xFF)")),
            Some(RawTlvId(TextOrInt::Text(text))) => tlv_id(text),
        };
        let id = id
            .and_then(|id| reserved(id).map_or(Ok(id), |why| Err(why.to_owned())))
            .map_err(|e| self.issue(&at.key("id"), e))
            .ok();
        let Some(text) = &raw.format else {
            self.issue(
                at,
                "missing key `format`: the TLV's value, e.g. \"%[fc_pp_tlv(0xE1)]\"",
            );
            return None;
        };
        let format = value::parse(text)
            .and_then(|format| {
                match format.pieces.iter().find_map(|p| match p {
                    Piece::Fetch(f) if !known_at_connect(f) => Some(f),
                    _ => None,
                }) {
                    Some(fetch) => Err(format!(
                        "`%[{fetch}]` is not known when a server connection opens (the header \
                         is sent before any request); use src, dst_port, ssl_fc, ssl_fc_sni or \
                         fc_pp_tlv(<id>)"
                    )),
                    None => Ok(format),
                }
            })
            .map_err(|e| self.issue(&at.key("format"), e))
            .ok()?;
        Some(ProxyV2Tlv { id: id?, format })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn tlv_types_by_number_and_by_name() {
        assert_eq!(tlv_id("0xE1").unwrap(), 0xE1);
        assert_eq!(tlv_id("0XeA").unwrap(), 0xEA);
        assert_eq!(tlv_id("225").unwrap(), 225);
        assert_eq!(tlv_id("0").unwrap(), 0);
        assert_eq!(tlv_id("010").unwrap(), 8);
        assert_eq!(tlv_id("authority").unwrap(), 0x02);
        assert_eq!(tlv_id("UNIQUE_ID").unwrap(), 0x05);
        assert_eq!(tlv_id("ssl_cn").unwrap(), 0x22);
        assert!(tlv_id("0x100").unwrap_err().contains("over 0xFF"));
        assert!(tlv_id("bogus").unwrap_err().contains("not a TLV type"));
        assert!(tlv_id("").is_err());
        assert!(tlv_id("-1").is_err());
    }

    #[test]
    fn tern_keeps_the_types_it_writes_itself() {
        assert!(reserved(0x03).unwrap().contains("proxy_v2_crc32c"));
        assert!(reserved(0x04).is_some());
        assert!(reserved(0x20).is_some());
        assert!(reserved(0x25).is_some());
        assert!(reserved(0xE1).is_none());
        assert!(reserved(0x02).is_none());
    }
}
