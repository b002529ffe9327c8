//! What `show tls` reports of a bind: its certificates as loaded, its ticket keys, its session
//! cache.
//!
//! A bind's certificates are behind rustls' resolver trait object once its configuration is
//! built, so they are described while they are loaded ([`summarize`], one X.509 parse each, at
//! start-up or a reload only) and the description is kept beside the configuration: returned
//! with it by [`crate::server_config_described`], and findable from the configuration alone
//! with [`bind_summary`]. The latter is for configurations built elsewhere and handed around as
//! bare `Arc<ServerConfig>` (a new generation's snapshot): a process-wide list maps each
//! configuration's resolver to its summary, holding the resolver weakly so that it never keeps
//! a configuration alive, and is pruned whenever a configuration is built. Nothing of it is on
//! the handshake path.
//!
//! Nothing here reads a file at the time of the command: the state is the one loaded, as the
//! handshakes see it. Only ticket keys are read live, because the process rotates them.

mod time;

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use rustls::server::ResolvesServerCert;
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;
use x509_parser::oid_registry::{
    OID_EC_P256, OID_KEY_TYPE_EC_PUBLIC_KEY, OID_NIST_EC_P384, OID_NIST_EC_P521,
    OID_PKCS1_RSAENCRYPTION, OID_SIG_ED25519, OID_SIG_ED448,
};
use x509_parser::public_key::PublicKey;

use crate::tickets::{TicketKeys, TicketState};

pub use time::{days_until, rfc3339, unix_now};

/// One loaded certificate, as read when its bind's configuration was built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateSummary {
    /// The file holding the chain (`None` for certificates handed over in memory).
    pub file: Option<PathBuf>,
    /// The served one when no name matches (the first of the bind, unless `strict_sni`).
    pub default: bool,
    /// The leaf's subject common name.
    pub subject_cn: Option<String>,
    /// The leaf's issuer common name.
    pub issuer_cn: Option<String>,
    /// DNS names of the subject alternative name extension, as written.
    pub dns_names: Vec<String>,
    /// IP addresses of the subject alternative name extension.
    pub ip_addresses: Vec<IpAddr>,
    /// The (lowercased) SNI names it is selected for: its SAN DNS names (else its subject CNs)
    /// and the configured `names`.
    pub sni_names: Vec<String>,
    /// `RSA-2048`, `ECDSA P-256`, `Ed25519`, ...
    pub key_type: String,
    /// Validity, in Unix seconds.
    pub not_before: i64,
    pub not_after: i64,
    /// The same in RFC 3339 (UTC, `2026-01-31T12:00:00Z`).
    pub not_before_text: String,
    pub not_after_text: String,
    /// Size in bytes of the stapled OCSP response; `None`: none stapled.
    pub ocsp_len: Option<usize>,
    /// Certificates in the chain served, the leaf included.
    pub chain_len: usize,
}

impl CertificateSummary {
    /// Whole days from `now` (Unix seconds) to `not_after`, rounded down: negative once expired.
    pub fn days_until_expiry(&self, now: i64) -> i64 {
        days_until(self.not_after, now)
    }
}

/// A bind's TLS as built: certificates in configuration order, resumption settings.
#[derive(Debug, Clone)]
pub struct BindSummary {
    pub certificates: Vec<CertificateSummary>,
    /// No default certificate: an unknown or absent SNI fails the handshake.
    pub strict_sni: bool,
    /// Most sessions in the stateful cache; 0: off.
    pub cache_size: usize,
    tickets: Tickets,
}

/// Where a bind's ticket keys are.
#[derive(Debug, Clone)]
enum Tickets {
    /// Stateless tickets off.
    Off,
    /// tern's keys (`tickets.rs`).
    Keys(TicketKeys),
    /// OpenSSL's own key on an OpenSSL bind: one per process, never rotated, out of tern's
    /// sight (the bindings have no safe call to read or set it).
    OpenSsl,
}

/// The ticket lifetime OpenSSL announces by default (its session timeout for TLS).
const OPENSSL_TICKET_LIFETIME: u32 = 7200;

impl BindSummary {
    pub(crate) fn new(
        certificates: Vec<CertificateSummary>,
        strict_sni: bool,
        cache_size: usize,
        tickets: Option<TicketKeys>,
    ) -> Self {
        Self {
            certificates,
            strict_sni,
            cache_size,
            tickets: tickets.map_or(Tickets::Off, Tickets::Keys),
        }
    }

    /// The summary of an OpenSSL bind, whose tickets (when on) use OpenSSL's own key.
    #[cfg_attr(not(feature = "openssl-engine"), allow(dead_code))]
    pub(crate) fn openssl(
        certificates: Vec<CertificateSummary>,
        strict_sni: bool,
        cache_size: usize,
        tickets: bool,
    ) -> Self {
        Self {
            certificates,
            strict_sni,
            cache_size,
            tickets: if tickets {
                Tickets::OpenSsl
            } else {
                Tickets::Off
            },
        }
    }

    /// The ticket keys at `now` (Unix seconds); `None` when tickets are off. On an OpenSSL
    /// bind: one key of unknown age, never rotated.
    pub fn tickets(&self, now: i64) -> Option<TicketState> {
        match &self.tickets {
            Tickets::Off => None,
            Tickets::Keys(keys) => Some(keys.state(now)),
            Tickets::OpenSsl => Some(TicketState {
                key_file: None,
                lifetime_secs: OPENSSL_TICKET_LIFETIME,
                rotation_secs: None,
                keys: 1,
                key_since: None,
                key_age_secs: None,
                next_rotation: None,
                loaded_at: None,
            }),
        }
    }
}

