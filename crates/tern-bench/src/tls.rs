//! The generator's TLS client configurations: rustls + aws-lc-rs with exactly the versions,
//! groups, suites, signature schemes and ALPN asked for, and resumption only when asked.
//!
//! A benchmark must pin the key exchange group and the cipher suite (rustls' default offers an
//! ML-KEM hybrid share, which costs client CPU and changes what the server computes) and must
//! control resumption: off by default (every handshake full, a resumed one aborts the run), or
//! `--resume` for a chosen share of connections. A client that never resumes also asks for no
//! session tickets (RFC 9149 `ticket_request` with a count of 0): a server that honours it
//! (tern, rustls servers configured for it) then does the same handshake work as one with
//! tickets turned off (HAProxy's `no-tls-tickets` in bench/), instead of issuing a ticket that is
//! thrown away; servers that do not know the extension ignore it. Each client thread gets its own session store
//! (no lock shared between threads); a thin wrapper around it counts the handshakes that found a
//! stored session to offer, so the report can show attempts next to the resumptions rustls saw.
//!
//! Without `--cacert` the verifier accepts any certificate chain and name, but still checks the
//! handshake signature against the certificate's key: the client then does the same public-key
//! work as a real client (which verifies the chain too, but against a cached intermediate and
//! with the leaf parsed once: the signature is the per-handshake cost), and a server that
//! cannot sign fails. `--no-signature-check` leaves that check out too, for the most handshakes
//! per client core (the server's work is the same).
//!
//! Plain (EC)DH groups reuse each thread's key pair for `--key-share-reuse` handshakes
//! ([`key_share`]): the server still computes everything it would, the client skips its key
//! generation.

mod key_share;
mod verify;

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Resumption, TicketRequest, Tls12Resumption,
    Tls13ClientSessionValue,
};
use rustls::crypto::{aws_lc_rs, CryptoProvider, SupportedKxGroup};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, NamedGroup, SignatureScheme};

use crate::args::{BenchArgs, KxGroup, ResumeMode, SigAlg, TlsEngine, TlsVersion};
use crate::ossl::OsslSetup;
use crate::BenchError;

/// Sessions kept per thread (each TLS 1.3 ticket is used once, so this bounds tickets in stock).
const SESSIONS_PER_THREAD: usize = 256;
/// TLS 1.3 tickets kept per server and thread: more than the connections a thread keeps in
/// flight, so every connection finds one once the first round came back.
const TICKETS_PER_SERVER: usize = 4096;

/// The client TLS engine of one stream of load: rustls, or OpenSSL (`--tls-engine openssl`).
#[derive(Debug)]
pub(crate) enum ClientTls {
    /// rustls on aws-lc-rs, with per-thread session stores.
    Rustls(TlsSetup),
    /// The system OpenSSL: one context shared by the threads (see [`crate::ossl`]).
    Openssl(OsslSetup),
}

impl ClientTls {
    /// The engine `--tls-engine` names, set up as [`TlsSetup::new`] describes.
    pub fn new(args: &BenchArgs, name: &str, allow_resume: bool) -> Result<Self, BenchError> {
        match args.tls_engine {
            TlsEngine::Rustls => TlsSetup::new(args, name, allow_resume).map(Self::Rustls),
            TlsEngine::Openssl => OsslSetup::new(args, name, allow_resume).map(Self::Openssl),
        }
    }

    /// A thread's own TLS state (rustls only: OpenSSL's context is shared as it is).
    pub fn for_thread(&self) -> Option<ThreadTls> {
        match self {
            ClientTls::Rustls(setup) => Some(setup.for_thread()),
            ClientTls::Openssl(_) => None,
        }
    }
}

/// Everything needed to build each thread's TLS client state.
#[derive(Debug)]
pub(crate) struct TlsSetup {
    /// The configuration for full handshakes (resumption disabled).
    full: Arc<ClientConfig>,
    /// SNI (and the name verified with `--cacert`).
    pub server_name: ServerName<'static>,
    /// Resumption mode and the share of connections that try it.
    resume: Option<(ResumeMode, f64)>,
}

