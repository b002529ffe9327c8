//! Ticket sealing and the key file format.

#![allow(clippy::unwrap_used)]

use rustls::server::ProducesTickets;

use super::keyfile::{encode_base64, parse_keys};
use super::{KeySet, TicketKey};

fn key(seed: u8) -> TicketKey {
    TicketKey::new([seed; 16], &[seed.wrapping_add(1); 32]).unwrap()
}

#[test]
fn sealed_tickets_open_with_any_key_of_the_set_and_nowhere_else() {
    let old = KeySet::new(vec![key(1)], 60);
    let ticket = old.encrypt(b"session state").unwrap();
    assert_eq!(ticket.len(), 16 + 12 + 13 + 16);
    let rotated = KeySet::new(vec![key(2), key(1)], 60);
    assert_eq!(rotated.decrypt(&ticket).unwrap(), b"session state");
    assert_eq!(
        rotated.decrypt(&rotated.encrypt(b"x").unwrap()).unwrap(),
        b"x"
    );
    let other = KeySet::new(vec![key(3)], 60);
    assert!(other.decrypt(&ticket).is_none());
    let mut tampered = ticket.clone();
    *tampered.last_mut().unwrap() ^= 1;
    assert!(old.decrypt(&tampered).is_none());
    for len in 0..ticket.len() {
        assert!(old.decrypt(&ticket[..len]).is_none(), "{len}");
    }
}

#[test]
fn key_file_takes_48_and_80_byte_keys_in_order() {
    let k48: Vec<u8> = (0..48).collect();
    let k80: Vec<u8> = (100..180).collect();
    let text = format!(
        "# ticket keys\n\n{}\n  {}  \n",
        encode_base64(&k48),
        encode_base64(&k80).trim_end_matches('=')
    );
    let keys = parse_keys(&text).unwrap();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0].name.to_vec(), (0..16).collect::<Vec<u8>>());
    assert_eq!(keys[1].name.to_vec(), (100..116).collect::<Vec<u8>>());
    // Same file, same keys: a ticket from one parse opens with another (two instances).
    let a = KeySet::new(keys, 60);
    let b = KeySet::new(parse_keys(&text).unwrap(), 60);
    assert_eq!(b.decrypt(&a.encrypt(b"s").unwrap()).unwrap(), b"s");
}

#[test]
fn bad_key_files_are_refused_with_the_line() {
    let short = encode_base64(&[7u8; 32]);
    let cases = [
        ("", "no key found"),
        ("# only a comment\n", "no key found"),
        ("not*base64\n", "line 1: not base64"),
        (
            &format!("\n{short}\n") as &str,
            "line 2: 32 bytes, expected 48 or 80",
        ),
    ];
    for (text, needle) in cases {
        let err = parse_keys(text).unwrap_err();
        assert!(err.contains(needle), "{text:?}: {err}");
    }
    let k = encode_base64(&[9u8; 48]);
    let err = parse_keys(&format!("{k}\n{k}\n")).unwrap_err();
    assert!(err.contains("line 2: repeats"), "{err}");
}
