//! What a TCP frontend does with a connection's first bytes before choosing a backend
//! (`tcp_request`, HAProxy's `tcp-request inspect-delay` and `tcp-request content`).
//!
//! TLS passthrough routes on the server name of a ClientHello that tern relays without
//! terminating: on a plain bind, the frontend waits up to `inspect_delay` for the ClientHello,
//! keeps its bytes (they go to the server first), and lets `use_backend` and the content rules
//! read `req.ssl_sni` and `req.ssl_hello_type`. Without a complete ClientHello by then (not
//! TLS, too slow) those samples do not exist, so conditions on them are false, as in HAProxy.

use std::time::Duration;

use super::counters::Track;
use super::Condition;

/// A frontend's `tcp_request` settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TcpRequest {
    /// How long a plain connection's first bytes are awaited (`None`: not inspected, the
    /// connection is relayed at once).
    pub inspect_delay: Option<Duration>,
    /// Content rules in order; the first whose condition holds decides; none: accepted.
    pub content: Vec<TcpRule>,
    /// Rules on a new connection, before anything is read from it (HAProxy's `tcp-request
    /// connection`), in HTTP and TCP frontends: every `track` whose condition holds acts, the
    /// first `accept` or `reject` decides.
    pub connection: Vec<ConnectionRule>,
}

/// One `tcp_request.connection` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionRule {
    pub action: ConnectionAction,
    pub condition: Condition,
}

/// What a `tcp_request.connection` rule does.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectionAction {
    /// Serve the connection; later rules are not evaluated.
    Accept,
    /// Close the connection at once (counted as denied).
    Reject,
    /// Close with a reset (`silent-drop`).
    SilentDrop,
    /// Track the client in a counter table for the whole connection (`track-sc0 src`).
    Track(Track),
}

/// One `tcp_request.content` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpRule {
    /// `accept` (true: go on to the backend choice) or `reject` (false: close, counted).
    pub accept: bool,
    pub condition: Condition,
}

impl TcpRequest {
    /// Whether a plain connection's first bytes are read before routing.
    pub fn inspects(&self) -> bool {
        self.inspect_delay.is_some()
    }

    /// Whether the content rules accept the connection whose facts are `facts`.
    pub fn accepts(&self, facts: &dyn super::Facts) -> bool {
        self.content
            .iter()
            .find(|rule| rule.condition.matches(facts))
            .is_none_or(|rule| rule.accept)
    }
}
