//! Hot certificate reload: every TLS bind's configuration is rebuilt from the files on disk and
//! swapped into the workers, all or nothing.
//!
//! Why this shape:
//! - **What is re-read.** The certificate files, `cert_dir`, OCSP responses and the ticket key
//!   file, through the same [`frontend_tls`] and [`crate::openssl_binds`] that build them at
//!   start-up, from the configuration snapshot in memory. `tern.toml` itself is not parsed
//!   again (a full configuration reload is a new generation: crates/tern/src/generations.rs):
//!   such a swap changes the certificates, never the policy.
//! - **All or nothing.** Every bind is built before anything is handed over; one broken file
//!   fails the reload, every bind keeps its current set, and the error names the bind, the file
//!   and the reason. A half-applied reload would leave binds of one site on different
//!   certificates with nothing in the log to say so.
//! - **No lock on the handshake path.** Each worker has one `watch` channel carrying its own
//!   copies of every listener's configuration (a copy per worker so that the reference count
//!   bumped per handshake is not a cache line shared between workers, as at start-up). The
//!   accept loop keeps the current `Arc` in a local and waits on the channel beside `accept`:
//!   a swap costs each listener one wake-up, an accepted connection one `Arc` clone, no lock and
//!   no allocation. Connections accepted after the swap use the new set; handshakes already in
//!   flight hold the old `Arc` and finish on it, which is freed with its last connection.
//! - **State kept across a reload.** The stateful session cache (`cache_size`) is carried over
//!   into the new configurations, so sessions cached before a reload still resume; ticket keys
//!   without a key file are process-wide anyway (`tern-tls` `tickets.rs`).
//! - **OpenSSL binds** (`engine = "openssl"`) ride the same channel ([`BindTls`]) and are rebuilt
//!   in the same all-or-nothing pass. Their session cache and ticket key live in the OpenSSL
//!   context, which the bindings can neither share with a new context nor copy sessions out of
//!   without unsafe code: after a swap, such a bind's clients make one full handshake (as after
//!   a reload, which starts a new generation).
//! - **Callers.** [`crate::ProxyHandle::reload_certificates`] is the one entry point. `tern run`
//!   no longer calls it: its reloads start a new generation (crates/tern/src/generations.rs),
//!   which re-reads the certificates with the rest of the configuration. It stays for an
//!   embedding that wants certificates swapped inside one generation.
//! - **What `show tls` reads.** Each set comes with the description of its binds (certificates
//!   as loaded, ticket keys; `info.rs`), built with it and swapped with it under the same
//!   lock, so the command reports what the handshakes use, never the files as they are now.

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rustls::ServerConfig;
use tern_config::Config;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::tls::cert_probe;
use crate::tls::engines::BindTls;
use crate::tls::info::{self, BindTlsInfo, Summaries};
use crate::tls::ossl::{self, OpensslBinds};

/// The TLS configuration of every bind, `[frontend][bind]`; `None` for plain binds.
pub type FrontendTls = Vec<Vec<Option<Arc<ServerConfig>>>>;

/// One worker's copies of every listener's configuration, in bind order (frontends, then their
/// binds), the order in which `bind_all` hands listeners to the worker.
type WorkerSet = Arc<[Option<BindTls>]>;

/// A TLS bind's configuration could not be built (the message names the file and the reason).
#[derive(Debug, thiserror::Error)]
#[error("frontend {frontend} bind {address}: {cause}")]
pub struct BindTlsError {
    pub frontend: String,
    pub address: SocketAddr,
    pub cause: tern_tls::TlsError,
}

/// Builds the TLS configuration of every TLS bind of `config`, reading its files.
pub fn frontend_tls(config: &Config) -> Result<FrontendTls, BindTlsError> {
    Ok(build_counted(config)?.tls)
}

/// A set as built: the configurations, their descriptions, the certificates loaded.
struct Built {
    tls: FrontendTls,
    openssl: OpensslBinds,
    summaries: Summaries,
    certificates: usize,
}

