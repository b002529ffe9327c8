//! The state of a bind's ticket keys for `show tls`: where they come from, how many decrypt, and
//! how old the one encrypting new tickets is.
//!
//! Rotating keys change while the process runs, so a bind keeps a handle on its rotator and the
//! state is read when asked. A key file's keys are fixed from the load on: what is known of them
//! is noted then (the file's modification time stands in for the first key's age, since the
//! file does not say when a key was made).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::rotator::Rotator;

/// Where a bind's ticket keys come from, kept beside its configuration.
#[derive(Debug, Clone)]
pub(crate) enum TicketKeys {
    Rotating(Arc<Rotator>),
    File {
        path: PathBuf,
        keys: usize,
        lifetime: u32,
        /// When the file was read (Unix seconds).
        loaded_at: i64,
        /// The file's modification time when it was read.
        modified: Option<i64>,
    },
}

/// A bind's session ticket keys at one moment. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketState {
    /// The key file the keys were read from; `None`: random keys made and rotated in the
    /// process, shared by every bind with the same `ticket_rotation`.
    pub key_file: Option<PathBuf>,
    /// How long a ticket is valid, as told to clients.
    pub lifetime_secs: u32,
    /// How often a new key is made (rotating keys only).
    pub rotation_secs: Option<u64>,
    /// Keys that decrypt tickets (the first encrypts).
    pub keys: usize,
    /// When the key encrypting new tickets was made; for a key file, the file's modification
    /// time as read (unknown if the file system does not say).
    pub key_since: Option<i64>,
    /// `now - key_since`.
    pub key_age_secs: Option<i64>,
    /// Rotating keys: the first ticket operation after this time makes a new key (so a key may
    /// show older than its period when no client got a ticket since).
    pub next_rotation: Option<i64>,
    /// Key file: when it was read (start-up or the last reload).
    pub loaded_at: Option<i64>,
}

impl TicketKeys {
    /// Notes what is known of the keys just read from `path`.
    pub(crate) fn file(path: &Path, keys: usize, lifetime: u32) -> Self {
        let modified = std::fs::metadata(path)
            .and_then(|meta| meta.modified())
            .ok()
            .map(unix_seconds);
        Self::File {
            path: path.to_path_buf(),
            keys,
            lifetime,
            loaded_at: unix_seconds(SystemTime::now()),
            modified,
        }
    }

    /// The state at `now` (Unix seconds).
    pub(crate) fn state(&self, now: i64) -> TicketState {
        match self {
            Self::Rotating(rotator) => {
                let keys = rotator.state();
                let since = i64::try_from(keys.created).unwrap_or(i64::MAX);
                TicketState {
                    key_file: None,
                    lifetime_secs: rotator.period().saturating_mul(2),
                    rotation_secs: Some(u64::from(rotator.period())),
                    keys: keys.keys,
                    key_since: Some(since),
                    key_age_secs: Some(now.saturating_sub(since)),
                    next_rotation: Some(i64::try_from(keys.next_switch).unwrap_or(i64::MAX)),
                    loaded_at: None,
                }
            }
            Self::File {
                path,
                keys,
                lifetime,
                loaded_at,
                modified,
            } => TicketState {
                key_file: Some(path.clone()),
                lifetime_secs: *lifetime,
                rotation_secs: None,
                keys: *keys,
                key_since: *modified,
                key_age_secs: modified.map(|m| now.saturating_sub(m)),
                next_rotation: None,
                loaded_at: Some(*loaded_at),
            },
        }
    }
}

/// `time` in Unix seconds (negative before 1970).
pub(crate) fn unix_seconds(time: SystemTime) -> i64 {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |s| -s),
    }
}
