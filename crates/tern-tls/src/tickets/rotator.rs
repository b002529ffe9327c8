//! The process's rotating ticket keys: rustls' `TicketRotator` semantics, plus the age of the
//! key in use for `show tls`.
//!
//! rustls' rotator keeps its keys and their switch time private, so an operator could not be
//! told how old the key encrypting tickets is. This one does the same thing and remembers when
//! each key was made:
//! - a new random key every `period` seconds, made lazily by the first encryption or decryption
//!   after the period ends (as rustls does; nothing runs in the background);
//! - the previous key still decrypts for one more period, so a ticket lives at most two;
//! - the common path takes a read lock only; the rotation takes the write lock, the new key
//!   being made before it so that no handshake waits on the random generator.
//!
//! Keys are [`TicketKey`]s held directly (no boxed ticketer per key), and decryption picks the
//! key by the ticket's name rather than trying each.

use std::sync::{RwLock, RwLockReadGuard};

use rustls::crypto::GetRandomFailed;
use rustls::pki_types::UnixTime;
use rustls::server::ProducesTickets;

use super::{TicketKey, NAME_LEN};

/// Rotating ticket keys shared by every bind with the same rotation period.
pub(crate) struct Rotator {
    /// Seconds a key encrypts new tickets.
    period: u32,
    state: RwLock<State>,
}

struct State {
    current: TicketKey,
    previous: Option<TicketKey>,
    /// When `current` was made (Unix seconds).
    created: u64,
    /// After this (Unix seconds), the next use makes a new key.
    next_switch: u64,
}

/// The rotator's keys as `show tls` reports them (times in Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RotatorState {
    /// When the key encrypting new tickets was made.
    pub(crate) created: u64,
    /// Keys that decrypt: the current one, and the previous one if a rotation happened.
    pub(crate) keys: usize,
    /// When the next ticket operation after this time makes a new key.
    pub(crate) next_switch: u64,
}

impl std::fmt::Debug for Rotator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rotator")
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl Rotator {
    /// A rotator whose first key is made now.
    pub(crate) fn new(period: u32) -> Result<Self, GetRandomFailed> {
        Self::new_at(period, now())
    }

    fn new_at(period: u32, now: u64) -> Result<Self, GetRandomFailed> {
        Ok(Self {
            period,
            state: RwLock::new(State {
                current: TicketKey::random().ok_or(GetRandomFailed)?,
                previous: None,
                created: now,
                next_switch: now.saturating_add(u64::from(period)),
            }),
        })
    }

    /// Seconds a key encrypts new tickets.
    pub(crate) fn period(&self) -> u32 {
        self.period
    }

    /// The keys now, without rotating (a key past its period still shows until its next use).
    pub(crate) fn state(&self) -> RotatorState {
        let state = self.read();
        RotatorState {
            created: state.created,
            keys: 1 + usize::from(state.previous.is_some()),
            next_switch: state.next_switch,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        // Every write replaces whole fields after the new key exists: a poisoned lock still
        // holds usable keys.
        self.state
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// The state, after making a new key if the current one's period ended before `now`.
    /// `None` when a new key was due but the random generator failed (no ticket then).
    fn rolled(&self, now: u64) -> Option<RwLockReadGuard<'_, State>> {
        {
            let state = self.read();
            if now <= state.next_switch {
                return Some(state);
            }
        }
        let next = TicketKey::random()?;
        let mut state = self
            .state
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        // Another thread may have rotated while this one made its key: keep theirs.
        if now > state.next_switch {
            state.previous = Some(std::mem::replace(&mut state.current, next));
            state.created = now;
            state.next_switch = now.saturating_add(u64::from(self.period));
        }
        drop(state);
        Some(self.read())
    }

    pub(crate) fn encrypt_at(&self, now: u64, plain: &[u8]) -> Option<Vec<u8>> {
        self.rolled(now)?.current.seal(plain)
    }

    pub(crate) fn decrypt_at(&self, now: u64, ticket: &[u8]) -> Option<Vec<u8>> {
        let name = ticket.get(..NAME_LEN)?;
        let state = self.rolled(now)?;
        if state.current.name == name {
            return state.current.open(ticket);
        }
        state
            .previous
            .as_ref()
            .filter(|k| k.name == name)?
            .open(ticket)
    }
}

impl ProducesTickets for Rotator {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        self.period.saturating_mul(2)
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.encrypt_at(now(), plain)
    }

    fn decrypt(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        self.decrypt_at(now(), ticket)
    }
}

/// The current time in Unix seconds, from the clock rustls uses for ticket times.
fn now() -> u64 {
    UnixTime::now().as_secs()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_key_encrypts_for_one_period_and_decrypts_for_two() {
        let t0 = 1_000_000;
        let rotator = Rotator::new_at(60, t0).unwrap();
        assert_eq!(
            rotator.state(),
            RotatorState {
                created: t0,
                keys: 1,
                next_switch: t0 + 60
            }
        );
        let first = rotator.encrypt_at(t0 + 60, b"one").unwrap();
        assert_eq!(rotator.state().created, t0, "not rotated within the period");

        // The first use after the period makes a new key; the old one still decrypts.
        let second = rotator.encrypt_at(t0 + 61, b"two").unwrap();
        assert_eq!(
            rotator.state(),
            RotatorState {
                created: t0 + 61,
                keys: 2,
                next_switch: t0 + 121
            }
        );
        assert_ne!(first[..NAME_LEN], second[..NAME_LEN]);
        assert_eq!(rotator.decrypt_at(t0 + 62, &first).unwrap(), b"one");
        assert_eq!(rotator.decrypt_at(t0 + 62, &second).unwrap(), b"two");

        // One more rotation: the first key is gone, the second is the previous one.
        assert!(rotator.decrypt_at(t0 + 200, &first).is_none());
        assert_eq!(rotator.decrypt_at(t0 + 200, &second).unwrap(), b"two");
        assert_eq!(rotator.state().created, t0 + 200);
        assert_eq!(rotator.lifetime(), 120);
    }

    #[test]
    fn foreign_truncated_and_tampered_tickets_do_not_open() {
        let rotator = Rotator::new(3600).unwrap();
        let other = Rotator::new(3600).unwrap();
        let ticket = rotator.encrypt(b"state").unwrap();
        assert!(other.decrypt(&ticket).is_none());
        for len in 0..ticket.len() {
            assert!(rotator.decrypt(&ticket[..len]).is_none(), "{len}");
        }
        let mut tampered = ticket.clone();
        if let Some(last) = tampered.last_mut() {
            *last ^= 1;
        }
        assert!(rotator.decrypt(&tampered).is_none());
        assert_eq!(rotator.decrypt(&ticket).unwrap(), b"state");
    }
}
