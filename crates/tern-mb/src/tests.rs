//! The batch layer against aws-lc-rs: PKCS#1 v1.5 signatures byte for byte, PSS signatures
//! verified, batches of 1 to 8 over several keys and sizes, and the fault check's fallback.
//! (The kernel's arithmetic against a reference bignum: tests/kernel.rs.)

use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{self, KeyPair, RsaKeyPair, UnparsedPublicKey};

use crate::{Batcher, MbError, RsaKey, Scheme, SignRequest};

/// A test key: ours and aws-lc-rs's, from the same PKCS#8 DER.
struct TestKey {
    ours: RsaKey,
    theirs: RsaKeyPair,
}

fn generate(size: KeySize) -> TestKey {
    let theirs = RsaKeyPair::generate(size).expect("aws-lc-rs generates RSA keys");
    let der = theirs.as_der().expect("aws-lc-rs encodes its key");
    let ours = RsaKey::from_der(der.as_ref()).expect("a PKCS#8 RSA key loads");
    TestKey { ours, theirs }
}

/// Keys generated once per test binary: three 2048-bit, one 3072-bit, one 4096-bit.
fn keys() -> &'static [TestKey] {
    static KEYS: OnceLock<Vec<TestKey>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let sizes = [
            KeySize::Rsa2048,
            KeySize::Rsa2048,
            KeySize::Rsa2048,
            KeySize::Rsa3072,
            KeySize::Rsa4096,
        ];
        sizes.into_iter().map(generate).collect()
    })
}

fn reference(key: &TestKey, scheme: Scheme, message: &[u8]) -> Vec<u8> {
    let mut out = vec![0; key.theirs.public_modulus_len()];
    key.theirs
        .sign(scheme.aws_lc(), &SystemRandom::new(), message, &mut out)
        .expect("aws-lc-rs signs");
    out
}

fn messages(count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| format!("message {i} of a batch").into_bytes())
        .collect()
}

/// Signs `count` messages with keys `key_of(i)` and checks each against aws-lc-rs.
fn check_pkcs1(batcher: &Batcher, count: usize, key_of: impl Fn(usize) -> usize, scheme: Scheme) {
    let keys = keys();
    let messages = messages(count);
    let requests: Vec<SignRequest<'_>> = (0..count)
        .map(|i| SignRequest {
            key: &keys[key_of(i)].ours,
            scheme,
            message: &messages[i],
        })
        .collect();
    let results = batcher.sign(&requests);
    assert_eq!(results.len(), count);
    for (i, result) in results.into_iter().enumerate() {
        let ours = result.expect("signs");
        let expected = reference(&keys[key_of(i)], scheme, &messages[i]);
        assert!(
            ours == expected,
            "request {i} of {count}: signature differs"
        );
    }
}

#[test]
fn pkcs1_batches_of_one_to_eight_match_aws_lc() {
    let batcher = Batcher::new();
    for count in 1..=8 {
        check_pkcs1(&batcher, count, |i| i % 3, Scheme::Pkcs1Sha256);
    }
    let counters = batcher.counters();
    if batcher.has_kernel() {
        // Batches of 2..=8: 35 signatures in 7 batches; the batch of one signed alone.
        assert_eq!(counters.batches, 7, "{counters:?}");
        assert_eq!(counters.batched, 35, "{counters:?}");
        assert_eq!(counters.single, 1, "{counters:?}");
    } else {
        eprintln!("no AVX-512 IFMA on this CPU: only the fallback was tested");
        assert_eq!(counters.single, 36);
    }
    assert_eq!(counters.fault_fallbacks, 0);
}

#[test]
fn one_key_fills_a_batch_and_sha384_sha512_match() {
    let batcher = Batcher::new();
    check_pkcs1(&batcher, 8, |_| 0, Scheme::Pkcs1Sha384);
    check_pkcs1(&batcher, 5, |_| 1, Scheme::Pkcs1Sha512);
    assert_eq!(batcher.counters().fault_fallbacks, 0);
}

