//! `tcp_request.connection` rules (HAProxy's `tcp-request connection`): run on a new
//! connection before anything is read from it (before the TLS handshake), in HTTP and TCP
//! frontends alike.
//!
//! Every `track-sc` rule whose condition holds tracks the client for the whole connection;
//! the first `accept`, `reject` or `silent-drop` whose condition holds decides. Conditions see
//! the addresses and the counters only (validation refuses the rest). A frontend without
//! connection rules skips this entirely.

use std::cell::RefCell;
use std::net::IpAddr;

use tern_config::{ConnectionAction, CounterFetch, Facts, Fetch, TableKey};

use crate::stats::bump;
use crate::track::table::Key;
use crate::track::Tracking;
use crate::worker::Worker;

/// What the rules decided.
pub(crate) enum Decision {
    /// Serve the connection, with what it tracks.
    Accept(Tracking),
    /// Close it (`reject`).
    Reject,
    /// Reset it (`silent-drop`).
    SilentDrop,
}

/// What a connection rule can read.
struct ConnectionFacts<'a> {
    peer: IpAddr,
    local_port: u16,
    tls: bool,
    track: &'a RefCell<Tracking>,
}

impl Facts for ConnectionFacts<'_> {
    fn method(&self) -> &[u8] {
        b""
    }
    fn url(&self) -> &[u8] {
        b""
    }
    fn path(&self) -> &[u8] {
        b""
    }
    fn any_header(&self, _: &str, _: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        false
    }
    fn version(&self) -> (u8, u8) {
        (1, 1)
    }
    fn src(&self) -> IpAddr {
        self.peer
    }
    fn dst_port(&self) -> u16 {
        self.local_port
    }
    fn tls(&self) -> bool {
        self.tls
    }
    fn sni(&self) -> Option<&str> {
        None
    }
    fn counter(&self, fetch: &CounterFetch) -> Option<u64> {
        self.track.try_borrow().ok()?.counter(fetch, self.peer)
    }
}

/// Runs the connection rules of `frontend` on a client at `peer` (`local_port`: asked only
/// when a rule reads it).
pub(crate) fn run(
    w: &Worker,
    frontend: usize,
    peer: IpAddr,
    tls: bool,
    local_port: impl FnOnce() -> u16,
) -> Decision {
    let rules = &w.shared.frontend(frontend).tcp_request.connection;
    let track = RefCell::new(Tracking::new(&w.shared.tables));
    if rules.is_empty() {
        return Decision::Accept(track.into_inner());
    }
    let facts = ConnectionFacts {
        peer: peer.to_canonical(),
        local_port: local_port(),
        tls,
        track: &track,
    };
    for rule in rules {
        if !rule.condition.matches(&facts) {
            continue;
        }
        match &rule.action {
            ConnectionAction::Accept => break,
            ConnectionAction::Track(t) => {
                let mut tracking = track.borrow_mut();
                let key = match (&t.key, tracking.key_type(t.table.index)) {
                    (Fetch::Src, Some(TableKey::Ip | TableKey::Ipv6)) => Key::Ip(facts.peer),
                    (Fetch::DstPort, Some(TableKey::Integer)) => {
                        Key::Int(u64::from(facts.local_port))
                    }
                    (Fetch::Src, Some(TableKey::String)) => {
                        Key::Text(facts.peer.to_string().into_bytes().into())
                    }
                    _ => continue,
                };
                tracking.track(t.slot, t.table.index, key, true);
            }
            ConnectionAction::Reject | ConnectionAction::SilentDrop => {
                bump(&w.stats.frontends[frontend].denied);
                return match rule.action {
                    ConnectionAction::Reject => Decision::Reject,
                    _ => Decision::SilentDrop,
                };
            }
        }
    }
    Decision::Accept(track.into_inner())
}

/// Whether a frontend's connection rules read the local port.
pub(crate) fn reads_local_port(w: &Worker, frontend: usize) -> bool {
    w.shared
        .frontend(frontend)
        .tcp_request
        .connection
        .iter()
        .any(|r| {
            r.condition.fetches().any(|f| *f == Fetch::DstPort)
                || matches!(&r.action, ConnectionAction::Track(t) if t.key == Fetch::DstPort)
        })
}
