#![allow(clippy::unwrap_used)]

use crate::table::dt;
use crate::*;

fn def() -> TableDef {
    TableDef {
        id: 7,
        name: "web".into(),
        key_type: KeyType::Ipv4,
        key_len: 4,
        data_types: (1 << dt::SERVER_ID)
            | (1 << dt::GPC0)
            | (1 << dt::HTTP_REQ_RATE)
            | (1 << dt::SERVER_KEY),
        expire_ms: 1_800_000,
        params: vec![(dt::HTTP_REQ_RATE, 10_000, 0)],
    }
}

#[test]
fn varints_round_trip_and_match_haproxy() {
    for v in [
        0,
        1,
        239,
        240,
        241,
        300,
        2287,
        2288,
        1 << 20,
        u64::from(u32::MAX),
        u64::MAX,
    ] {
        let mut out = Vec::new();
        varint::put(&mut out, v);
        assert_eq!(varint::get(&out), Ok((v, out.len())), "{v}");
    }
    // 300: 300 | 0xF0 as one byte = 0xFC, then (300 - 240) >> 4 = 3.
    let mut out = Vec::new();
    varint::put(&mut out, 300);
    assert_eq!(out, [0xFC, 0x03]);
    assert_eq!(varint::get(&[0xFF; 12]), Err(Error::VarintOverflow));
    assert_eq!(varint::get(&[0xF0]), Err(Error::Truncated("varint")));
}

#[test]
fn hello_and_status_round_trip() {
    let hello = Hello {
        remote: "b".into(),
        local: "a".into(),
        pid: 42,
        relative_pid: 1,
    };
    let text = hello.encode();
    assert_eq!(text, "HAProxyS 2.1\nb\na 42 1\n");
    assert_eq!(Hello::parse(text.as_bytes()), Ok(Some((hello, text.len()))));
    assert_eq!(Hello::parse(b"HAProxyS 2.1\nb\n"), Ok(None));
    assert!(Hello::parse(b"HAProxyS 3.0\nb\na 1 1\n").is_err());
    assert!(Hello::parse(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").is_err());
    assert!(Hello::parse(&[b'x'; 300]).is_err());
    assert_eq!(Status::parse(b"200\n"), Ok(Some((Status::Ok, 4))));
    assert!(Status::parse(b"999\n").is_err());
}

#[test]
fn a_definition_and_an_update_round_trip() {
    let def = def();
    let mut out = Vec::new();
    encode(&Message::Define(def.clone()), &mut out);
    let (m, n) = decode(&out).unwrap().unwrap();
    assert_eq!((m, n), (Message::Define(def.clone()), out.len()));

    let update = Update {
        id: Some(5),
        expire_ms: None,
        key: Key::Ipv4([127, 0, 0, 9]),
        values: vec![
            (dt::SERVER_ID, Value::Int(2)),
            (dt::GPC0, Value::Int(3)),
            (
                dt::HTTP_REQ_RATE,
                Value::Freq(Freq {
                    elapsed_ms: 300,
                    curr: 4,
                    prev: 1,
                }),
            ),
            (
                dt::SERVER_KEY,
                Value::Dict {
                    id: 2,
                    text: Some(b"s2".to_vec()),
                },
            ),
        ],
    };
    let mut payload = Vec::new();
    update.encode(&def, &mut payload);
    let back = Update::decode(&def, &payload, true, false).unwrap();
    assert_eq!(back, update);
    // Cut anywhere, the update is an error, never a panic.
    for cut in 0..payload.len() {
        assert!(Update::decode(&def, &payload[..cut], true, false).is_err());
    }
}

#[test]
fn frames_wait_for_their_bytes_and_refuse_garbage() {
    assert_eq!(decode(&[0]), Ok(None));
    assert_eq!(
        decode(&[0, 4]),
        Ok(Some((Message::Control(Control::Heartbeat), 2)))
    );
    assert_eq!(decode(&[10, 132, 5, 1]), Ok(None));
    assert_eq!(
        decode(&[10, 132, 5, 1, 0, 0, 0, 9]),
        Ok(Some((
            Message::Ack {
                table: 1,
                update: 9
            },
            8
        )))
    );
    assert!(decode(b"GET / HTTP/1.1").is_err());
    assert!(decode(&[0, 9]).is_err());
    assert!(decode(&[10, 130, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]).is_err());
}
