//! Replies judged: ours or refused; records read.

#![allow(clippy::unwrap_used)]

use std::net::Ipv4Addr;
use std::str::FromStr;

use hickory_proto::op::{Message, MessageType, Query, ResponseCode};
use hickory_proto::rr::rdata::{A, SRV};
use hickory_proto::rr::{Name, RData, Record, RecordType};

use super::*;

fn query() -> Query {
    Query::query(
        Name::from_str("_http._tcp.app.internal.").unwrap(),
        RecordType::SRV,
    )
}

fn reply(id: u16, code: ResponseCode) -> Message {
    let mut m = Message::new();
    m.set_id(id)
        .set_message_type(MessageType::Response)
        .set_response_code(code)
        .add_query(query());
    m
}

#[test]
fn only_a_response_to_the_question_is_believed() {
    assert!(matches!(
        judge(reply(7, ResponseCode::NoError), 7, &query()),
        Some(Reply::Answer(_))
    ));
    assert_eq!(judge(reply(8, ResponseCode::NoError), 7, &query()), None);
    let mut other = reply(7, ResponseCode::NoError);
    other.queries_mut()[0].set_query_type(RecordType::A);
    assert_eq!(judge(other, 7, &query()), None);
    let mut not_response = reply(7, ResponseCode::NoError);
    not_response.set_message_type(MessageType::Query);
    assert_eq!(judge(not_response, 7, &query()), None);
    assert_eq!(
        judge(reply(7, ResponseCode::NXDomain), 7, &query()),
        Some(Reply::Nx)
    );
    assert_eq!(
        judge(reply(7, ResponseCode::Refused), 7, &query()),
        Some(Reply::Refused)
    );
    assert_eq!(
        judge(reply(7, ResponseCode::ServFail), 7, &query()),
        Some(Reply::Other)
    );
}

#[test]
fn srv_records_and_their_additional_addresses_are_read() {
    let mut m = reply(1, ResponseCode::NoError);
    let name = Name::from_str("_http._tcp.app.internal.").unwrap();
    let target = Name::from_str("Web1.App.Internal.").unwrap();
    m.add_answer(Record::from_rdata(
        name.clone(),
        60,
        RData::SRV(SRV::new(0, 5, 8081, target.clone())),
    ));
    m.add_answer(Record::from_rdata(
        name,
        60,
        RData::SRV(SRV::new(0, 5, 8082, Name::root())),
    ));
    m.add_additional(Record::from_rdata(
        target,
        60,
        RData::A(A(Ipv4Addr::new(10, 0, 0, 1))),
    ));
    let found = services(&m);
    assert_eq!(
        found,
        [Service {
            target: "web1.app.internal".into(),
            port: 8081,
            weight: 5
        }]
    );
    assert_eq!(
        additional(&m, "web1.app.internal", Family::Ipv6),
        Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)))
    );
    assert_eq!(additional(&m, "web2.app.internal", Family::Ipv4), None);
}

#[test]
fn garbage_is_not_a_message() {
    assert!(Message::from_vec(&[0x12, 0x34, 0x81]).is_err());
    let mut bytes = reply(1, ResponseCode::NoError).to_vec().unwrap();
    // An answer count of one with no answer behind it.
    bytes[7] = 1;
    assert!(Message::from_vec(&bytes).is_err());
}
