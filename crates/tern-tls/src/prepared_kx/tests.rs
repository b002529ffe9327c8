#![allow(clippy::unwrap_used)]

use aws_lc_rs::agreement::{self, PrivateKey, UnparsedPublicKey};

use super::*;

/// A key pair of aws-lc-rs: (scalar, public key).
fn key_pair(seed: u8) -> ([u8; X25519_LEN], [u8; X25519_LEN]) {
    let scalar = [seed; X25519_LEN];
    let key = PrivateKey::from_private_key(&agreement::X25519, &scalar).unwrap();
    let public = key.compute_public_key().unwrap();
    (scalar, public.as_ref().try_into().unwrap())
}

/// What the batcher would prepare for `peer` with the server scalar `seed`.
fn prepared(seed: u8, peer: [u8; X25519_LEN]) -> PreparedX25519 {
    let (scalar, public) = key_pair(seed);
    let key = PrivateKey::from_private_key(&agreement::X25519, &scalar).unwrap();
    let secret = agreement::agree(
        &key,
        UnparsedPublicKey::new(&agreement::X25519, peer),
        (),
        |s| Ok(<[u8; X25519_LEN]>::try_from(s).unwrap()),
    )
    .unwrap();
    PreparedX25519::new(peer, public, secret)
}

#[test]
fn a_result_prepared_for_the_share_is_used_once() {
    let (_, client) = key_pair(7);
    let (_, server_public) = key_pair(9);
    let mut slot = Some(prepared(9, client));
    let done = with_prepared_x25519(&mut slot, || X25519.start_and_complete(&client)).unwrap();
    assert!(slot.is_none(), "the handshake took the prepared result");
    assert_eq!(done.group, NamedGroup::X25519);
    assert_eq!(done.pub_key, server_public);
    let expected = prepared(9, client);
    assert_eq!(done.secret.secret_bytes(), expected.secret);
}

#[test]
fn another_share_is_computed_by_aws_lc_and_the_result_given_back() {
    let (_, client) = key_pair(7);
    let (_, other) = key_pair(8);
    let mut slot = Some(prepared(9, client));
    let done = with_prepared_x25519(&mut slot, || X25519.start_and_complete(&other)).unwrap();
    assert!(slot.is_some(), "not used: still the caller's");
    assert_ne!(done.pub_key, key_pair(9).1);
    assert_eq!(done.secret.secret_bytes().len(), X25519_LEN);
}

#[test]
fn nothing_is_left_on_the_thread_after_the_step() {
    let (_, client) = key_pair(7);
    let mut slot = Some(prepared(9, client));
    with_prepared_x25519(&mut slot, || ());
    assert!(slot.is_some());
    // Outside the step, the same share gets a fresh key pair from aws-lc-rs.
    let done = X25519.start_and_complete(&client).unwrap();
    assert_ne!(done.pub_key, key_pair(9).1);
}

#[test]
fn a_low_order_share_is_refused_as_aws_lc_refuses_it() {
    let zero = [0u8; X25519_LEN];
    assert!(X25519.start_and_complete(&zero).is_err());
}
