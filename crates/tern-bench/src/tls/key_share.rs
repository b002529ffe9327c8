//! Client key shares reused for a bounded number of handshakes (`--key-share-reuse N`).
//!
//! A real client makes a fresh key pair for every ClientHello. A load generator does not need
//! forward secrecy for its own side, and the key generation is a fixed-base scalar
//! multiplication per handshake (for X25519, ~5% of the client's CPU per full handshake, more
//! for the NIST curves): reusing the pair for N handshakes leaves that work out and nothing
//! else. The server sees the same ClientHello it always sees and does all of its work: its own
//! fresh key pair, the shared secret (computed from our public key, whatever it is), the
//! signature. Only X25519, P-256 and P-384 are wrapped; the ML-KEM hybrids stay rustls' own.
//!
//! Each client thread keeps its own pair per group (no lock between threads); the pair is
//! replaced after N uses. N = 1 is a fresh pair per handshake, as a browser does.

use std::cell::RefCell;
use std::sync::Arc;

use aws_lc_rs::agreement::{self, PrivateKey, UnparsedPublicKey};
use rustls::crypto::{ActiveKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved};

/// A key exchange group whose key pair is reused for `uses` handshakes per thread.
#[derive(Debug)]
pub struct Reused {
    group: NamedGroup,
    alg: &'static agreement::Algorithm,
    uses: u32,
}

impl Reused {
    /// The wrapped group for `group`, or `None` if the group is not a plain (EC)DH group.
    pub fn new(group: NamedGroup, uses: u32) -> Option<Reused> {
        let alg = match group {
            NamedGroup::X25519 => &agreement::X25519,
            NamedGroup::secp256r1 => &agreement::ECDH_P256,
            NamedGroup::secp384r1 => &agreement::ECDH_P384,
            _ => return None,
        };
        Some(Reused {
            group,
            alg,
            uses: uses.max(1),
        })
    }
}

/// One key pair and how many more handshakes may use it.
struct Slot {
    group: NamedGroup,
    pair: Arc<Pair>,
    left: u32,
}

#[derive(Debug)]
struct Pair {
    key: PrivateKey,
    public: Vec<u8>,
}

thread_local! {
    static SLOTS: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
}

impl Reused {
    fn fresh_pair(&self) -> Result<Arc<Pair>, Error> {
        let failed = || Error::General("key share generation failed".into());
        let key = PrivateKey::generate(self.alg).map_err(|_| failed())?;
        let public = key.compute_public_key().map_err(|_| failed())?;
        Ok(Arc::new(Pair {
            public: public.as_ref().to_vec(),
            key,
        }))
    }

    /// This thread's pair for the group, replaced when used up.
    fn pair(&self) -> Result<Arc<Pair>, Error> {
        SLOTS.with(|slots| {
            let mut slots = slots.borrow_mut();
            if let Some(slot) = slots.iter_mut().find(|s| s.group == self.group) {
                if slot.left == 0 {
                    slot.pair = self.fresh_pair()?;
                    slot.left = self.uses;
                }
                slot.left -= 1;
                return Ok(slot.pair.clone());
            }
            let pair = self.fresh_pair()?;
            slots.push(Slot {
                group: self.group,
                pair: pair.clone(),
                left: self.uses - 1,
            });
            Ok(pair)
        })
    }
}

impl SupportedKxGroup for Reused {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        Ok(Box::new(Active {
            group: self.group,
            alg: self.alg,
            pair: self.pair()?,
        }))
    }

    fn name(&self) -> NamedGroup {
        self.group
    }
}

/// A handshake's use of a (possibly shared) key pair.
struct Active {
    group: NamedGroup,
    alg: &'static agreement::Algorithm,
    pair: Arc<Pair>,
}

impl ActiveKeyExchange for Active {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, Error> {
        let peer = UnparsedPublicKey::new(self.alg, peer_pub_key);
        agreement::agree(
            &self.pair.key,
            peer,
            Error::from(PeerMisbehaved::InvalidKeyShare),
            |secret| Ok(SharedSecret::from(secret)),
        )
    }

    fn pub_key(&self) -> &[u8] {
        &self.pair.public
    }

    fn group(&self) -> NamedGroup {
        self.group
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::crypto::aws_lc_rs::kx_group;

    fn rustls_group(group: NamedGroup) -> &'static dyn SupportedKxGroup {
        match group {
            NamedGroup::X25519 => kx_group::X25519,
            NamedGroup::secp256r1 => kx_group::SECP256R1,
            _ => kx_group::SECP384R1,
        }
    }

    /// Both sides of an exchange, one of them a reused share, agree on the secret; the pair
    /// changes after `uses` handshakes and not before.
    #[test]
    fn reused_shares_agree_and_rotate() {
        for group in [
            NamedGroup::X25519,
            NamedGroup::secp256r1,
            NamedGroup::secp384r1,
        ] {
            let reused = Reused::new(group, 3).expect("plain group");
            let publics: Vec<Vec<u8>> = (0..4)
                .map(|_| {
                    let ours = reused.start().expect("start");
                    let theirs = rustls_group(group).start().expect("start");
                    let their_pub = theirs.pub_key().to_vec();
                    let our_pub = ours.pub_key().to_vec();
                    let a = ours.complete(&their_pub).expect("ours");
                    let b = theirs.complete(&our_pub).expect("theirs");
                    assert_eq!(a.secret_bytes(), b.secret_bytes(), "{group:?}");
                    our_pub
                })
                .collect();
            assert_eq!(publics[0], publics[1], "{group:?}");
            assert_eq!(publics[1], publics[2], "{group:?}");
            assert_ne!(publics[2], publics[3], "{group:?}: a new pair after 3 uses");
        }
    }

    #[test]
    fn garbage_peer_keys_are_refused() {
        let ours = Reused::new(NamedGroup::secp256r1, 10)
            .expect("plain group")
            .start()
            .expect("start");
        assert!(ours.complete(&[4; 65]).is_err());
    }

    #[test]
    fn hybrids_are_not_wrapped() {
        assert!(Reused::new(NamedGroup::X25519MLKEM768, 10).is_none());
    }
}
