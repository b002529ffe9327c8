//! `mb_kernels`: tern-mb's AVX-512 IFMA kernels against aws-lc on arbitrary inputs.
//!
//! Why: the kernels are tern's own big-number code, entered through `unsafe`; their property
//! tests cover random and edge-case inputs, and this target lets a fuzzer hunt for the one
//! input where a lane disagrees with aws-lc. Byte 0 chooses what runs:
//!
//! - even: **X25519**. The rest is read as eight (scalar, u-coordinate) pairs of 32 + 32 bytes,
//!   cycled when short (zeros when empty). Each lane's shared secret equals aws-lc-rs's (all
//!   zeros where aws-lc-rs refuses a low-order point, which is what the ladder computes), and
//!   each lane's public key (`x25519_base_x8`) equals aws-lc-rs's for the same scalar.
//! - odd: **RSA signatures** through [`tern_mb::Batcher`]. Byte 1 picks the key size (2048,
//!   3072 or 4096 bits; one key of each, generated once per process), the scheme (PKCS#1 v1.5
//!   or PSS, SHA-256) and the batch size (2 to 8); the messages are slices of the rest. PKCS#1
//!   v1.5 signatures equal aws-lc-rs's byte for byte, PSS ones verify with aws-lc-rs, and the
//!   batcher's fault check never fired (it would otherwise hide a kernel error behind its
//!   aws-lc fallback).
//!
//! On a CPU without IFMA the kernels cannot run: the X25519 half checks nothing, the RSA half
//! compares aws-lc-rs with itself through the batcher's fallback.

use std::sync::OnceLock;

use aws_lc_rs::agreement::{self, PrivateKey, UnparsedPublicKey, X25519};
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{self, KeyPair, RsaKeyPair};
use tern_mb::{Batcher, RsaKey, Scheme, SignRequest};

const LEN: usize = tern_mb::x25519::LEN;
const LANES: usize = tern_mb::ifma::LANES;

/// The target's check.
pub fn mb_kernels(data: &[u8]) {
    match data.split_first() {
        Some((selector, rest)) if selector & 1 == 1 => rsa(rest),
        Some((_, rest)) => x25519(rest),
        None => x25519(&[]),
    }
}

/// Eight (scalar, u) pairs from `data`, cycled.
fn lanes(data: &[u8]) -> ([[u8; LEN]; LANES], [[u8; LEN]; LANES]) {
    let byte = |i: usize| match data.len() {
        0 => 0,
        n => data[i % n],
    };
    let scalars = std::array::from_fn(|lane| std::array::from_fn(|i| byte(lane * 2 * LEN + i)));
    let points =
        std::array::from_fn(|lane| std::array::from_fn(|i| byte(lane * 2 * LEN + LEN + i)));
    (scalars, points)
}

fn x25519(data: &[u8]) {
    let (scalars, points) = lanes(data);
    let (Some(secrets), Some(publics)) = (
        tern_mb::x25519_x8(&scalars, &points),
        tern_mb::x25519_base_x8(&scalars),
    ) else {
        return;
    };
    for lane in 0..LANES {
        let private = PrivateKey::from_private_key(&X25519, &scalars[lane])
            .expect("aws-lc-rs takes any 32 bytes as an X25519 key");
        let expected = agreement::agree(
            &private,
            UnparsedPublicKey::new(&X25519, &points[lane]),
            (),
            |secret| <[u8; LEN]>::try_from(secret).map_err(drop),
        )
        .unwrap_or([0; LEN]);
        assert_eq!(
            secrets[lane], expected,
            "lane {lane}: shared secret differs from aws-lc's"
        );
        let public = private
            .compute_public_key()
            .expect("aws-lc-rs computes X25519 public keys");
        assert_eq!(
            &publics[lane][..],
            public.as_ref(),
            "lane {lane}: public key differs from aws-lc's"
        );
    }
}

/// One key of each covered size, ours and aws-lc-rs's from the same PKCS#8 document.
fn keys() -> &'static [(RsaKey, RsaKeyPair); 3] {
    static KEYS: OnceLock<[(RsaKey, RsaKeyPair); 3]> = OnceLock::new();
    KEYS.get_or_init(|| {
        [KeySize::Rsa2048, KeySize::Rsa3072, KeySize::Rsa4096].map(|size| {
            let theirs = RsaKeyPair::generate(size).expect("aws-lc-rs generates RSA keys");
            let der = theirs.as_der().expect("aws-lc-rs encodes its keys");
            let ours = RsaKey::from_der(der.as_ref()).expect("tern-mb loads aws-lc-rs's keys");
            (ours, theirs)
        })
    })
}

fn rsa(data: &[u8]) {
    let (settings, rest) = data.split_first().map_or((0, data), |(s, r)| (*s, r));
    let (ours, theirs) = &keys()[usize::from(settings % 3)];
    let pss = settings & 0x04 != 0;
    let scheme = if pss {
        Scheme::PssSha256
    } else {
        Scheme::Pkcs1Sha256
    };
    let count = 2 + usize::from(settings >> 3) % (LANES - 1);
    let messages: Vec<&[u8]> = (0..count)
        .map(|i| {
            let (from, to) = (rest.len() * i / count, rest.len() * (i + 1) / count);
            &rest[from..to]
        })
        .collect();
    let batcher = Batcher::new();
    let requests: Vec<SignRequest<'_>> = messages
        .iter()
        .map(|message| SignRequest {
            key: ours,
            scheme,
            message,
        })
        .collect();
    let public = signature::UnparsedPublicKey::new(
        &signature::RSA_PSS_2048_8192_SHA256,
        theirs.public_key().as_ref(),
    );
    for (i, result) in batcher.sign(&requests).into_iter().enumerate() {
        let ours = result.expect("the batcher signs every request");
        if pss {
            public
                .verify(messages[i], &ours)
                .unwrap_or_else(|_| panic!("request {i}: the PSS signature does not verify"));
        } else {
            let mut expected = vec![0; theirs.public_modulus_len()];
            theirs
                .sign(
                    &signature::RSA_PKCS1_SHA256,
                    &SystemRandom::new(),
                    messages[i],
                    &mut expected,
                )
                .expect("aws-lc-rs signs");
            assert!(
                ours == expected,
                "request {i}: PKCS#1 v1.5 signature differs from aws-lc's"
            );
        }
    }
    let counters = batcher.counters();
    assert_eq!(
        counters.fault_fallbacks, 0,
        "a batched signature failed its public-key check"
    );
    if batcher.has_kernel() {
        assert_eq!(
            counters.batched, count as u64,
            "one key size, 2 to 8 requests: every signature goes through the kernel"
        );
    }
}
