//! Errors of `tern speed`: bad options, and failures of the measured code itself (a crypto call
//! or a handshake that fails is reported, never counted as an operation).

use std::path::PathBuf;

/// Why `tern speed` could not measure.
#[derive(Debug, thiserror::Error)]
pub enum SpeedError {
    #[error("unknown algorithm {name:?}; known names: {known}")]
    UnknownAlgorithm { name: String, known: String },
    #[error("--seconds must be a positive number of seconds (at most 3600), got {0}")]
    BadSeconds(f64),
    #[error("--multi must be between 1 and 1024, got {0}")]
    BadMulti(u32),
    #[error("--cpus {list:?}: {reason}")]
    BadCpus { list: String, reason: String },
    #[error("cannot pin to CPU(s) {cpus:?} (see --cpus): {source}")]
    Pin {
        cpus: Vec<usize>,
        source: nix::Error,
    },
    #[error("cannot read the thread CPU clock: {0}")]
    Clock(nix::Error),
    #[error("{what} failed: {reason}")]
    Crypto { what: String, reason: String },
    #[error("TLS: {0}")]
    Rustls(#[from] rustls::Error),
    #[error(transparent)]
    Tls(#[from] tern_tls::TlsError),
    #[error("certificate generation: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("handshake: {0}")]
    Handshake(String),
    #[error("a measuring thread panicked")]
    ThreadPanicked,
    #[error("cannot write {path}: {source}")]
    WriteJson {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SpeedError {
    /// A failed aws-lc-rs call (its errors carry no detail beyond their kind).
    pub(crate) fn crypto(what: impl Into<String>, err: impl std::fmt::Display) -> Self {
        Self::Crypto {
            what: what.into(),
            reason: err.to_string(),
        }
    }
}
