//! `[[peers]]`: a peers section as written (checked in `validate/peers.rs`).

use serde::Deserialize;

/// `[[peers]] name = "fleet", local_peer = "lb1", bind = "0.0.0.0:10000",
/// peer = [{ name = "lb1", address = "10.0.0.1:10000" }, ...]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPeers {
    pub name: Option<String>,
    pub local_peer: Option<String>,
    pub bind: Option<String>,
    pub peer: Option<Vec<RawPeer>>,
}

/// One `peer` of a `[[peers]]` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPeer {
    pub name: Option<String>,
    pub address: Option<String>,
}
