#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use super::*;

/// The first flight of a real rustls client asking for `name`.
fn client_hello(name: &str) -> Vec<u8> {
    let config = rustls::ClientConfig::builder_with_provider(tern_tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(name.to_owned()).unwrap();
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut out = Vec::new();
    conn.write_tls(&mut out).unwrap();
    out
}

/// `record`'s handshake message split over two records after `at` bytes of it.
fn split_record(record: &[u8], at: usize) -> Vec<u8> {
    let message = &record[RECORD_HEADER..];
    let mut out = Vec::new();
    for part in [&message[..at], &message[at..]] {
        out.extend([HANDSHAKE, 3, 1]);
        out.extend((part.len() as u16).to_be_bytes());
        out.extend(part);
    }
    out
}

fn complete(sni: Option<&str>) -> Hello {
    Hello::Complete {
        kind: CLIENT_HELLO,
        sni: sni.map(str::to_owned),
    }
}

#[test]
fn reads_the_name_of_a_real_client_hello() {
    let hello = client_hello("a.example");
    assert_eq!(read_hello(&hello), complete(Some("a.example")));
    // Bytes after the message (the next record) change nothing.
    let mut more = hello.clone();
    more.extend([23, 3, 3, 0, 1, 0]);
    assert_eq!(read_hello(&more), complete(Some("a.example")));
}

#[test]
fn every_prefix_is_incomplete() {
    let hello = client_hello("b.example");
    for n in 0..hello.len() {
        assert_eq!(read_hello(&hello[..n]), Hello::Incomplete, "{n} bytes");
    }
}

#[test]
fn a_message_split_over_records_is_reassembled() {
    let hello = client_hello("split.example");
    for at in [1, 3, 4, 40, 100] {
        let split = split_record(&hello, at);
        assert_eq!(
            read_hello(&split),
            complete(Some("split.example")),
            "at {at}"
        );
        let cut = split.len() - 1;
        assert_eq!(read_hello(&split[..cut]), Hello::Incomplete, "at {at}");
    }
}

#[test]
fn no_name_for_an_address_and_none_for_other_messages() {
    let hello = client_hello("127.0.0.1");
    assert_eq!(read_hello(&hello), complete(None));
    let server_hello = [HANDSHAKE, 3, 3, 0, 4, 2, 0, 0, 0];
    assert_eq!(
        read_hello(&server_hello),
        Hello::Complete { kind: 2, sni: None }
    );
}

#[test]
fn other_bytes_are_not_tls() {
    assert_eq!(read_hello(b"G"), Hello::NotTls);
    assert_eq!(read_hello(b"GET / HTTP/1.1\r\n"), Hello::NotTls);
    // A handshake record of an unknown major version, an empty one, an oversized message.
    assert_eq!(read_hello(&[HANDSHAKE, 9, 1, 0, 1, 1]), Hello::NotTls);
    assert_eq!(read_hello(&[HANDSHAKE, 3, 1, 0, 0]), Hello::NotTls);
    assert_eq!(
        read_hello(&[HANDSHAKE, 3, 1, 0, 4, 1, 1, 0, 0]),
        Hello::NotTls
    );
    // A second record that is not a handshake before the message is whole.
    let hello = client_hello("c.example");
    let mut split = split_record(&hello, 10);
    split[RECORD_HEADER + 10] = 23;
    assert_eq!(read_hello(&split), Hello::NotTls);
}
