//! What a server's PROXY v2 header carries beyond the addresses and the TLVs of the client's
//! TLS (which tern always sends when it terminated that TLS): HAProxy's `proxy-v2-options
//! crc32c`.

/// Options of the PROXY v2 header sent to a server (`proxy_protocol = "v2"`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyV2 {
    /// A `PP2_TYPE_CRC32C` TLV seals each header (`proxy_v2_crc32c`, HAProxy's
    /// `proxy-v2-options crc32c`): the receiver refuses a header altered on the way.
    pub crc32c: bool,
}
