//! Server (termination) configurations.
//!
//! One [`ServerConfig`] is built per bind and configuration snapshot, then shared by every
//! worker through its `Arc`: rustls configurations are immutable and `Sync`, so workers share
//! it without locks.
//!
//! Client certificates (`client_auth.rs`) are asked for and verified when the bind's
//! `client_auth` says so.
//!
//! Resumption (`tickets.rs` for the keys):
//! - stateless tickets, on by default, with keys shared by every worker and kept across reloads
//!   (or read from a key file shared with other instances);
//! - a stateful session cache (`cache_size`, off by default) shared by the bind's workers: TLS 1.2
//!   session IDs, and TLS 1.3 sessions when tickets are off. It is a locked map, and rustls
//!   stores every TLS 1.2 full handshake in it, so it costs a lock on that path: opt-in;
//! - with both off, no TLS 1.3 ticket is sent and no TLS 1.2 session ID is given.
//!
//! Each build also describes the bind for `show tls` (`summary.rs`): the certificates as they
//! are loaded, and a handle on the ticket keys.

use std::sync::Arc;

use rustls::server::danger::ClientCertVerifier;
use rustls::server::{NoServerSessionStorage, ProducesTickets, ServerSessionMemoryCache};
use rustls::sign::CertifiedKey;
use rustls::{ServerConfig, SignatureScheme};
use tern_config::model::{Resumption, TlsPolicy, TlsSettings};

use crate::certs::{self, Entry};
use crate::policy::{provider_for, restrict, scheme, versions};
use crate::resolver::{leaf_names, SniResolver};
use crate::summary::{self, summarize, BindSummary, CertificateSummary};
use crate::tickets::{self, Ticketer};
use crate::TlsError;

/// Builds the server configuration of a bind: loads every certificate of `settings` (the first
/// is the default unless `strict_sni`), OCSP responses and ticket keys, and applies its policy.
pub fn server_config(settings: &TlsSettings) -> Result<Arc<ServerConfig>, TlsError> {
    server_config_described(settings).map(|(config, _)| config)
}

/// [`server_config`], and what `show tls` reports of it: the certificates as loaded, the
/// ticket keys (also found later with [`crate::bind_summary`]).
pub fn server_config_described(
    settings: &TlsSettings,
) -> Result<(Arc<ServerConfig>, Arc<BindSummary>), TlsError> {
    let (mut entries, mut certificates): (Vec<Entry>, Vec<CertificateSummary>) =
        certs::load_all(settings)?.into_iter().unzip();
    if let Some(first) = certificates.first_mut() {
        first.default = !settings.strict_sni;
    }
    if let Some(sigalgs) = &settings.policy.sigalgs {
        let allowed: Arc<[SignatureScheme]> = sigalgs.iter().map(|&alg| scheme(alg)).collect();
        for (key, _) in &mut entries {
            *key = Arc::new(restrict(key, &allowed));
        }
    }
    let resolver = SniResolver::with_names(entries, settings.strict_sni)?;
    let client_auth = crate::client_verifier(&settings.client_auth)?;
    let resumption = &settings.resumption;
    let (ticketer, keys) = ticketer(resumption)?.unzip();
    let config = build(
        resolver,
        &settings.policy,
        resumption,
        client_auth,
        ticketer,
    )?;
    let summary = BindSummary::new(
        certificates,
        settings.strict_sni,
        resumption.cache_size,
        keys,
    );
    Ok((config.clone(), described(&config, summary)))
}

/// Builds a server configuration from certificates already in memory (the first is the
/// default) with the default policy and resumption: TLS 1.2 and 1.3, the server's cipher suite
/// order, ALPN `http/1.1`, stateless resumption tickets, SNI-based certificate selection.
pub fn server_config_from_keys(
    keys: Vec<Arc<CertifiedKey>>,
) -> Result<Arc<ServerConfig>, TlsError> {
    let certificates = keys
        .iter()
        .enumerate()
        .map(|(index, key)| {
            let mut summary = leaf_names(key)
                .and_then(|names| summarize(key, None, names))
                .map_err(|reason| TlsError::CertificateNames { index, reason })?;
            summary.default = index == 0;
            Ok(summary)
        })
        .collect::<Result<Vec<_>, TlsError>>()?;
    let resolver = SniResolver::new(keys)?;
    let resumption = Resumption::default();
    let (ticketer, keys) = ticketer(&resumption)?.unzip();
    let config = build(resolver, &TlsPolicy::default(), &resumption, None, ticketer)?;
    described(
        &config,
        BindSummary::new(certificates, false, resumption.cache_size, keys),
    );
    Ok(config)
}

/// Registers `summary` as the description of `config` (see `summary.rs`).
fn described(config: &Arc<ServerConfig>, summary: BindSummary) -> Arc<BindSummary> {
    let summary = Arc::new(summary);
    summary::register(&config.cert_resolver, Arc::clone(&summary));
    summary
}

/// Loads the certificates a `cert_dir` holds (for benchmarks and tests of the loader).
#[doc(hidden)]
pub fn load_cert_dir(dir: &std::path::Path) -> Result<usize, TlsError> {
    certs::load_dir(dir).map(|entries| entries.len())
}

fn build(
    resolver: SniResolver,
    policy: &TlsPolicy,
    resumption: &Resumption,
    client_auth: Option<Arc<dyn ClientCertVerifier>>,
    ticketer: Option<Arc<dyn ProducesTickets>>,
) -> Result<Arc<ServerConfig>, TlsError> {
    let builder = ServerConfig::builder_with_provider(provider_for(policy))
        .with_protocol_versions(&versions(policy))?;
    let builder = match client_auth {
        Some(verifier) => builder.with_client_cert_verifier(verifier),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(Arc::new(resolver));
    config.ignore_client_order = policy.prefer_server_ciphers;
    config.alpn_protocols = policy.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    config.session_storage = if resumption.cache_size > 0 {
        ServerSessionMemoryCache::new(resumption.cache_size)
    } else {
        Arc::new(NoServerSessionStorage {})
    };
    if let Some(ticketer) = ticketer {
        config.ticketer = ticketer;
    }
    // One ticket per full handshake: enough for a client to resume once per connection, and
    // each ticket costs an encryption and bytes on the wire. None when nothing could resume.
    config.send_tls13_tickets = usize::from(resumption.tickets || resumption.cache_size > 0);
    // RFC 9149: a client that asks for a number of tickets gets that many, at most one. One
    // that will not resume can say so (a count of 0) and spare the server the ticket: deriving
    // its key, encrypting it, three calls to the random generator, a record (together ~4 to
    // 5 µs, 3 to 5% of an ECDSA handshake's server CPU here).
    config.max_tls13_tickets = 1;
    Ok(Arc::new(config))
}

/// The bind's ticketer and its keys' description; `None` when tickets are off.
fn ticketer(resumption: &Resumption) -> Result<Option<Ticketer>, TlsError> {
    if !resumption.tickets {
        return Ok(None);
    }
    tickets::ticketer(
        resumption.ticket_rotation,
        resumption.ticket_key_file.as_deref(),
    )
    .map(Some)
}