impl TlsSetup {
    /// Builds the configuration described by `args` for a server called `name` (SNI); for the
    /// main load if `allow_resume` (resumption and `--h2`'s ALPN apply), else for the reference
    /// probe, which never resumes and speaks HTTP/1.1 (never offers h2).
    pub fn new(args: &BenchArgs, name: &str, allow_resume: bool) -> Result<Self, BenchError> {
        let name = name.to_owned();
        let server_name =
            ServerName::try_from(name.clone()).map_err(|_| BenchError::ServerName(name))?;
        let resume = match args.resume {
            Some(mode) if allow_resume => Some((mode, args.resume_share())),
            _ => None,
        };
        if resume.is_some_and(|(m, _)| m == ResumeMode::Id)
            && args.tls_version != Some(TlsVersion::Tls12)
        {
            return Err(BenchError::Tls(
                "--resume id resumes TLS 1.2 session IDs (TLS 1.3 has none): \
                 add --tls-version 1.2, or use --resume ticket"
                    .to_owned(),
            ));
        }
        let alpn = match allow_resume {
            true => args.offered_alpn(),
            false => args.alpn.iter().filter(|p| *p != "h2").cloned().collect(),
        };
        Ok(Self {
            full: Arc::new(client_config(args, &alpn)?),
            server_name,
            resume,
        })
    }

    /// A thread's own TLS state: its configurations and session store.
    pub fn for_thread(&self) -> ThreadTls {
        let resume = self.resume.map(|(mode, share)| {
            let store = Arc::new(CountingStore::default());
            let tls12 = match mode {
                ResumeMode::Ticket => Tls12Resumption::SessionIdOrTickets,
                ResumeMode::Id => Tls12Resumption::SessionIdOnly,
            };
            let mut config = (*self.full).clone();
            config.resumption = Resumption::store(store.clone()).tls12_resumption(tls12);
            // Tickets wanted: as many as the server sends by default.
            config.send_ticket_request = None;
            (Arc::new(config), store, share)
        });
        ThreadTls {
            full: self.full.clone(),
            resume,
            credit: Cell::new(0.0),
        }
    }
}

/// One thread's TLS client state.
#[derive(Debug)]
pub(crate) struct ThreadTls {
    full: Arc<ClientConfig>,
    resume: Option<(Arc<ClientConfig>, Arc<CountingStore>, f64)>,
    /// Accumulated share of resuming connections not yet made (deterministic spreading).
    credit: Cell<f64>,
}

impl ThreadTls {
    /// The configuration for the next new connection, and the store whose counter tells
    /// whether it offered a session. The `--resume-ratio` share is spread evenly: every
    /// connection adds the share to a credit, and one with a credit of at least one resumes.
    pub fn next(&self) -> (Arc<ClientConfig>, Option<&CountingStore>) {
        let Some((config, store, share)) = &self.resume else {
            return (self.full.clone(), None);
        };
        let credit = self.credit.get() + share;
        if credit >= 1.0 - 1e-9 {
            self.credit.set(credit - 1.0);
            (config.clone(), Some(store))
        } else {
            self.credit.set(credit);
            (self.full.clone(), None)
        }
    }
}

/// A session store that counts the sessions it hands out for resumption.
#[derive(Debug)]
pub(crate) struct CountingStore {
    inner: ClientSessionMemoryCache,
    /// TLS 1.3 tickets, kept here rather than in `inner`: rustls' cache keeps at most 8 per
    /// server, so with more connections than that in flight most of the tickets that came back
    /// were dropped and most connections did full handshakes (a third resumed at `-c 32`).
    tickets: Mutex<HashMap<ServerName<'static>, VecDeque<Tls13ClientSessionValue>>>,
    offered: AtomicU64,
}

impl Default for CountingStore {
    fn default() -> Self {
        Self {
            inner: ClientSessionMemoryCache::new(SESSIONS_PER_THREAD),
            tickets: Mutex::default(),
            offered: AtomicU64::new(0),
        }
    }
}

impl CountingStore {
    /// Sessions handed out so far.
    pub fn offered(&self) -> u64 {
        self.offered.load(Ordering::Relaxed)
    }

    fn count<T>(&self, found: Option<T>) -> Option<T> {
        if found.is_some() {
            self.offered.fetch_add(1, Ordering::Relaxed);
        }
        found
    }
}

