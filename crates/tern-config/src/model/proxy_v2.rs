//! What a server's PROXY v2 header carries beyond the addresses and the TLVs of the client's
//! TLS (which tern always sends when it terminated that TLS): HAProxy's `proxy-v2-options
//! crc32c`, and TLVs of the operator's own (`set-proxy-v2-tlv-fmt`).

use super::http_rules::ValueFormat;

/// Options of the PROXY v2 header sent to a server (`proxy_protocol = "v2"`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyV2 {
    /// A `PP2_TYPE_CRC32C` TLV seals each header (`proxy_v2_crc32c`, HAProxy's
    /// `proxy-v2-options crc32c`): the receiver refuses a header altered on the way.
    pub crc32c: bool,
    /// TLVs whose values are formatted per connection (`proxy_v2_tlvs`, HAProxy's
    /// `set-proxy-v2-tlv-fmt(<id>) <fmt>`), written in this order after tern's own.
    pub tlvs: Vec<ProxyV2Tlv>,
}

/// One TLV of `proxy_v2_tlvs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyV2Tlv {
    /// The TLV's type (`0xE0`-`0xEF` are the custom range).
    pub id: u8,
    /// Its value: text and connection samples (`%[fc_pp_tlv(0xE1)]` passes a received TLV on).
    pub format: ValueFormat,
}
