//! What a DNS reply means for tern: the outcome of one question, judged from a message that
//! hickory parsed (a reply hickory cannot parse never gets here: `query.rs` counts it as
//! malformed and keeps waiting for a good one).
//!
//! A reply is only believed when it is a response to the question asked (same id, same name,
//! type and class): anything else on the socket is refused and counted, so a stray or spoofed
//! datagram cannot move a server.

use std::net::{IpAddr, SocketAddr};

use hickory_proto::op::{Message, MessageType, Query, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use tern_config::Family;

/// How one question was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// NOERROR: the message (possibly with no record of the type asked).
    Answer(Message),
    /// NXDOMAIN: the name does not exist.
    Nx,
    /// REFUSED.
    Refused,
    /// Any other response code (SERVFAIL, FORMERR, ...).
    Other,
}

/// Whether `reply` answers `id` / `query`; `None`: not ours or malformed (refused).
pub(crate) fn judge(reply: Message, id: u16, query: &Query) -> Option<Reply> {
    if reply.id() != id
        || reply.message_type() != MessageType::Response
        || reply.queries() != std::slice::from_ref(query)
    {
        return None;
    }
    Some(match reply.response_code() {
        ResponseCode::NoError => Reply::Answer(reply),
        ResponseCode::NXDomain => Reply::Nx,
        ResponseCode::Refused => Reply::Refused,
        _ => Reply::Other,
    })
}

/// The addresses of an A or AAAA answer (CNAMEs followed by the server: every address record
/// of the answer section counts).
pub(crate) fn addresses(message: &Message) -> Vec<IpAddr> {
    message
        .answers()
        .iter()
        .filter_map(|r| match r.data() {
            RData::A(a) => Some(IpAddr::V4(a.0)),
            RData::AAAA(a) => Some(IpAddr::V6(a.0)),
            _ => None,
        })
        .collect()
}

/// One SRV record: where, on which port, with which weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Service {
    /// Lower-case, without the trailing dot.
    pub target: String,
    pub port: u16,
    pub weight: u16,
}

/// The SRV records of an answer; a target of `.` (RFC 2782: no service) is left out.
pub(crate) fn services(message: &Message) -> Vec<Service> {
    message
        .answers()
        .iter()
        .filter_map(|r| match r.data() {
            RData::SRV(srv) => Some(Service {
                target: plain_name(&srv.target().to_ascii()),
                port: srv.port(),
                weight: srv.weight(),
            }),
            _ => None,
        })
        .filter(|s| !s.target.is_empty() && s.port != 0)
        .collect()
}

/// The address of `target` in the additional section, of the preferred family if there is one.
pub(crate) fn additional(message: &Message, target: &str, prefer: Family) -> Option<IpAddr> {
    let found: Vec<IpAddr> = message
        .additionals()
        .iter()
        .filter(|r| plain_name(&r.name().to_ascii()) == target)
        .filter_map(|r| match r.data() {
            RData::A(a) => Some(IpAddr::V4(a.0)),
            RData::AAAA(a) => Some(IpAddr::V6(a.0)),
            _ => None,
        })
        .collect();
    found
        .iter()
        .find(|ip| prefer.matches(**ip))
        .or_else(|| found.first())
        .copied()
}

/// The record types to ask for a name, preferred family first.
pub(crate) fn address_types(prefer: Family) -> [RecordType; 2] {
    match prefer {
        Family::Ipv4 => [RecordType::A, RecordType::AAAA],
        Family::Ipv6 => [RecordType::AAAA, RecordType::A],
    }
}

/// A name as tern compares them: lower-case, no trailing dot.
pub(crate) fn plain_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// One address a name or service resolved to, with the SRV weight when it came from one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub address: SocketAddr,
    pub weight: Option<u16>,
}

#[cfg(test)]
mod tests;