/// Describes the leaf of `key`, loaded from `file` and selected for `sni_names`.
pub(crate) fn summarize(
    key: &CertifiedKey,
    file: Option<PathBuf>,
    sni_names: Vec<String>,
) -> Result<CertificateSummary, String> {
    let leaf = key.end_entity_cert().map_err(|err| err.to_string())?;
    let (_, cert) = x509_parser::parse_x509_certificate(leaf).map_err(|err| err.to_string())?;
    let (dns_names, ip_addresses) = san(&cert)?;
    let validity = cert.validity();
    let not_before = validity.not_before.timestamp();
    let not_after = validity.not_after.timestamp();
    Ok(CertificateSummary {
        file,
        default: false,
        subject_cn: first_cn(cert.subject()),
        issuer_cn: first_cn(cert.issuer()),
        dns_names,
        ip_addresses,
        sni_names,
        key_type: key_type(&cert),
        not_before,
        not_after,
        not_before_text: rfc3339(not_before),
        not_after_text: rfc3339(not_after),
        ocsp_len: key.ocsp.as_ref().map(Vec::len),
        chain_len: key.cert.len(),
    })
}

/// The DNS names and IP addresses of the SAN extension (addresses of another length skipped).
fn san(cert: &X509Certificate<'_>) -> Result<(Vec<String>, Vec<IpAddr>), String> {
    let mut dns = Vec::new();
    let mut ips = Vec::new();
    let Some(san) = cert
        .subject_alternative_name()
        .map_err(|err| err.to_string())?
    else {
        return Ok((dns, ips));
    };
    for name in &san.value.general_names {
        match name {
            GeneralName::DNSName(name) => dns.push((*name).to_owned()),
            GeneralName::IPAddress(bytes) => {
                if let Ok(v4) = <[u8; 4]>::try_from(*bytes) {
                    ips.push(IpAddr::from(v4));
                } else if let Ok(v6) = <[u8; 16]>::try_from(*bytes) {
                    ips.push(IpAddr::from(v6));
                }
            }
            _ => {}
        }
    }
    Ok((dns, ips))
}

fn first_cn(name: &x509_parser::x509::X509Name<'_>) -> Option<String> {
    name.iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .map(str::to_owned)
}

/// `RSA-2048`, `ECDSA P-256`, `ECDSA P-384`, `ECDSA P-521`, `Ed25519`, `Ed448`, else the
/// algorithm's OID.
fn key_type(cert: &X509Certificate<'_>) -> String {
    let spki = cert.public_key();
    let algorithm = &spki.algorithm.algorithm;
    if *algorithm == OID_PKCS1_RSAENCRYPTION {
        return match spki.parsed() {
            Ok(key @ PublicKey::RSA(_)) => format!("RSA-{}", key.key_size()),
            _ => "RSA".to_owned(),
        };
    }
    if *algorithm == OID_KEY_TYPE_EC_PUBLIC_KEY {
        let curve = spki
            .algorithm
            .parameters
            .as_ref()
            .and_then(|p| p.as_oid().ok());
        return match curve {
            Some(oid) if oid == OID_EC_P256 => "ECDSA P-256".to_owned(),
            Some(oid) if oid == OID_NIST_EC_P384 => "ECDSA P-384".to_owned(),
            Some(oid) if oid == OID_NIST_EC_P521 => "ECDSA P-521".to_owned(),
            Some(oid) => format!("ECDSA {oid}"),
            None => "ECDSA".to_owned(),
        };
    }
    if *algorithm == OID_SIG_ED25519 {
        return "Ed25519".to_owned();
    }
    if *algorithm == OID_SIG_ED448 {
        return "Ed448".to_owned();
    }
    algorithm.to_id_string()
}

/// A built configuration's resolver, held weakly, and its summary.
type Registered = (Weak<dyn ResolvesServerCert>, Arc<BindSummary>);

static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

fn registry() -> std::sync::MutexGuard<'static, Vec<Registered>> {
    // Entries are pushed and removed whole: a poisoned list is still consistent.
    REGISTRY.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Notes `summary` as the description of the configuration whose resolver is `resolver`.
pub(crate) fn register(resolver: &Arc<dyn ResolvesServerCert>, summary: Arc<BindSummary>) {
    let mut all = registry();
    all.retain(|(weak, _)| weak.strong_count() > 0);
    all.push((Arc::downgrade(resolver), summary));
}

/// The summary of a configuration built by [`crate::server_config`] (or its variants), found
/// by its certificate resolver, so copies of the configuration that keep the resolver find it
/// too. `None` for a configuration built otherwise, or whose resolver was replaced.
pub fn bind_summary(config: &ServerConfig) -> Option<Arc<BindSummary>> {
    let target = Arc::as_ptr(&config.cert_resolver).cast::<()>();
    registry()
        .iter()
        .find(|(weak, _)| weak.strong_count() > 0 && weak.as_ptr().cast::<()>() == target)
        .map(|(_, summary)| Arc::clone(summary))
}

#[cfg(test)]
mod tests;