/// [`frontend_tls`], with what `show tls` reports of each bind and the number of certificates
/// loaded.
fn build_counted(config: &Config) -> Result<Built, BindTlsError> {
    let mut certificates = 0;
    let mut summaries = Vec::new();
    let mut all = Vec::with_capacity(config.frontends.len());
    for fe in &config.frontends {
        let mut binds = Vec::with_capacity(fe.binds.len());
        for bind in &fe.binds {
            // The OpenSSL engine's binds are built by `tls/ossl.rs`, at start-up only.
            let rustls = |s: &&tern_config::TlsSettings| s.engine == tern_config::TlsEngine::Rustls;
            let Some(settings) = bind.tls.as_ref().filter(rustls) else {
                binds.push(None);
                summaries.push(None);
                continue;
            };
            let error = |cause| BindTlsError {
                frontend: fe.name.clone(),
                address: bind.address,
                cause,
            };
            let (built, summary) = tern_tls::server_config_described(settings).map_err(error)?;
            certificates += summary.certificates.len();
            binds.push(Some(built));
            summaries.push(Some(summary));
        }
        all.push(binds);
    }
    Ok(Built {
        tls: all,
        openssl: Vec::new(),
        summaries,
        certificates,
    })
}

/// Adds the OpenSSL binds of `config` to a set of rustls binds, reading their files.
fn with_openssl(mut built: Built, config: &Config) -> Result<Built, BindTlsError> {
    let openssl = ossl::openssl_binds(config)?;
    built.certificates += openssl
        .iter()
        .flatten()
        .flatten()
        .map(|b| ossl::certificates(b))
        .sum::<usize>();
    merge_summaries(&mut built.summaries, ossl::summaries(&openssl));
    built.openssl = openssl;
    Ok(built)
}

/// Fills the binds `summaries` does not describe (the OpenSSL ones) from `openssl`.
fn merge_summaries(summaries: &mut Summaries, openssl: Summaries) {
    for (summary, openssl) in summaries.iter_mut().zip(openssl) {
        if summary.is_none() {
            *summary = openssl;
        }
    }
}

/// What a successful reload swapped in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReloadSummary {
    /// TLS binds whose configuration was replaced.
    pub binds: usize,
    /// Certificates loaded over all those binds.
    pub certificates: usize,
}

/// How many reloads were applied and how many failed (and kept the old certificates).
#[derive(Debug, Default)]
pub(crate) struct ReloadCounters {
    reloads: AtomicU64,
    failed: AtomicU64,
}

/// Reloads applied and refused. A generation counts its certificate-only reloads; the `tern`
/// binary adds its configuration reloads (which re-read the certificates too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReloadSnapshot {
    /// Reloads applied.
    pub reloads: u64,
    /// Reloads refused (everything kept as it was).
    pub failed: u64,
}

impl ReloadSnapshot {
    /// `name=value` pairs, for the line printed at exit.
    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        vec![("reloads", self.reloads), ("failed", self.failed)]
    }
}

impl ReloadCounters {
    pub(crate) fn snapshot(&self) -> ReloadSnapshot {
        ReloadSnapshot {
            reloads: self.reloads.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
        }
    }
}

/// A TLS listener's view of its bind's configuration, held by its accept loop.
#[derive(Debug, Clone)]
pub(crate) struct TlsSlot {
    rx: watch::Receiver<WorkerSet>,
    /// This listener's position in the worker's set.
    index: usize,
}

impl TlsSlot {
    /// The configuration to hand to the next accepted connections (marks the update seen).
    pub(crate) fn current(&mut self) -> Option<BindTls> {
        self.rx
            .borrow_and_update()
            .get(self.index)
            .cloned()
            .flatten()
    }

    /// Resolves when a reload swapped in a new set; `false` once no reload can come any more.
    pub(crate) async fn changed(&mut self) -> bool {
        self.rx.changed().await.is_ok()
    }
}

/// The reloading side: the configuration the sets are built from, the set in use, and one
/// sender per worker.
#[derive(Debug)]
pub(crate) struct Reloader {
    config: Config,
    /// The set in use and its description; the lock also keeps two reloads from interleaving
    /// (never taken by workers).
    current: Mutex<Installed>,
    senders: Vec<watch::Sender<WorkerSet>>,
    counters: Arc<ReloadCounters>,
}

