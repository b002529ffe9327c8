//! The wrapped P-256 key: signatures verified by aws-lc-rs inside and outside
//! `with_batched_ecdsa`, one kernel run per eight signatures, RSA keys left alone.

use aws_lc_rs::signature::{UnparsedPublicKey, ECDSA_P256_SHA256_ASN1};
use rustls::SignatureScheme;

use super::{take_ecdsa_counts, with_batched_ecdsa, EcdsaCounts};
use crate::{self_signed, KeyKind};

fn names() -> Vec<String> {
    vec!["batched.test".to_owned()]
}

/// Signs `count` messages with a fresh P-256 certificate's key and checks each signature.
fn sign_and_verify(count: usize, batched: bool) {
    let generated = self_signed(&names(), KeyKind::EcdsaP256).expect("a P-256 certificate");
    let key = &generated.certified_key.key;
    let spki = key.public_key().expect("a P-256 key has a public key");
    // The SPKI's BIT STRING ends with the uncompressed point (65 bytes).
    let point = &spki.as_ref()[spki.as_ref().len() - 65..];
    let signer = key
        .choose_scheme(&[SignatureScheme::ECDSA_NISTP256_SHA256])
        .expect("a P-256 signer");
    for i in 0..count {
        let message = format!("transcript {i}").into_bytes();
        let sign = || signer.sign(&message).expect("a signature");
        let signature = if batched {
            with_batched_ecdsa(sign)
        } else {
            sign()
        };
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, point)
            .verify(&message, &signature)
            .expect("the signature verifies");
    }
}

#[test]
fn batched_signatures_verify_and_count() {
    take_ecdsa_counts();
    sign_and_verify(20, true);
    let counts = take_ecdsa_counts();
    if tern_mb::Kernel::detect().is_some() {
        assert_eq!(counts.signatures, 20);
        assert_eq!(
            counts.batches, 3,
            "eight signatures per kernel run: {counts:?}"
        );
        assert_eq!(counts.pairs, 24);
        assert_eq!((counts.faults, counts.fallbacks), (0, 0));
    } else {
        assert_eq!(counts.fallbacks, 20);
        assert_eq!(counts.signatures, 0);
    }
    assert_eq!(take_ecdsa_counts(), EcdsaCounts::default());
}

#[test]
fn outside_the_scope_aws_lc_signs() {
    take_ecdsa_counts();
    sign_and_verify(3, false);
    assert_eq!(take_ecdsa_counts(), EcdsaCounts::default());
}

#[test]
fn rsa_keys_are_not_wrapped() {
    let generated = self_signed(&names(), KeyKind::Rsa2048).expect("an RSA certificate");
    let signer = generated
        .certified_key
        .key
        .choose_scheme(&[SignatureScheme::RSA_PSS_SHA256])
        .expect("an RSA signer");
    take_ecdsa_counts();
    with_batched_ecdsa(|| signer.sign(b"message").expect("a signature"));
    assert_eq!(take_ecdsa_counts(), EcdsaCounts::default());
}
