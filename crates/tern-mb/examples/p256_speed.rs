//! ECDSA P-256 per CPU-second: aws-lc one signature at a time against tern-mb's nonce pairs
//! (eight per kernel run) and the signatures made from them.
//!
//! ```text
//! cargo build --release -p tern-mb --example p256_speed
//! taskset -c 1 target/release/examples/p256_speed [seconds per measurement, default 2]
//! ```
//!
//! Rates, each measured three times in alternation (a noisy neighbour hurts all alike), the
//! best kept:
//!
//! - `sign aws-lc`: `EcdsaKeyPair::sign` (SHA-256 of a 130-byte message, the size of a TLS 1.3
//!   CertificateVerify input, and the signature);
//! - `nonce pairs`: `NoncePool::refill` (8 fresh nonces, the kernel, 8 fault checks), per pair;
//! - `sign batched`: `NoncePool::take` + `P256Key::sign`, the kernel's cost amortized;
//! - `sign batched + verify`: the same, each signature then verified by aws-lc-rs (the fault
//!   protection the design note compares with the on-curve and inverse checks);
//! - `verify aws-lc`: `UnparsedPublicKey::verify` alone.
//!
//! It first prints how long the process's first kernel run takes (the fixed-base table is
//! built then). Time is the thread's CPU time from `/proc/thread-self/schedstat` (wall time without it).

use std::time::Instant;

use aws_lc_rs::error::Unspecified;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    EcdsaKeyPair, KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_ASN1,
    ECDSA_P256_SHA256_ASN1_SIGNING,
};
use tern_mb::p256::{NoncePool, P256Key};
use tern_mb::Kernel;

fn cpu_seconds(start: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(|| start.elapsed().as_secs_f64(), |ns| ns as f64 * 1e-9)
}

/// Operations per CPU-second of `op` (which does `per_call` operations), run for `seconds`.
fn rate(seconds: f64, per_call: usize, op: &mut dyn FnMut() -> Result<(), Unspecified>) -> f64 {
    let start = Instant::now();
    let begin = cpu_seconds(start);
    let mut calls = 0u64;
    let mut used = 0.0;
    while used < seconds {
        for _ in 0..16 {
            op().expect("the operation succeeds");
        }
        calls += 16;
        used = cpu_seconds(start) - begin;
    }
    (calls as f64 * per_call as f64) / used
}

/// `NoncePool::take` + `P256Key::sign` (+ aws-lc-rs verification when `verify`).
fn batched_signer<'a>(
    kernel: &'a Kernel,
    key: &'a P256Key,
    public: &'a UnparsedPublicKey<&[u8]>,
    message: &'a [u8],
    verify: bool,
) -> impl FnMut() -> Result<(), Unspecified> + 'a {
    let mut pool = NoncePool::new();
    move || {
        let pair = pool.take(kernel).ok_or(Unspecified)?;
        let signature = key.sign(pair, message).ok_or(Unspecified)?;
        if verify {
            public.verify(message, &signature)?;
        }
        Ok(())
    }
}

fn main() -> Result<(), Unspecified> {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let Some(kernel) = Kernel::detect() else {
        println!("this CPU lacks AVX-512 IFMA: nothing to compare");
        return Ok(());
    };
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)?;
    let theirs = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref())
        .map_err(|_| Unspecified)?;
    let ours = P256Key::from_der(pkcs8.as_ref()).map_err(|_| Unspecified)?;
    let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, theirs.public_key().as_ref());
    let message = [0x20u8; 130];
    let signature = theirs.sign(&rng, &message)?;

    let mut pool = NoncePool::new();
    // The first run also builds the fixed-base table (once per process).
    let start = Instant::now();
    pool.refill(&kernel);
    println!(
        "first kernel run, table included: {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    let mut sign_aws_lc = || theirs.sign(&rng, &message).map(drop);
    let mut refill = || {
        let before = pool.counters().pairs;
        pool.refill(&kernel);
        while pool.take(&kernel).is_some() && !pool.is_empty() {}
        (pool.counters().pairs > before)
            .then_some(())
            .ok_or(Unspecified)
    };
    let mut batched = batched_signer(&kernel, &ours, &public, &message, false);
    let mut batched_verified = batched_signer(&kernel, &ours, &public, &message, true);
    let mut verify = || public.verify(&message, signature.as_ref());

    let names = [
        "sign aws-lc",
        "nonce pairs",
        "sign batched",
        "sign batched + verify",
        "verify aws-lc",
    ];
    let mut best = [0.0f64; 5];
    for _ in 0..3 {
        let rates = [
            rate(seconds, 1, &mut sign_aws_lc),
            rate(seconds, 8, &mut refill),
            rate(seconds, 1, &mut batched),
            rate(seconds, 1, &mut batched_verified),
            rate(seconds, 1, &mut verify),
        ];
        for (b, r) in best.iter_mut().zip(rates) {
            *b = b.max(r);
        }
    }
    println!("ECDSA P-256, operations per CPU-second (best of 3 × {seconds} s)");
    for (name, r) in names.iter().zip(best) {
        let ratio = r / best[0];
        println!(
            "{name:<22} {r:>10.0} {:>8.2} µs {ratio:>6.2}× aws-lc sign",
            1e6 / r
        );
    }
    Ok(())
}
