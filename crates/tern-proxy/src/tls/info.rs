//! `show tls`: every TLS bind's certificates as they are loaded and its resumption state, as
//! plain data (the runtime API renders it).
//!
//! The certificates are those the handshakes use: described when the bind's configuration was
//! built (start-up, a generation's start, or the last certificate reload) and kept by the
//! reloader beside the configurations, swapped with them (`reload.rs`). Nothing is read from
//! disk when the command runs; only the ages (days to expiry, ticket key age) are computed then.

use std::net::SocketAddr;
use std::sync::Arc;

use tern_config::Config;
use tern_tls::BindSummary;
pub use tern_tls::{rfc3339, CertificateSummary, TicketState};

use crate::tls::reload::FrontendTls;

/// One TLS bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindTlsInfo {
    pub frontend: String,
    /// The address in the configuration (port 0 when the system chose it).
    pub address: SocketAddr,
    /// No default certificate: an unknown or absent SNI fails the handshake.
    pub strict_sni: bool,
    /// In configuration order (`certs`, then `cert_dir` by file name); the first is the default
    /// unless `strict_sni`.
    pub certificates: Vec<CertificateInfo>,
    /// Session tickets; `None`: off.
    pub tickets: Option<TicketState>,
    /// Most sessions in the stateful session cache; 0: off.
    pub cache_size: usize,
    /// When this was taken (Unix seconds): the time the ages are counted to.
    pub taken_at: i64,
}

/// One certificate of a bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateInfo {
    /// As read when the bind's configuration was built.
    pub loaded: CertificateSummary,
    /// Whole days until `not_after`, rounded down; negative once expired.
    pub days_until_expiry: i64,
}

/// The summary of each bind of a set, in bind order (`None` for plain binds).
pub(crate) type Summaries = Vec<Option<Arc<BindSummary>>>;

/// The summaries of a set built elsewhere, found from its configurations.
pub(crate) fn summaries_of(tls: &FrontendTls) -> Summaries {
    tls.iter()
        .flatten()
        .map(|bind| bind.as_deref().and_then(tern_tls::bind_summary))
        .collect()
}

/// Every TLS bind of `config` with its summary (`summaries` in bind order), aged to `now`.
pub(crate) fn collect(
    config: &Config,
    summaries: &[Option<Arc<BindSummary>>],
    now: i64,
) -> Vec<BindTlsInfo> {
    let binds = config
        .frontends
        .iter()
        .flat_map(|fe| fe.binds.iter().map(move |bind| (fe, bind)));
    binds
        .zip(summaries)
        .filter_map(|((fe, bind), summary)| {
            let settings = bind.tls.as_ref()?;
            let (certificates, tickets) = match summary {
                Some(summary) => (aged(summary, now), summary.tickets(now)),
                // A configuration not built by tern-tls: nothing known of its certificates.
                None => (Vec::new(), None),
            };
            Some(BindTlsInfo {
                frontend: fe.name.clone(),
                address: bind.address,
                strict_sni: settings.strict_sni,
                certificates,
                tickets,
                cache_size: settings.resumption.cache_size,
                taken_at: now,
            })
        })
        .collect()
}

fn aged(summary: &BindSummary, now: i64) -> Vec<CertificateInfo> {
    summary
        .certificates
        .iter()
        .map(|cert| CertificateInfo {
            loaded: cert.clone(),
            days_until_expiry: cert.days_until_expiry(now),
        })
        .collect()
}
