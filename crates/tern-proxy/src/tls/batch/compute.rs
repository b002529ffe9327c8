//! One batch's arithmetic: the server halves of up to eight X25519 key exchanges (a key pair
//! and the shared secret with the client's share each) on the IFMA kernels.
//!
//! A handshake needs two ladders: its public key `X25519(k, 9)` and the shared secret
//! `X25519(k, peer)`. The kernel runs eight ladders at once for ~57 µs of CPU whatever their
//! inputs, while aws-lc-rs makes a public key alone in ~8.3 µs (a fixed-base table) and a
//! shared secret in ~25 µs (design note 0004's measurements). So the shared secrets always go
//! to the kernel, the public keys fill the lanes left in its first run, and the public keys
//! that do not fit go to aws-lc-rs unless there are more than [`KEYGENS_ALONE_MAX`] of them,
//! when a second run is cheaper.
//!
//! The check before a result is used: a shared secret of all zeros comes from a low-order
//! client share, which aws-lc-rs refuses; such a lane is not used, and the handshake's own
//! X25519 (aws-lc-rs) refuses the share as it always does.

use aws_lc_rs::agreement::{self, PrivateKey};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use tern_mb::x25519::{BASE_POINT, LEN};
use tern_tls::PreparedX25519;
use zeroize::Zeroize;

/// Ladders per kernel run.
pub(crate) const LANES: usize = 8;

/// Public keys left to aws-lc-rs rather than given a kernel run of their own: a run costs
/// about as much as seven of aws-lc-rs's key generations (57 µs against 8.3 µs).
const KEYGENS_ALONE_MAX: usize = 6;

/// The server halves for these client shares (at most [`LANES`]): per share, the prepared
/// result, or `None` when its check failed. `None` overall when the kernels are missing or
/// the random generator failed (every handshake then computes alone).
pub(crate) fn server_halves(peers: &[[u8; LEN]]) -> Option<Vec<Option<PreparedX25519>>> {
    let mut scalars = vec![[0u8; LEN]; peers.len()];
    let rng = SystemRandom::new();
    for scalar in &mut scalars {
        rng.fill(scalar).ok()?;
    }
    let halves = with_scalars(peers, &scalars);
    scalars.zeroize();
    halves
}

/// [`server_halves`] with the scalars given (tests compare with aws-lc-rs).
pub(crate) fn with_scalars(
    peers: &[[u8; LEN]],
    scalars: &[[u8; LEN]],
) -> Option<Vec<Option<PreparedX25519>>> {
    let n = peers.len().min(scalars.len()).min(LANES);
    // Public keys computed in the kernel: those that fit beside the shared secrets, or all of
    // them when the rest would be too many for aws-lc-rs.
    let fit = LANES - n;
    let in_kernel = if n - fit.min(n) > KEYGENS_ALONE_MAX {
        n
    } else {
        fit.min(n)
    };
    // Ladder inputs: every shared secret, then the public keys in the kernel.
    let jobs: Vec<(usize, &[u8; LEN])> = (0..n)
        .map(|i| (i, &peers[i]))
        .chain((0..in_kernel).map(|i| (i, &BASE_POINT)))
        .collect();
    let mut out = Vec::with_capacity(jobs.len());
    for run in jobs.chunks(LANES) {
        let mut ks = [[0u8; LEN]; LANES];
        let mut us = [BASE_POINT; LANES];
        for (lane, &(i, u)) in run.iter().enumerate() {
            ks[lane] = scalars[i];
            us[lane] = *u;
        }
        let results = tern_mb::x25519_x8(&ks, &us);
        ks.zeroize();
        out.extend_from_slice(&results?[..run.len()]);
    }
    let (secrets, publics) = out.split_at(n);
    let halves = (0..n)
        .map(|i| {
            let public = match publics.get(i) {
                Some(public) => *public,
                None => public_alone(&scalars[i])?,
            };
            let secret = secrets[i];
            (secret != [0; LEN]).then(|| PreparedX25519::new(peers[i], public, secret))
        })
        .collect();
    out.zeroize();
    Some(halves)
}

/// `X25519(scalar, 9)` by aws-lc-rs.
fn public_alone(scalar: &[u8; LEN]) -> Option<[u8; LEN]> {
    let key = PrivateKey::from_private_key(&agreement::X25519, scalar).ok()?;
    let public = key.compute_public_key().ok()?;
    public.as_ref().try_into().ok()
}