#[test]
fn mixed_sizes_are_batched_by_size() {
    let batcher = Batcher::new();
    // 2048, 3072 and 4096-bit keys interleaved; nine 2048-bit requests.
    let key_of = |i: usize| [0, 3, 1, 4, 2, 3, 0, 4, 1, 2, 0, 1, 2][i];
    check_pkcs1(&batcher, 13, key_of, Scheme::Pkcs1Sha256);
    let counters = batcher.counters();
    if batcher.has_kernel() {
        // 2048: a batch of eight and one left alone; 3072: a batch of two; 4096: two.
        assert_eq!(counters.batches, 3, "{counters:?}");
        assert_eq!(counters.batched, 12, "{counters:?}");
        assert_eq!(counters.single, 1, "{counters:?}");
    }
    assert_eq!(counters.fault_fallbacks, 0);
}

#[test]
fn pss_signatures_verify() {
    let batcher = Batcher::new();
    let keys = keys();
    let messages = messages(6);
    for scheme in [Scheme::PssSha256, Scheme::PssSha384, Scheme::PssSha512] {
        let requests: Vec<SignRequest<'_>> = (0..6)
            .map(|i| SignRequest {
                key: &keys[i % 5].ours,
                scheme,
                message: &messages[i],
            })
            .collect();
        for (i, result) in batcher.sign(&requests).into_iter().enumerate() {
            let verify: &dyn signature::VerificationAlgorithm = match scheme {
                Scheme::PssSha384 => &signature::RSA_PSS_2048_8192_SHA384,
                Scheme::PssSha512 => &signature::RSA_PSS_2048_8192_SHA512,
                _ => &signature::RSA_PSS_2048_8192_SHA256,
            };
            let public = keys[i % 5].theirs.public_key().as_ref();
            UnparsedPublicKey::new(verify, public)
                .verify(&messages[i], &result.expect("signs"))
                .unwrap_or_else(|_| panic!("{scheme:?} request {i}: does not verify"));
        }
    }
    assert_eq!(batcher.counters().fault_fallbacks, 0);
}

#[test]
fn a_corrupted_result_is_caught_and_signed_again() {
    let batcher = Batcher::new();
    if !batcher.has_kernel() {
        eprintln!("no AVX-512 IFMA on this CPU: nothing to corrupt");
        return;
    }
    batcher.corrupt.store(0b1001_0010, Ordering::Relaxed);
    check_pkcs1(&batcher, 8, |i| i % 3, Scheme::Pkcs1Sha256);
    let counters = batcher.counters();
    assert_eq!(counters.fault_fallbacks, 3, "{counters:?}");
    assert_eq!(counters.batched, 5, "{counters:?}");
}

#[test]
fn without_kernel_everything_is_signed_alone() {
    let batcher = Batcher::without_kernel();
    check_pkcs1(&batcher, 4, |i| i % 3, Scheme::Pkcs1Sha256);
    let counters = batcher.counters();
    assert_eq!((counters.batches, counters.single), (0, 4));
}

#[test]
fn pkcs1_der_loads_too() {
    let test_key = &keys()[0];
    let pkcs8 = test_key.theirs.as_der().expect("encodes");
    let info = <pkcs8::PrivateKeyInfoRef<'_> as pkcs1::der::Decode>::from_der(pkcs8.as_ref())
        .expect("aws-lc-rs writes PKCS#8");
    let key = RsaKey::from_der(info.private_key.as_bytes()).expect("PKCS#1 loads");
    assert!(key.batchable());
    assert_eq!(key.modulus_len(), 256);
}

#[test]
fn bad_der_is_an_error() {
    for der in [&b""[..], b"\x30\x03\x02\x01\x00", &[0x30; 40]] {
        assert!(matches!(RsaKey::from_der(der), Err(MbError::Key(_))));
    }
}