impl ClientSessionStore for CountingStore {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(server_name, group);
    }

    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(server_name)
    }

    fn set_tls12_session(
        &self,
        server_name: ServerName<'static>,
        value: rustls::client::Tls12ClientSessionValue,
    ) {
        self.inner.set_tls12_session(server_name, value);
    }

    fn tls12_session(
        &self,
        server_name: &ServerName<'_>,
    ) -> Option<rustls::client::Tls12ClientSessionValue> {
        self.count(self.inner.tls12_session(server_name))
    }

    fn remove_tls12_session(&self, server_name: &ServerName<'static>) {
        self.inner.remove_tls12_session(server_name);
    }

    fn insert_tls13_ticket(
        &self,
        server_name: ServerName<'static>,
        value: Tls13ClientSessionValue,
    ) {
        let mut tickets = self.tickets.lock().unwrap_or_else(|e| e.into_inner());
        let queue = tickets.entry(server_name).or_default();
        if queue.len() >= TICKETS_PER_SERVER {
            queue.pop_front();
        }
        queue.push_back(value);
    }

    fn take_tls13_ticket(
        &self,
        server_name: &ServerName<'static>,
    ) -> Option<Tls13ClientSessionValue> {
        // The newest ticket: the least likely to have expired.
        let found = self
            .tickets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(server_name)
            .and_then(VecDeque::pop_back);
        self.count(found)
    }
}

