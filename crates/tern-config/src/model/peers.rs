//! Peers sections: the nodes that share stick tables over HAProxy's peers protocol.
//!
//! A `[[peers]]` section lists every node of a fleet by name and address, this node included
//! (`local_peer` says which one this is, as HAProxy's `localpeer`/`-L`; by default the host
//! name). This node listens at its own address (or `bind`) and connects to the others. Tables
//! that name the section (`[[table]] peers = NAME`, a backend's `stick.peers`) send their
//! entries to those peers and take theirs.

use std::net::SocketAddr;

/// A validated `[[peers]]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeersSection {
    pub name: String,
    /// This node's name among the peers.
    pub local: String,
    /// Where this node listens for its peers.
    pub bind: SocketAddr,
    /// The other peers.
    pub remotes: Vec<Peer>,
}

/// A remote peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub name: String,
    pub address: SocketAddr,
}
