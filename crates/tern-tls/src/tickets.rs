//! Session ticket keys: rotating keys made in the process, or keys read from a shared file.
//!
//! A ticket is `key name (16 bytes) ‖ nonce (12) ‖ AES-256-GCM(session state) ‖ tag (16)`, the
//! key name authenticated as associated data. The name says which key to try, so decryption is
//! one lookup in a handful of keys and one AEAD open.
//!
//! - **Without a key file** tickets come from a rotator over random keys (`tickets/rotator.rs`,
//!   rustls' `TicketRotator` semantics plus the key's age for `show tls`): a new key every
//!   `ticket_rotation`, the previous one still accepted for one more period (so a ticket lives
//!   at most two periods). One rotator per period length is made per process and kept across
//!   configuration reloads, so every worker and every reload share it (SO_REUSEPORT spreads one
//!   client's connections over the workers). Its read lock is the one rustls' own rotator takes
//!   on every ticket.
//! - **With a key file** (`ticket_key_file`, format in `tickets/keyfile.rs` and
//!   docs/configuration.md) the keys are fixed until the next load: the first encrypts, all
//!   decrypt, with no lock at all. Several tern instances given the same file resume each
//!   other's sessions; rotation is the operator's (or a cron job's) edit of the file followed by
//!   a reload, in the file's order.

mod keyfile;
mod rotator;
mod state;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use rustls::server::ProducesTickets;

use crate::TlsError;

pub(crate) use keyfile::parse_key_file;
use rotator::Rotator;
pub use state::TicketState;
pub(crate) use state::{unix_seconds, TicketKeys};

const NAME_LEN: usize = 16;
const TAG_LEN: usize = 16;

/// One ticket key: its public name and its AES-256-GCM key.
pub(crate) struct TicketKey {
    name: [u8; NAME_LEN],
    key: LessSafeKey,
}

impl std::fmt::Debug for TicketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TicketKey").finish_non_exhaustive()
    }
}

impl TicketKey {
    pub(crate) fn new(name: [u8; NAME_LEN], key: &[u8; 32]) -> Option<Self> {
        let key = UnboundKey::new(&AES_256_GCM, key).ok()?;
        Some(Self {
            name,
            key: LessSafeKey::new(key),
        })
    }

    fn random() -> Option<Self> {
        let mut bytes = [0u8; NAME_LEN + 32];
        aws_lc_rs::rand::fill(&mut bytes).ok()?;
        let (name, key) = bytes.split_at(NAME_LEN);
        Self::new(name.try_into().ok()?, key.try_into().ok()?)
    }

    fn seal(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut nonce = [0u8; NONCE_LEN];
        aws_lc_rs::rand::fill(&mut nonce).ok()?;
        let mut out = Vec::with_capacity(NAME_LEN + NONCE_LEN + plain.len() + TAG_LEN);
        out.extend_from_slice(&self.name);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(plain);
        let (head, body) = out.split_at_mut(NAME_LEN + NONCE_LEN);
        let tag = self
            .key
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&head[..NAME_LEN]),
                body,
            )
            .ok()?;
        out.extend_from_slice(tag.as_ref());
        Some(out)
    }

    /// Opens a ticket already known to carry this key's name.
    fn open(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        let nonce = ticket.get(NAME_LEN..NAME_LEN + NONCE_LEN)?;
        let mut body = ticket.get(NAME_LEN + NONCE_LEN..)?.to_vec();
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let plain_len = self
            .key
            .open_in_place(nonce, Aad::from(&self.name), &mut body)
            .ok()?
            .len();
        body.truncate(plain_len);
        Some(body)
    }
}

/// A fixed set of keys: the first encrypts, every one decrypts.
#[derive(Debug)]
pub(crate) struct KeySet {
    keys: Vec<TicketKey>,
    lifetime: u32,
}

impl KeySet {
    pub(crate) fn new(keys: Vec<TicketKey>, lifetime: u32) -> Self {
        Self { keys, lifetime }
    }
}

impl ProducesTickets for KeySet {
    fn enabled(&self) -> bool {
        !self.keys.is_empty()
    }

    fn lifetime(&self) -> u32 {
        self.lifetime
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.keys.first()?.seal(plain)
    }

    fn decrypt(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        let name = ticket.get(..NAME_LEN)?;
        self.keys.iter().find(|k| k.name == name)?.open(ticket)
    }
}

/// A bind's ticketer and what `show tls` reports of its keys.
pub(crate) type Ticketer = (Arc<dyn ProducesTickets>, TicketKeys);

/// The ticketer of a bind, from `key_file` when given, else the process's rotator for
/// `rotation`; with what `show tls` reports of its keys.
pub(crate) fn ticketer(rotation: Duration, key_file: Option<&Path>) -> Result<Ticketer, TlsError> {
    // A ticket lives at most two rotation periods (see the module docs); validated <= 3 days.
    let period = u32::try_from(rotation.as_secs().max(1)).unwrap_or(u32::MAX / 2);
    if let Some(path) = key_file {
        let keys = parse_key_file(path)?;
        let lifetime = period.saturating_mul(2);
        let state = TicketKeys::file(path, keys.len(), lifetime);
        return Ok((Arc::new(KeySet::new(keys, lifetime)), state));
    }
    static ROTATORS: Mutex<Vec<Arc<Rotator>>> = Mutex::new(Vec::new());
    // Taken only while a configuration is built; a poisoned lock still holds valid rotators.
    let mut rotators = ROTATORS.lock().unwrap_or_else(|poison| poison.into_inner());
    let rotator = match rotators.iter().find(|r| r.period() == period) {
        Some(rotator) => Arc::clone(rotator),
        None => {
            let rotator = Arc::new(Rotator::new(period).map_err(rustls::Error::from)?);
            rotators.push(Arc::clone(&rotator));
            rotator
        }
    };
    Ok((rotator.clone(), TicketKeys::Rotating(rotator)))
}

#[cfg(test)]
mod tests;

/// A key file holding `key` (48 or 80 bytes), for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) fn keyfile_for_tests(key: &[u8]) -> String {
    format!("{}\n", keyfile::encode_base64(key))
}
