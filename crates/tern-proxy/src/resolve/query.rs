//! One question to the nameservers of a resolvers section, over UDP.
//!
//! Each try uses a fresh socket (a new source port) and a random id, goes to the next
//! nameserver in turn, and waits `timeouts.retry` for the reply; after `resolve_retries` tries
//! the question has timed out. Datagrams that hickory cannot parse, or that do not answer the
//! question (id, name, type), are refused and counted as invalid, and the wait goes on for the
//! real reply: one bad datagram neither moves a server nor costs a try.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use hickory_proto::op::{Edns, Message, MessageType, OpCode, Query};
use hickory_proto::rr::{Name, RecordType};
use tern_config::Resolvers;
use tokio::net::UdpSocket;

use super::answer::{judge, Reply};
use super::counters::{bump, ResolverCounters};

/// The largest datagram read: a reply larger than announced is still read whole.
const MAX_DATAGRAM: usize = 65_535;

/// Asks `rtype` records of `name`; `None` when no nameserver answered in any try.
pub(crate) async fn ask(
    section: &Resolvers,
    counters: &ResolverCounters,
    name: &str,
    rtype: RecordType,
) -> Option<Reply> {
    // The name was checked by the configuration; a name hickory still refuses is answered
    // like a failing server (held, then out), never a panic.
    let Ok(qname) = Name::from_ascii(format!("{name}.")) else {
        return Some(Reply::Other);
    };
    let query = Query::query(qname, rtype);
    let count = section.nameservers.len().max(1);
    for attempt in 0..section.resolve_retries as usize {
        let &server = section.nameservers.get(attempt % count)?;
        let id = random_id();
        let Ok(bytes) = request(&query, id, section.accepted_payload_size).to_vec() else {
            return Some(Reply::Other);
        };
        let reply = tokio::time::timeout(section.retry, async {
            let socket = connect(server).await.ok()?;
            socket.send(&bytes).await.ok()?;
            bump(&counters.sent);
            wait(&socket, id, &query, counters).await
        })
        .await;
        if let Ok(Some(reply)) = reply {
            return Some(reply);
        }
    }
    None
}

/// The query message: recursion desired, EDNS0 announcing the payload size above 512.
fn request(query: &Query, id: u16, payload: u16) -> Message {
    let mut message = Message::new();
    message
        .set_id(id)
        .set_message_type(MessageType::Query)
        .set_op_code(OpCode::Query)
        .set_recursion_desired(true)
        .add_query(query.clone());
    if payload > 512 {
        let mut edns = Edns::new();
        edns.set_max_payload(payload);
        message.set_edns(edns);
    }
    message
}

/// A UDP socket connected to `server` (the kernel then drops datagrams from anyone else).
async fn connect(server: SocketAddr) -> std::io::Result<UdpSocket> {
    let local: SocketAddr = if server.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = UdpSocket::bind(local).await?;
    socket.connect(server).await?;
    Ok(socket)
}

/// Reads datagrams until one answers the question; `None` on a socket error (a nameserver
/// port that refuses: the next try goes to the next one).
async fn wait(
    socket: &UdpSocket,
    id: u16,
    query: &Query,
    counters: &ResolverCounters,
) -> Option<Reply> {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        let n = socket.recv(&mut buf).await.ok()?;
        let judged = buf
            .get(..n)
            .and_then(|bytes| Message::from_vec(bytes).ok())
            .and_then(|message| judge(message, id, query));
        match judged {
            Some(reply) => return Some(reply),
            None => {
                bump(&counters.invalid);
                tracing::debug!(resolvers = %counters.name, bytes = n, "DNS reply refused: malformed or not an answer to the question");
            }
        }
    }
}

/// A random query id (RFC 5452: ids and source ports hard to guess).
fn random_id() -> u16 {
    let mut bytes = [0u8; 2];
    // A failing system random source leaves a zero id: the source port still varies.
    let _ = aws_lc_rs::rand::fill(&mut bytes);
    u16::from_ne_bytes(bytes)
}