impl Reloader {
    /// Distributes `tls` (rustls binds) and `openssl` (OpenSSL binds) to `workers` workers:
    /// the reloader and, per worker, one slot per bind in bind order (`None` for plain binds).
    pub(crate) fn new(
        config: Config,
        tls: FrontendTls,
        openssl: OpensslBinds,
        workers: usize,
    ) -> (Self, Vec<Vec<Option<TlsSlot>>>) {
        let mut senders = Vec::with_capacity(workers);
        let mut slots = Vec::with_capacity(workers);
        for _ in 0..workers {
            let set = worker_copy(&tls, &openssl);
            let (tx, rx) = watch::channel(Arc::clone(&set));
            let worker_slots = set
                .iter()
                .enumerate()
                .map(|(index, bind)| {
                    bind.as_ref().map(|_| TlsSlot {
                        rx: rx.clone(),
                        index,
                    })
                })
                .collect();
            senders.push(tx);
            slots.push(worker_slots);
        }
        // Built elsewhere (a generation's snapshot): found from the configurations themselves.
        let mut summaries = info::summaries_of(&tls);
        merge_summaries(&mut summaries, ossl::summaries(&openssl));
        let installed = Installed { tls, summaries };
        let reloader = Self {
            config,
            current: Mutex::new(installed),
            senders,
            counters: Arc::default(),
        };
        (reloader, slots)
    }

    /// The rustls binds' set in use (a handover carries their session caches).
    pub(crate) fn current(&self) -> FrontendTls {
        self.installed().tls.clone()
    }

    /// `show tls`: every TLS bind as its set was built, aged to now.
    pub(crate) fn tls_info(&self) -> Vec<BindTlsInfo> {
        let summaries = self.installed().summaries.clone();
        info::collect(&self.config, &summaries, tern_tls::unix_now())
    }

    fn installed(&self) -> std::sync::MutexGuard<'_, Installed> {
        // A poisoned lock still holds a complete set (it is replaced in one assignment).
        self.current
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    pub(crate) fn counters(&self) -> Arc<ReloadCounters> {
        Arc::clone(&self.counters)
    }

    /// Re-reads every TLS bind's files and swaps the new set in, or keeps the current one and
    /// says why (logged and returned).
    pub(crate) fn reload(&self) -> Result<ReloadSummary, BindTlsError> {
        let mut current = self.installed();
        let built = build_counted(&self.config).and_then(|b| with_openssl(b, &self.config));
        let Built {
            tls: mut fresh,
            openssl,
            summaries,
            certificates,
        } = match built {
            Ok(built) => built,
            Err(e) => {
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
                warn!(error = %e, "certificate reload failed, keeping the current certificates");
                return Err(e);
            }
        };
        carry_over(&current.tls, &mut fresh);
        for tx in &self.senders {
            tx.send_replace(worker_copy(&fresh, &openssl));
        }
        let binds =
            fresh.iter().flatten().flatten().count() + openssl.iter().flatten().flatten().count();
        *current = Installed {
            tls: fresh,
            summaries,
        };
        self.counters.reloads.fetch_add(1, Ordering::Relaxed);
        info!(binds, certificates, "certificates reloaded");
        Ok(ReloadSummary {
            binds,
            certificates,
        })
    }
}

/// A set in use and the description of its binds (in bind order).
#[derive(Debug)]
struct Installed {
    tls: FrontendTls,
    summaries: Summaries,
}

/// Keeps each bind's session cache: the resumption settings did not change (the configuration
/// is not re-read), so sessions cached before the reload stay resumable.
fn carry_over(old: &FrontendTls, fresh: &mut FrontendTls) {
    for (old, fresh) in old.iter().flatten().zip(fresh.iter_mut().flatten()) {
        if let (Some(old), Some(fresh)) = (old, fresh) {
            Arc::make_mut(fresh).session_storage = Arc::clone(&old.session_storage);
        }
    }
}

/// One worker's own copies of every bind's configuration, each rustls one with the certificate
/// probe of the TLS counters (`cert_probe.rs`) around its resolver; an OpenSSL bind is shared
/// (its context is reference-counted by OpenSSL per handshake whatever tern does).
pub(crate) fn worker_copy(tls: &FrontendTls, openssl: &OpensslBinds) -> WorkerSet {
    let mut openssl = openssl.iter().flatten();
    tls.iter()
        .flatten()
        .map(|bind| match (bind, openssl.next().cloned().flatten()) {
            (Some(config), _) => {
                let mut copy = ServerConfig::clone(config);
                cert_probe::install(&mut copy);
                Some(BindTls::Rustls(Arc::new(copy)))
            }
            (None, Some(bind)) => Some(BindTls::OpenSsl(bind)),
            (None, None) => None,
        })
        .collect()
}
