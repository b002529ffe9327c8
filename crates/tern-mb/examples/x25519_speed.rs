//! X25519 operations per CPU-second: aws-lc one at a time against tern-mb's kernel eight at a
//! time (counted per operation).
//!
//! ```text
//! cargo build --release -p tern-mb --example x25519_speed
//! taskset -c 1 target/release/examples/x25519_speed [seconds per measurement, default 2]
//! ```
//!
//! Four rates, each measured three times in alternation (so a noisy neighbour hurts both
//! sides alike) and the best kept:
//!
//! - `derive`: the shared secret from a peer key parsed once (aws-lc-rs `agreement::agree`,
//!   what `tern speed kx` and `openssl speed ecdhx25519` count); batched: `x25519_x8` with
//!   eight different scalars and peer keys;
//! - `keygen`: a fresh private key and its public key (aws-lc-rs `PrivateKey::generate` +
//!   `compute_public_key`, which uses a fixed-base table); batched: 256 random bytes from the
//!   same generator and `x25519_base_x8` (the ladder on u = 9, no table).
//!
//! Time is the thread's CPU time from `/proc/thread-self/schedstat` (nanoseconds on CPU),
//! falling back to wall time where that file is missing.

use std::time::Instant;

use aws_lc_rs::agreement::{self, ParsedPublicKey, PrivateKey, UnparsedPublicKey, X25519};
use aws_lc_rs::error::Unspecified;
use aws_lc_rs::rand;
use tern_mb::{x25519_base_x8, x25519_x8};

const LANES: usize = 8;

/// Seconds this thread has been on a CPU (or since `start`, without schedstat).
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

fn keygen_aws_lc() -> Result<(), Unspecified> {
    let private = PrivateKey::generate(&X25519)?;
    private.compute_public_key().map(drop)
}

fn keygen_batched() -> Result<(), Unspecified> {
    let mut scalars = [[0u8; 32]; LANES];
    for scalar in &mut scalars {
        rand::fill(scalar)?;
    }
    x25519_base_x8(&scalars).ok_or(Unspecified).map(drop)
}

fn main() -> Result<(), Unspecified> {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    if x25519_x8(&[[0; 32]; LANES], &[[9; 32]; LANES]).is_none() {
        println!("this CPU lacks AVX-512 IFMA: nothing to compare");
        return Ok(());
    }
    let mine = PrivateKey::generate(&X25519)?;
    let peer = PrivateKey::generate(&X25519)?.compute_public_key()?;
    let parsed = ParsedPublicKey::try_from(UnparsedPublicKey::new(&X25519, peer.as_ref()))?;
    let mut derive_aws_lc = || agreement::agree(&mine, parsed.clone(), Unspecified, |_| Ok(()));
    let mut scalars = [[0u8; 32]; LANES];
    let mut points = [[0u8; 32]; LANES];
    for (scalar, point) in scalars.iter_mut().zip(&mut points) {
        rand::fill(scalar)?;
        *point = PrivateKey::generate(&X25519)?
            .compute_public_key()?
            .as_ref()
            .try_into()
            .map_err(|_| Unspecified)?;
    }
    let mut derive_batched = || x25519_x8(&scalars, &points).ok_or(Unspecified).map(drop);

    let mut best = [0.0f64; 4];
    for _ in 0..3 {
        let rates = [
            rate(seconds, 1, &mut derive_aws_lc),
            rate(seconds, LANES, &mut derive_batched),
            rate(seconds, 1, &mut keygen_aws_lc),
            rate(seconds, LANES, &mut keygen_batched),
        ];
        for (b, r) in best.iter_mut().zip(rates) {
            *b = b.max(r);
        }
    }
    println!("X25519, operations per CPU-second (best of 3 × {seconds} s)");
    println!("{:<8} {:>12} {:>12} {:>7}", "", "aws-lc", "batched x8", "×");
    for (name, pair) in ["derive", "keygen"].iter().zip(best.chunks(2)) {
        let (single, batched) = (pair[0], pair[1]);
        let ratio = batched / single;
        println!("{name:<8} {single:>12.0} {batched:>12.0} {ratio:>7.2}");
    }
    Ok(())
}
