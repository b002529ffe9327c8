#![allow(clippy::unwrap_used)]

use super::*;

/// A ClientHello record with this session ID and these (type, data) extensions.
pub(super) fn hello(session_id: &[u8], exts: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend([7u8; 32]);
    body.push(session_id.len() as u8);
    body.extend(session_id);
    body.extend([0, 2, 0x13, 0x01]); // one cipher suite
    body.extend([1, 0]); // null compression
    let mut ext_bytes = Vec::new();
    for (kind, data) in exts {
        ext_bytes.extend(kind.to_be_bytes());
        ext_bytes.extend((data.len() as u16).to_be_bytes());
        ext_bytes.extend(data);
    }
    body.extend((ext_bytes.len() as u16).to_be_bytes());
    body.extend(ext_bytes);
    let mut msg = vec![CLIENT_HELLO];
    msg.extend(&(body.len() as u32).to_be_bytes()[1..]);
    msg.extend(body);
    let mut record = vec![HANDSHAKE, 3, 1];
    record.extend((msg.len() as u16).to_be_bytes());
    record.extend(msg);
    record
}

pub(super) fn versions(v: &[[u8; 2]]) -> (u16, Vec<u8>) {
    let mut data = vec![(v.len() * 2) as u8];
    for x in v {
        data.extend(x);
    }
    (EXT_SUPPORTED_VERSIONS, data)
}

#[test]
fn plain_hello_offers_nothing() {
    let h = hello(&[], &[(0, vec![0, 0])]);
    assert_eq!(peek(&h), Peek::Hello { resumption: false });
}

#[test]
fn psk_is_a_resumption_offer() {
    let h = hello(
        &[1; 32],
        &[versions(&[TLS13]), (EXT_PRE_SHARED_KEY, vec![0; 8])],
    );
    assert_eq!(peek(&h), Peek::Hello { resumption: true });
}

#[test]
fn session_ticket_counts_only_when_not_empty() {
    let empty = hello(&[], &[(EXT_SESSION_TICKET, Vec::new())]);
    assert_eq!(peek(&empty), Peek::Hello { resumption: false });
    let full = hello(&[], &[(EXT_SESSION_TICKET, vec![9; 100])]);
    assert_eq!(peek(&full), Peek::Hello { resumption: true });
}

#[test]
fn session_id_counts_only_without_tls13() {
    let tls12 = hello(&[5; 32], &[]);
    assert_eq!(peek(&tls12), Peek::Hello { resumption: true });
    let tls13 = hello(&[5; 32], &[versions(&[TLS13, [3, 3]])]);
    assert_eq!(peek(&tls13), Peek::Hello { resumption: false });
}

#[test]
fn partial_record_is_incomplete_and_plain_text_is_not_a_hello() {
    let h = hello(&[], &[]);
    for cut in 0..h.len() {
        assert_eq!(peek(&h[..cut]), Peek::Incomplete, "cut at {cut}");
    }
    assert_eq!(peek(b"GET / HTTP/1.1\r\n"), Peek::NotHello);
    assert_eq!(peek(b"G"), Peek::NotHello);
}

#[test]
fn malformed_hello_is_charged_as_full() {
    let mut h = hello(&[], &[(EXT_PRE_SHARED_KEY, vec![0; 8])]);
    // Claim a longer extension block than there is.
    let n = h.len();
    h[n - 13] = 0x7f;
    assert_eq!(peek(&h), Peek::Hello { resumption: false });
}

#[test]
fn garbage_never_panics() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in 0..600 {
        let mut buf = vec![HANDSHAKE, 3, 1, (len >> 8) as u8, len as u8];
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            buf.push(state as u8);
        }
        let _ = peek(&buf);
    }
}

/// A real rustls ClientHello with no session to resume offers nothing (the resumed case is
/// covered through the binary, crates/tern/tests/overload.rs).
#[test]
fn fresh_rustls_client_hello() {
    let client = tern_tls::client_config(&tern_tls::ClientOptions {
        verify: tern_tls::Verify::Insecure,
        resumption: true,
        ..tern_tls::ClientOptions::default()
    });
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut conn = rustls::ClientConnection::new(client, name).unwrap();
    let mut first = Vec::new();
    conn.write_tls(&mut first).unwrap();
    assert_eq!(peek(&first), Peek::Hello { resumption: false });
}
