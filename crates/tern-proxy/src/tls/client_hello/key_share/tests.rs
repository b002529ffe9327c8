#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::ClientConnection;
use tern_tls::{client_config, client_config_with_provider, provider, ClientOptions};

use super::super::tests::{hello, versions};
use super::super::TLS13;
use super::*;

fn all(_: NamedGroup) -> bool {
    true
}

/// The first record a rustls client with `config` sends.
fn client_hello(config: Arc<rustls::ClientConfig>) -> Vec<u8> {
    let name = ServerName::try_from("example.test").unwrap();
    let mut conn = ClientConnection::new(config, name).unwrap();
    let mut out = Vec::new();
    conn.write_tls(&mut out).unwrap();
    out
}

fn groups(list: &[u16]) -> (u16, Vec<u8>) {
    let mut data = ((list.len() * 2) as u16).to_be_bytes().to_vec();
    for g in list {
        data.extend(g.to_be_bytes());
    }
    (EXT_SUPPORTED_GROUPS, data)
}

fn shares(list: &[(u16, usize)]) -> (u16, Vec<u8>) {
    let mut entries = Vec::new();
    for &(group, len) in list {
        entries.extend(group.to_be_bytes());
        entries.extend((len as u16).to_be_bytes());
        entries.extend(std::iter::repeat_n(0x42, len));
    }
    let mut data = (entries.len() as u16).to_be_bytes().to_vec();
    data.extend(entries);
    (EXT_KEY_SHARE, data)
}

#[test]
fn a_rustls_client_offering_x25519_first() {
    let record = client_hello(client_config(&ClientOptions::default()));
    let share = x25519_share(&record, all).unwrap();
    assert_ne!(share, [0; 32]);
    // The server does not support X25519: another group is negotiated.
    assert_eq!(x25519_share(&record, |g| g != NamedGroup::X25519), None);
}

#[test]
fn a_client_offering_the_hybrid_group_first_gets_it() {
    let mut p = (*provider()).clone();
    p.kx_groups.rotate_left(1); // X25519MLKEM768 first
    assert_eq!(p.kx_groups[0].name(), NamedGroup::X25519MLKEM768);
    let config = client_config_with_provider(&ClientOptions::default(), Arc::new(p)).unwrap();
    assert_eq!(x25519_share(&client_hello(config), all), None);
}

#[test]
fn tls12_only_clients_are_not_batched() {
    let options = ClientOptions {
        versions: Some(vec![&rustls::version::TLS12]),
        ..ClientOptions::default()
    };
    assert_eq!(
        x25519_share(&client_hello(client_config(&options)), all),
        None
    );
}

#[test]
fn synthetic_hellos() {
    let tls13 = versions(&[TLS13]);
    let ok = hello(
        &[],
        &[
            tls13.clone(),
            groups(&[X25519, 23]),
            shares(&[(X25519, 32)]),
        ],
    );
    assert_eq!(x25519_share(&ok, all), Some([0x42; 32]));
    // First supported group P-256: rustls uses it (or asks for its share).
    let p256 = hello(
        &[],
        &[
            tls13.clone(),
            groups(&[23, X25519]),
            shares(&[(X25519, 32)]),
        ],
    );
    assert_eq!(x25519_share(&p256, all), None);
    // No X25519 share: HelloRetryRequest.
    let hrr = hello(
        &[],
        &[tls13.clone(), groups(&[X25519]), shares(&[(23, 65)])],
    );
    assert_eq!(x25519_share(&hrr, all), None);
    // A share of the wrong length.
    let short = hello(
        &[],
        &[tls13.clone(), groups(&[X25519]), shares(&[(X25519, 31)])],
    );
    assert_eq!(x25519_share(&short, all), None);
    // No TLS 1.3.
    let old = hello(&[], &[groups(&[X25519]), shares(&[(X25519, 32)])]);
    assert_eq!(x25519_share(&old, all), None);
    // Truncated or not a handshake record.
    assert_eq!(x25519_share(&ok[..ok.len() - 1], all), None);
    assert_eq!(x25519_share(b"GET / HTTP/1.1\r\n", all), None);
    assert_eq!(x25519_share(&[], all), None);
}
