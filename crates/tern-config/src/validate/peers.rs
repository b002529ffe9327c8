//! `[[peers]]` sections (see `model/peers.rs`), and the `peers` key of the tables naming them.

use std::net::SocketAddr;

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{Peer, PeersSection};
use crate::raw::RawPeers;

/// The host name, HAProxy's default local peer name.
fn hostname() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = text.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

impl Checker<'_> {
    /// The `[[peers]]` list, at `path`; remembers the names for [`Checker::peers_ref`].
    pub(super) fn peers(&mut self, raw: &[RawPeers], path: &KeyPath) -> Vec<PeersSection> {
        let sections: Vec<PeersSection> = raw
            .iter()
            .enumerate()
            .map(|(i, p)| self.peers_section(p, &path.index(i)))
            .collect();
        self.unique_names("peers", raw.iter().map(|p| p.name.as_deref()));
        self.peers_names = sections.iter().map(|s| s.name.clone()).collect();
        sections
    }

    fn peers_section(&mut self, raw: &RawPeers, at: &KeyPath) -> PeersSection {
        let name = self.name(at, raw.name.as_deref());
        let mut peers: Vec<Peer> = Vec::new();
        let list = raw.peer.as_deref().unwrap_or_default();
        if list.is_empty() {
            self.issue(
                at,
                "missing key `peer`: every node of the fleet, this one included, as { name, address }",
            );
        }
        let local = match raw.local_peer.as_deref() {
            Some(l) => l.to_owned(),
            None => hostname().unwrap_or_default(),
        };
        for (i, p) in list.iter().enumerate() {
            let here = at.key("peer").index(i);
            let peer_name = self.name(&here, p.name.as_deref());
            if peers.iter().any(|q| q.name == peer_name) {
                self.issue(&here.key("name"), format!("duplicate peer `{peer_name}`"));
            }
            // This node's own address may come from `bind` alone (HAProxy's `server NAME`).
            let optional = peer_name == local && raw.bind.is_some() && p.address.is_none();
            let address = if optional {
                SocketAddr::from(([127, 0, 0, 1], 0))
            } else {
                self.peer_address(&here.key("address"), p.address.as_deref())
            };
            peers.push(Peer {
                name: peer_name,
                address,
            });
        }
        let bind = match peers.iter().position(|p| p.name == local) {
            Some(i) => peers.remove(i).address,
            None => {
                let listed: Vec<&str> = peers.iter().map(|p| p.name.as_str()).collect();
                let how = if raw.local_peer.is_some() {
                    "local_peer"
                } else {
                    "the host name (the default of local_peer)"
                };
                self.issue(
                    &at.key("local_peer"),
                    format!(
                        "{how} `{local}` is not a peer of this section: peers are {}",
                        listed.join(", ")
                    ),
                );
                SocketAddr::from(([127, 0, 0, 1], 0))
            }
        };
        let bind = match raw.bind.as_deref() {
            Some(text) => self.peer_address(&at.key("bind"), Some(text)),
            None => bind,
        };
        PeersSection {
            name,
            local,
            bind,
            remotes: peers,
        }
    }

    fn peer_address(&mut self, at: &KeyPath, text: Option<&str>) -> SocketAddr {
        let fallback = SocketAddr::from(([127, 0, 0, 1], 0));
        let Some(text) = text else {
            self.issue(
                at,
                "missing key `address`: IP:port, e.g. \"10.0.0.2:10000\"",
            );
            return fallback;
        };
        match text.parse::<SocketAddr>() {
            Ok(a) if a.port() != 0 => a,
            _ => {
                self.issue(
                    at,
                    format!("`{text}` is not an IP:port with a port above 0"),
                );
                fallback
            }
        }
    }

    /// The index of the peers section a table's `peers` names.
    pub(super) fn peers_ref(&mut self, at: &KeyPath, name: Option<&str>) -> Option<usize> {
        let name = name?;
        let found = self.peers_names.iter().position(|n| n == name);
        if found.is_none() {
            let known = if self.peers_names.is_empty() {
                "the configuration declares no [[peers]]".to_owned()
            } else {
                format!("peers sections are {}", self.peers_names.join(", "))
            };
            self.issue(at, format!("unknown peers section `{name}`: {known}"));
        }
        found
    }
}
