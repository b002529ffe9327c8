//! Client certificates on a bind (mTLS): whether tern asks for one, what it trusts, and what it
//! refuses.
//!
//! The three modes are HAProxy's `verify none | optional | required`, so an operator moving a
//! `bind ... ca-file ... crl-file ... verify required` line finds the same meanings here. Paths
//! are resolved but not opened: tern-tls reads the files when it builds the bind's
//! configuration, like certificates.

use std::path::PathBuf;

/// Whether a client certificate is asked for and must be presented (`client_auth.verify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientVerify {
    /// No certificate is asked for.
    #[default]
    None,
    /// A certificate is asked for; one that is presented must verify, but a client may send
    /// none.
    Optional,
    /// A verified certificate is needed to complete the handshake.
    Required,
}

/// `tls.client_auth = { verify, ca, crl }`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClientAuth {
    pub verify: ClientVerify,
    /// PEM bundle of the CAs client certificates must chain to (`ca`); set unless `verify` is
    /// `None`.
    pub ca: Option<PathBuf>,
    /// Certificate revocation lists, PEM or DER (`crl`): a client certificate they list is
    /// refused.
    pub crl: Vec<PathBuf>,
}