/// Builds the full-handshake client configuration described by `args`, offering `alpn`.
pub fn client_config(args: &BenchArgs, alpn: &[String]) -> Result<ClientConfig, BenchError> {
    let provider = Arc::new(provider(&args.groups, &args.ciphers, args.key_share_reuse)?);
    let versions: &[&'static rustls::SupportedProtocolVersion] = match args.tls_version {
        Some(TlsVersion::Tls12) => &[&rustls::version::TLS12],
        Some(TlsVersion::Tls13) => &[&rustls::version::TLS13],
        Some(v @ (TlsVersion::Tls10 | TlsVersion::Tls11)) => {
            return Err(BenchError::Tls(format!(
                "rustls has no TLS {}: add --tls-engine openssl",
                v.name()
            )))
        }
        None => rustls::DEFAULT_VERSIONS,
    };
    let schemes = schemes(&args.sigalgs, &provider)?;
    let verifier = match &args.cacert {
        Some(path) => verify::roots(load_roots(path)?, provider.clone(), schemes)?,
        None => verify::insecure(provider.clone(), schemes, !args.no_signature_check),
    };
    let hint = "(check --tls-version against --cipher and --group)";
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(|e| BenchError::Tls(format!("{e} {hint}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    // No session cache, no tickets, no early data (rustls' default): every handshake is full,
    // and the server is told not to bother with tickets (see the module docs).
    config.resumption = Resumption::disabled();
    config.send_ticket_request = Some(TicketRequest {
        new_session_count: 0,
        resumption_count: 0,
    });
    Ok(config)
}

/// The aws-lc-rs provider restricted to `--group` (in order) and `--cipher` (all if empty), its
/// TLS 1.3 suites with the HMAC-based HKDF of tern's server ([`tern_tls::with_hmac_hkdf`]), and
/// its (EC)DH groups reusing key pairs for `--key-share-reuse` handshakes ([`key_share`]).
fn provider(
    groups: &[KxGroup],
    ciphers: &[String],
    key_share_reuse: u32,
) -> Result<CryptoProvider, BenchError> {
    let mut provider = aws_lc_rs::default_provider();
    provider.kx_groups = groups
        .iter()
        .map(|g| match g {
            KxGroup::X25519 => aws_lc_rs::kx_group::X25519,
            KxGroup::P256 => aws_lc_rs::kx_group::SECP256R1,
            KxGroup::P384 => aws_lc_rs::kx_group::SECP384R1,
            KxGroup::X25519mlkem768 => aws_lc_rs::kx_group::X25519MLKEM768,
            KxGroup::P256mlkem768 => aws_lc_rs::kx_group::SECP256R1MLKEM768,
            KxGroup::Mlkem768 => aws_lc_rs::kx_group::MLKEM768,
        })
        .map(|g| reusing(g, key_share_reuse))
        .collect();
    if !ciphers.is_empty() {
        let mut suites = Vec::with_capacity(ciphers.len());
        for name in ciphers {
            let wanted = suite_key(name);
            let suite = aws_lc_rs::ALL_CIPHER_SUITES
                .iter()
                .find(|s| s.suite().as_str().map(suite_key).as_deref() == Some(&wanted))
                .ok_or_else(|| BenchError::Tls(format!("unknown cipher suite {name:?}")))?;
            suites.push(*suite);
        }
        provider.cipher_suites = suites;
    }
    provider.cipher_suites = provider
        .cipher_suites
        .into_iter()
        .map(tern_tls::with_hmac_hkdf)
        .collect();
    Ok(provider)
}

/// `group` with its key pairs reused for `uses` handshakes, if it is a plain (EC)DH group.
fn reusing(group: &'static dyn SupportedKxGroup, uses: u32) -> &'static dyn SupportedKxGroup {
    if uses <= 1 {
        return group;
    }
    match key_share::Reused::new(group.name(), uses) {
        // rustls wants a 'static group: a few bytes leaked per client configuration built (one
        // per run, or per trial of an SLO search or a suite).
        Some(reused) => Box::leak(Box::new(reused)),
        None => group,
    }
}

/// The signature schemes to offer: those asked for (each must be verifiable), or all.
fn schemes(
    asked: &[SigAlg],
    provider: &CryptoProvider,
) -> Result<Vec<SignatureScheme>, BenchError> {
    let supported = provider
        .signature_verification_algorithms
        .supported_schemes();
    if asked.is_empty() {
        return Ok(supported);
    }
    asked
        .iter()
        .map(|&alg| {
            let scheme = scheme(alg);
            supported
                .contains(&scheme)
                .then_some(scheme)
                .ok_or_else(|| BenchError::Tls(format!("cannot verify {scheme:?} signatures")))
        })
        .collect()
}

/// The rustls name of a `--sigalg` value.
pub fn scheme(alg: SigAlg) -> SignatureScheme {
    match alg {
        SigAlg::EcdsaSecp256r1Sha256 => SignatureScheme::ECDSA_NISTP256_SHA256,
        SigAlg::EcdsaSecp384r1Sha384 => SignatureScheme::ECDSA_NISTP384_SHA384,
        SigAlg::EcdsaSecp521r1Sha512 => SignatureScheme::ECDSA_NISTP521_SHA512,
        SigAlg::RsaPssRsaeSha256 => SignatureScheme::RSA_PSS_SHA256,
        SigAlg::RsaPssRsaeSha384 => SignatureScheme::RSA_PSS_SHA384,
        SigAlg::RsaPssRsaeSha512 => SignatureScheme::RSA_PSS_SHA512,
        SigAlg::RsaPkcs1Sha256 => SignatureScheme::RSA_PKCS1_SHA256,
        SigAlg::RsaPkcs1Sha384 => SignatureScheme::RSA_PKCS1_SHA384,
        SigAlg::RsaPkcs1Sha512 => SignatureScheme::RSA_PKCS1_SHA512,
        SigAlg::Ed25519 => SignatureScheme::ED25519,
    }
}

/// Normalises suite names so OpenSSL/IANA ("TLS_AES_256_GCM_SHA384") and rustls
/// ("TLS13_AES_256_GCM_SHA384") spellings compare equal.
fn suite_key(name: &str) -> String {
    let upper = name.trim().to_ascii_uppercase().replace('-', "_");
    let bare = upper
        .strip_prefix("TLS13_")
        .or_else(|| upper.strip_prefix("TLS_"))
        .unwrap_or(&upper);
    bare.to_owned()
}

fn load_roots(path: &Path) -> Result<Vec<CertificateDer<'static>>, BenchError> {
    let bad = |e: &dyn std::fmt::Display| BenchError::Tls(format!("{}: {e}", path.display()));
    let roots = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    if roots.is_empty() {
        return Err(bad(&"no certificates found"));
    }
    Ok(roots)
}

#[cfg(test)]
mod tests;
