//! The P-256 nonce kernel and signer against aws-lc-rs: `x(k·G)` equal to aws-lc's for random
//! and edge scalars, `k⁻¹` checked, every signature verified by aws-lc-rs's
//! `ECDSA_P256_SHA256_ASN1` over random keys and messages (proptest), and the fault check
//! refusing corrupted lanes. Kernel tests are skipped, with a note, without AVX-512 IFMA.

use aws_lc_rs::agreement::{PrivateKey, ECDH_P256};
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    EcdsaKeyPair, KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_ASN1,
    ECDSA_P256_SHA256_ASN1_SIGNING,
};
use proptest::prelude::*;

use super::scalar::{self, N, ORDER, U256};
use super::sign::{checked, Computed};
use super::table::tables;
use super::{NoncePool, P256Key};
use crate::ifma::{Kernel, LANES};

fn kernel() -> Option<Kernel> {
    let kernel = Kernel::detect();
    if kernel.is_none() {
        eprintln!("no AVX-512 IFMA on this CPU: P-256 kernel tests skipped");
    }
    kernel
}

/// `x(k·G)` by aws-lc.
fn aws_x(k: &U256) -> U256 {
    let key = PrivateKey::from_private_key(&ECDH_P256, &scalar::to_be(k)).expect("1 ≤ k < n");
    let public = key.compute_public_key().expect("a public key");
    let x: &[u8; 32] = public.as_ref()[1..33].try_into().expect("32 bytes");
    scalar::from_be(x)
}

fn minus(a: &U256, small: u64) -> U256 {
    let mut out = *a;
    out[0] -= small; // callers pass values whose low word is larger
    out
}

/// Runs the kernel on eight scalars and checks each lane against aws-lc.
fn check_lanes(kernel: &Kernel, ks: &[U256; LANES]) {
    let t = tables().expect("tables build");
    let out = kernel.p256_nonces(ks, t);
    for (k, lane) in ks.iter().zip(&out) {
        assert_eq!(lane.x, aws_x(k), "x(k·G) for k = {k:x?}");
        let product = ORDER.mul(&ORDER.to_mont(k), &lane.kinv);
        assert_eq!(product, [1, 0, 0, 0], "k·k⁻¹ for k = {k:x?}");
        assert!(checked(k, lane).is_some(), "fault check on a good lane");
    }
}

#[test]
fn edge_scalars_match_aws_lc() {
    let Some(kernel) = kernel() else { return };
    // Below n, every bit set that n allows at the top: 0xffffffff00000000ffff…ff minus a bit.
    let ones_below_n = [
        u64::MAX,
        u64::MAX,
        0xffff_ffff_ffff_fffe,
        0xffff_ffff_0000_0000,
    ];
    let edges = [
        [1, 0, 0, 0],
        [2, 0, 0, 0],
        [15, 0, 0, 0],
        [16, 0, 0, 0],
        minus(&N, 1),
        minus(&N, 2),
        ones_below_n,
        [0, 0, 0, 1 << 63],
    ];
    check_lanes(&kernel, &edges);
    // Every digit 15 below the top window, then every digit 1.
    let nibbles = |d: u64| [d * 0x1111_1111_1111_1111; 4];
    let mut fifteen = nibbles(15);
    fifteen[3] = 0xffff_fffe_ffff_ffff; // below n, every other digit 15
    check_lanes(
        &kernel,
        &[
            fifteen,
            nibbles(1),
            [0, 0, 0, 1],
            [1 << 4, 0, 0, 0],
            minus(&N, 16),
            [u64::MAX, 0, 0, 0],
            [0, u64::MAX, 0, 0],
            [3, 0, 0, 0],
        ],
    );
}

