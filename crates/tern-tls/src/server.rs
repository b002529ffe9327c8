//! Server (termination) configurations.
//!
//! One [`ServerConfig`] is meant to be built per bind and configuration snapshot, then shared by
//! every worker through its `Arc`: rustls configurations are immutable and `Sync`, so workers
//! share it without locks.
//!
//! Resumption: stateless tickets only. The ticket key (aws-lc-rs `Ticketer`, AES-256 + HMAC,
//! rotated every 6 hours, tickets accepted for 12) is created once per process and shared by all
//! configurations, so a ticket issued by one worker resumes on any other (SO_REUSEPORT spreads a
//! client's connections over workers) and tickets survive a configuration reload. There is no
//! stateful session cache: a shared locked cache would put a lock on the handshake path of
//! every worker. The full resumption design (ticket keys shared across processes, key files,
//! TLS 1.2 session IDs) is a later issue.

use std::sync::{Arc, OnceLock};

use rustls::server::{NoServerSessionStorage, ProducesTickets};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;
use tern_config::model::{CertSource, TlsSettings};

use crate::provider::provider;
use crate::resolver::SniResolver;
use crate::{load_certified_key, TlsError};

/// The only application protocol tern speaks to clients today.
const ALPN_HTTP11: &[u8] = b"http/1.1";

/// Builds the server configuration of a bind: loads every certificate of `settings` (the first
/// is the default) and applies tern's policy.
pub fn server_config(settings: &TlsSettings) -> Result<Arc<ServerConfig>, TlsError> {
    let keys = settings
        .certs
        .iter()
        .map(load_certified_key)
        .collect::<Result<Vec<_>, _>>()?;
    server_config_from_keys(keys).map_err(|err| match err {
        // Name the file rather than a position in the list.
        TlsError::CertificateNames { index, reason } => match settings.certs.get(index) {
            Some(CertSource::Combined(path) | CertSource::Split { cert: path, .. }) => {
                TlsError::InvalidCertificate {
                    path: path.clone(),
                    reason,
                }
            }
            None => TlsError::CertificateNames { index, reason },
        },
        other => other,
    })
}

/// Builds a server configuration from certificates already in memory (the first is the
/// default): TLS 1.2 and 1.3, the server's cipher suite order, ALPN `http/1.1`, stateless
/// resumption tickets, SNI-based certificate selection.
pub fn server_config_from_keys(
    keys: Vec<Arc<CertifiedKey>>,
) -> Result<Arc<ServerConfig>, TlsError> {
    let resolver = SniResolver::new(keys)?;
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    config.ignore_client_order = true;
    config.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
    config.session_storage = Arc::new(NoServerSessionStorage {});
    config.ticketer = ticketer()?;
    // One ticket per full handshake: enough for a client to resume once per connection, and
    // each ticket costs an encryption and bytes on the wire.
    config.send_tls13_tickets = 1;
    // RFC 9149: a client that asks for a number of tickets gets that many, at most one. One
    // that will not resume can say so (a count of 0) and spare the server the ticket: deriving
    // its key, encrypting it, three calls to the random generator, a record (together ~4 to
    // 5 µs, 3 to 5% of an ECDSA handshake's server CPU here).
    config.max_tls13_tickets = 1;
    Ok(Arc::new(config))
}

/// The process-wide ticket key rotator (see the module docs).
fn ticketer() -> Result<Arc<dyn ProducesTickets>, TlsError> {
    static TICKETER: OnceLock<Arc<dyn ProducesTickets>> = OnceLock::new();
    if let Some(ticketer) = TICKETER.get() {
        return Ok(ticketer.clone());
    }
    let fresh = rustls::crypto::aws_lc_rs::Ticketer::new()?;
    // If another thread won the race, its ticketer is kept and `fresh` dropped.
    Ok(TICKETER.get_or_init(|| fresh).clone())
}
