//! X25519 whose server half can be computed before rustls asks for it, so that a worker can
//! compute the key exchanges of several handshakes in one batch (`global.crypto_batch`,
//! docs/design/0004-batched-crypto.md).
//!
//! rustls runs a TLS 1.3 server's key exchange synchronously, inside `process_new_packets`,
//! through [`SupportedKxGroup::start_and_complete`] with the client's key share. Nothing in
//! that computation depends on the handshake's state: it is a fresh private scalar, its public
//! key and the shared secret with the client's share, all known once the ClientHello has
//! arrived. So the proxy reads the ClientHello, computes the server half ahead (batched), and
//! hands the result to this group for the duration of the handshake's processing
//! ([`with_prepared_x25519`], a thread-local slot). [`X25519`] uses the prepared result when
//! it was made for the very key share rustls passes, and otherwise computes as aws-lc-rs does
//! (no result prepared, another share, a TLS 1.2 handshake's `start`).
//!
//! Why not suspend inside the group instead (a stackful coroutine or a thread blocked on a
//! channel, as a signature would need): the design note compares them; for a key exchange,
//! computing ahead needs neither a second stack nor a thread switch, and no `unsafe` code.

use std::cell::Cell;

use rustls::crypto::aws_lc_rs::kx_group;
use rustls::crypto::{ActiveKeyExchange, CompletedKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::ffdhe_groups::FfdheGroup;
use rustls::{Error, NamedGroup, ProtocolVersion};
use zeroize::Zeroize;

/// Bytes of an X25519 key share, scalar and shared secret.
pub const X25519_LEN: usize = 32;

/// A server key share and shared secret computed ahead for one client key share.
pub struct PreparedX25519 {
    /// The client's key share it was computed for.
    peer: [u8; X25519_LEN],
    /// The server's key share (public key).
    public: [u8; X25519_LEN],
    secret: [u8; X25519_LEN],
}

impl PreparedX25519 {
    /// The result of `X25519(scalar, 9)` (`public`) and `X25519(scalar, peer)` (`secret`) for
    /// a fresh random scalar. The caller has checked that `secret` is not all zeros (a
    /// low-order `peer`, which aws-lc-rs refuses: leave such a share to it).
    pub fn new(peer: [u8; X25519_LEN], public: [u8; X25519_LEN], secret: [u8; X25519_LEN]) -> Self {
        Self {
            peer,
            public,
            secret,
        }
    }
}

impl std::fmt::Debug for PreparedX25519 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedX25519").finish_non_exhaustive()
    }
}

impl Drop for PreparedX25519 {
    fn drop(&mut self) {
        self.secret.zeroize();
    }
}

thread_local! {
    /// The result prepared for the handshake being processed on this thread, if any.
    static PREPARED: Cell<Option<PreparedX25519>> = const { Cell::new(None) };
}

/// Runs `f` (a step of one handshake's processing) with `prepared` offered to [`X25519`];
/// afterwards `prepared` is `None` if the handshake used it, and holds it otherwise. The slot
/// is emptied again when `f` returns or unwinds, so nothing prepared for one handshake is
/// left for the next one on this thread.
pub fn with_prepared_x25519<R>(prepared: &mut Option<PreparedX25519>, f: impl FnOnce() -> R) -> R {
    if prepared.is_none() {
        return f();
    }
    PREPARED.with(|slot| slot.set(prepared.take()));
    let _restore = Restore(prepared);
    f()
}

/// Takes back what the handshake left in the slot.
struct Restore<'a>(&'a mut Option<PreparedX25519>);

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        *self.0 = PREPARED.with(Cell::take);
    }
}

/// The prepared result if it was made for `peer`.
fn take_for(peer: &[u8]) -> Option<PreparedX25519> {
    PREPARED.with(|slot| {
        let prepared = slot.take()?;
        if prepared.peer[..] == *peer {
            Some(prepared)
        } else {
            slot.set(Some(prepared));
            None
        }
    })
}

/// aws-lc-rs's X25519, which takes a result prepared for the client's key share when there
/// is one (see the module docs).
#[derive(Debug)]
struct PreparableX25519;

/// The X25519 group of tern's provider.
pub static X25519: &dyn SupportedKxGroup = &PreparableX25519;

impl SupportedKxGroup for PreparableX25519 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        kx_group::X25519.start()
    }

    fn start_and_complete(&self, peer_pub_key: &[u8]) -> Result<CompletedKeyExchange, Error> {
        match take_for(peer_pub_key) {
            Some(prepared) => Ok(CompletedKeyExchange {
                group: NamedGroup::X25519,
                pub_key: prepared.public.to_vec(),
                secret: SharedSecret::from(&prepared.secret[..]),
            }),
            None => kx_group::X25519.start_and_complete(peer_pub_key),
        }
    }

    fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
        None
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::X25519
    }

    fn fips(&self) -> bool {
        kx_group::X25519.fips()
    }

    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        kx_group::X25519.usable_for_version(version)
    }
}

#[cfg(test)]
mod tests;