fn scalar_below_n() -> impl Strategy<Value = U256> {
    any::<[u64; 4]>().prop_map(|mut k| {
        k[3] >>= 1; // below 2^255 < n
        if k == [0; 4] {
            k[0] = 1;
        }
        k
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_scalars_match_aws_lc(ks in prop::array::uniform8(scalar_below_n())) {
        let Some(kernel) = kernel() else { return Ok(()) };
        check_lanes(&kernel, &ks);
    }
}

#[test]
fn fault_check_refuses_corrupted_lanes() {
    let Some(kernel) = kernel() else { return };
    let t = tables().expect("tables build");
    let ks = [[7, 0, 0, 0]; LANES];
    let good = kernel.p256_nonces(&ks, t);
    let flip = |v: &U256, bit: usize| {
        let mut out = *v;
        out[bit / 64] ^= 1 << (bit % 64);
        out
    };
    for bit in [0, 51, 52, 130, 255] {
        let lane = &good[0];
        let bad_x = Computed {
            x: flip(&lane.x, bit),
            y: lane.y,
            kinv: lane.kinv,
        };
        let bad_y = Computed {
            x: lane.x,
            y: flip(&lane.y, bit),
            kinv: lane.kinv,
        };
        let bad_inv = Computed {
            x: lane.x,
            y: lane.y,
            kinv: flip(&lane.kinv, bit),
        };
        assert!(checked(&ks[0], &bad_x).is_none(), "x bit {bit}");
        assert!(checked(&ks[0], &bad_y).is_none(), "y bit {bit}");
        assert!(checked(&ks[0], &bad_inv).is_none(), "k⁻¹ bit {bit}");
    }
    // The same result with the wrong k fails the inverse check.
    assert!(checked(&[8, 0, 0, 0], &good[0]).is_none());
}

/// A fresh aws-lc-rs key: ours from its PKCS#8, and its public key.
fn key_pair() -> (P256Key, Vec<u8>) {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
        .expect("aws-lc-rs generates a key");
    let theirs = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref())
        .expect("its own PKCS#8 loads");
    let ours = P256Key::from_der(pkcs8.as_ref()).expect("a PKCS#8 P-256 key loads");
    // The SEC 1 form loads too.
    let sec1 = theirs.private_key().as_der().expect("RFC 5915 encoding");
    P256Key::from_der(sec1.as_ref()).expect("a SEC 1 P-256 key loads");
    (ours, theirs.public_key().as_ref().to_vec())
}

fn verifies(public: &[u8], message: &[u8], signature: &[u8]) -> bool {
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, public)
        .verify(message, signature)
        .is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(250))]

    /// 250 keys × 16 messages: 4,000 signatures, each verified by aws-lc-rs.
    #[test]
    fn signatures_verify_with_aws_lc(messages in prop::collection::vec(
        prop::collection::vec(any::<u8>(), 0..300), 16)) {
        let Some(kernel) = kernel() else { return Ok(()) };
        let (key, public) = key_pair();
        let mut pool = NoncePool::new();
        for message in &messages {
            let pair = pool.take(&kernel).expect("a nonce pair");
            let signature = key.sign(pair, message).expect("s ≠ 0");
            prop_assert!(verifies(&public, message, &signature));
            prop_assert!(!verifies(&public, b"another message", &signature) || message == b"another message");
        }
        prop_assert_eq!(pool.counters().faults, 0);
        prop_assert_eq!(pool.counters().batches, 2);
    }
}

#[test]
fn edge_digests_and_keys() {
    let Some(kernel) = kernel() else { return };
    let mut pool = NoncePool::new();
    for d in [[1, 0, 0, 0], minus(&N, 1), [0, 0, 0, 1 << 63]] {
        let key = P256Key::from_scalar(&scalar::to_be(&d)).expect("1 ≤ d < n");
        let public = {
            let k = PrivateKey::from_private_key(&ECDH_P256, &scalar::to_be(&d)).expect("key");
            k.compute_public_key().expect("public").as_ref().to_vec()
        };
        for digest in [[0u8; 32], [0xff; 32], scalar::to_be(&N)] {
            let pair = pool.take(&kernel).expect("a nonce pair");
            let signature = key.sign_digest(pair, &digest).expect("s ≠ 0");
            let verified = UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, &public).verify_digest(
                &aws_lc_rs::digest::Digest::import_less_safe(&digest, &aws_lc_rs::digest::SHA256)
                    .expect("a SHA-256 digest"),
                &signature,
            );
            assert!(verified.is_ok(), "d = {d:x?}, digest {digest:02x?}");
        }
    }
    assert!(P256Key::from_scalar(&[0; 32]).is_none());
    assert!(P256Key::from_scalar(&scalar::to_be(&N)).is_none());
    assert!(P256Key::from_scalar(&[0xff; 32]).is_none());
}
