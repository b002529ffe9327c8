//! The `peers_message` target: tern-peers' decoders, fed what anyone reaching a peers port
//! sends (a hello, then messages).
//!
//! The first byte picks what the rest is: even, a hello (then messages after it); odd,
//! messages only. Besides "no panic": a whole hello or message ends inside the input; a hello
//! or table definition encodes back to what decodes to the same value; every update is decoded
//! against the last definition seen (and a fixed one), and one that decodes re-encodes to a
//! payload that decodes to the same update. A message the decoder waits on (`None`) has every
//! shorter prefix waiting too, so a session never acts on part of a message.

use tern_peers::table::dt;
use tern_peers::{decode, encode, Hello, KeyType, Message, TableDef, Update};

/// The most messages decoded from one input.
const MAX_MESSAGES: usize = 1024;

fn fixed_def() -> TableDef {
    TableDef {
        id: 1,
        name: "app".into(),
        key_type: KeyType::Ipv4,
        key_len: 4,
        data_types: (1 << dt::SERVER_ID)
            | (1 << dt::GPC0)
            | (1 << dt::HTTP_REQ_RATE)
            | (1 << dt::SERVER_KEY),
        expire_ms: 60_000,
        params: vec![(dt::HTTP_REQ_RATE, 10_000, 0)],
    }
}

pub fn peers_message(data: &[u8]) {
    let Some((&selector, mut rest)) = data.split_first() else {
        return;
    };
    if selector % 2 == 0 {
        match Hello::parse(rest) {
            Ok(Some((hello, used))) => {
                assert!(used <= rest.len());
                let text = hello.encode();
                assert_eq!(Hello::parse(text.as_bytes()), Ok(Some((hello, text.len()))));
                rest = &rest[used..];
            }
            Ok(None) | Err(_) => return,
        }
    }
    messages(rest);
}

fn messages(mut rest: &[u8]) {
    let mut def = fixed_def();
    for _ in 0..MAX_MESSAGES {
        match decode(rest) {
            Ok(Some((m, used))) => {
                assert!((2..=rest.len()).contains(&used), "{used} of {}", rest.len());
                check(&m, &mut def);
                rest = &rest[used..];
            }
            Ok(None) => {
                for cut in 0..rest.len() {
                    assert_eq!(decode(&rest[..cut]), Ok(None), "prefix of {cut} bytes");
                }
                return;
            }
            Err(_) => return,
        }
    }
}

fn check(m: &Message, def: &mut TableDef) {
    match m {
        Message::Define(d) => {
            let mut out = Vec::new();
            encode(m, &mut out);
            assert_eq!(
                decode(&out),
                Ok(Some((Message::Define(d.clone()), out.len())))
            );
            *def = d.clone();
        }
        Message::Update { kind, payload } => {
            for table in [def.clone(), fixed_def()] {
                if !table.known() {
                    continue;
                }
                if let Ok(u) = Update::decode(&table, payload, kind.with_id(), kind.timed()) {
                    let mut again = Vec::new();
                    u.encode(&table, &mut again);
                    let back = Update::decode(&table, &again, kind.with_id(), kind.timed());
                    assert_eq!(back, Ok(u));
                }
            }
        }
        _ => {}
    }
}
