//! `mb_kernels`: tern-mb's AVX-512 IFMA kernels against aws-lc on arbitrary inputs.
//!
//! Why: the kernels are tern's own big-number code, entered through `unsafe`; their property
//! tests cover random and edge-case inputs, and this target lets a fuzzer hunt for the one
//! input where a lane disagrees with aws-lc. Byte 0 chooses what runs:
//!
//! - 0 mod 3: **X25519**. The rest is read as eight (scalar, u-coordinate) pairs of 32 + 32 bytes,
//!   cycled when short (zeros when empty). Each lane's shared secret equals aws-lc-rs's (all
//!   zeros where aws-lc-rs refuses a low-order point, which is what the ladder computes), and
//!   each lane's public key (`x25519_base_x8`) equals aws-lc-rs's for the same scalar.
//! - 1 mod 3: **RSA signatures** through [`tern_mb::Batcher`]. Byte 1 picks the key size (2048,
//!   3072 or 4096 bits; one key of each, generated once per process), the scheme (PKCS#1 v1.5
//!   or PSS, SHA-256) and the batch size (2 to 8); the messages are slices of the rest. PKCS#1
//!   v1.5 signatures equal aws-lc-rs's byte for byte, PSS ones verify with aws-lc-rs, and the
//!   batcher's fault check never fired (it would otherwise hide a kernel error behind its
//!   aws-lc fallback).
//! - 2 mod 3: **ECDSA P-256**. Eight scalars of 32 bytes (cycled; a lane outside `[1, n)`
//!   takes its lane number plus one) through the nonce kernel: each lane's `x(k·G)` equals
//!   aws-lc-rs's public key for the same scalar (low word compared). Then a key from the
//!   first 32 bytes (skipped when not a valid scalar) signs the rest with a pair from a
//!   kernel-filled pool, and aws-lc-rs verifies the signature; the pool's fault check never
//!   fired.
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
    let (selector, rest) = data.split_first().map_or((0, data), |(s, r)| (*s, r));
    match selector % 3 {
        0 => x25519(rest),
        1 => rsa(rest),
        _ => p256(rest),
    }
}

/// The P-256 group order n, big-endian.
const P256_N: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
];

/// `bytes` (big-endian) as four words, least significant first, if `1 ≤ bytes < n`.
fn p256_scalar(bytes: &[u8; 32]) -> Option<[u64; 4]> {
    let valid = bytes.iter().any(|&b| b != 0) && bytes.as_slice() < P256_N.as_slice();
    valid.then(|| {
        std::array::from_fn(|w| {
            let at = 32 - 8 * (w + 1);
            u64::from_be_bytes(bytes[at..at + 8].try_into().unwrap_or_default())
        })
    })
}

fn p256(data: &[u8]) {
    use aws_lc_rs::agreement::ECDH_P256;
    let Some(kernel) = tern_mb::Kernel::detect() else {
        return;
    };
    let (scalars, _) = lanes(data);
    let ks: [[u64; 4]; LANES] = std::array::from_fn(|lane| {
        p256_scalar(&scalars[lane]).unwrap_or([lane as u64 + 1, 0, 0, 0])
    });
    let xs = tern_mb::p256::kernel_for_timing(&kernel, &ks).expect("the P-256 tables build");
    for lane in 0..LANES {
        let mut k = [0u8; 32];
        for (w, word) in ks[lane].iter().enumerate() {
            k[32 - 8 * (w + 1)..32 - 8 * w].copy_from_slice(&word.to_be_bytes());
        }
        let public = PrivateKey::from_private_key(&ECDH_P256, &k)
            .ok()
            .and_then(|key| key.compute_public_key().ok())
            .expect("aws-lc-rs computes k·G for 1 ≤ k < n");
        // Uncompressed: 0x04, x (32 bytes), y (32 bytes); x's low word ends at byte 32.
        let low = u64::from_be_bytes(public.as_ref()[25..33].try_into().unwrap_or_default());
        assert_eq!(xs[lane], low, "lane {lane}: x(k·G) differs from aws-lc's");
    }
    let Some((d, message)) = data.split_first_chunk::<32>() else {
        return;
    };
    let Some(key) = tern_mb::p256::P256Key::from_scalar(d) else {
        return;
    };
    let mut pool = tern_mb::p256::NoncePool::new();
    let pair = pool
        .take(&kernel)
        .expect("a kernel-filled pool gives a pair");
    let signature = key.sign(pair, message).expect("a valid key signs");
    let public = PrivateKey::from_private_key(&ECDH_P256, d)
        .ok()
        .and_then(|key| key.compute_public_key().ok())
        .expect("aws-lc-rs takes a valid P-256 scalar");
    signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_ASN1, public.as_ref())
        .verify(message, &signature)
        .expect("the batched ECDSA signature verifies with aws-lc-rs");
    assert_eq!(
        pool.counters().faults,
        0,
        "a nonce pair failed its fault check"
    );
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
