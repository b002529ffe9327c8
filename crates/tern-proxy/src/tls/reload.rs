//! Hot certificate reload: every TLS bind's configuration is rebuilt from the files on disk and
//! swapped into the workers, all or nothing.
//!
//! Why this shape:
//! - **What is re-read.** The certificate files, `cert_dir`, OCSP responses and the ticket key
//!   file, through the same [`frontend_tls`] that builds them at start-up, from the
//!   configuration snapshot in memory. `tern.toml` itself is not parsed again (a full
//!   configuration reload is a new generation: crates/tern/src/generations.rs): such a swap changes the certificates,
//!   never the policy.
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
use crate::tls::info::{self, BindTlsInfo, Summaries};

/// The TLS configuration of every bind, `[frontend][bind]`; `None` for plain binds.
pub type FrontendTls = Vec<Vec<Option<Arc<ServerConfig>>>>;

/// One worker's copies of every listener's configuration, in bind order (frontends, then their
/// binds), the order in which `bind_all` hands listeners to the worker.
type WorkerSet = Arc<[Option<Arc<ServerConfig>>]>;

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
        summaries,
        certificates,
    })
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
    pub(crate) fn current(&mut self) -> Option<Arc<ServerConfig>> {
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
    /// The OpenSSL binds' descriptions, in bind order (`None` for the others): built once per
    /// generation, as those binds are (a certificate reload does not rebuild them).
    openssl: Summaries,
}

impl Reloader {
    /// Distributes `tls` to `workers` workers: the reloader and, per worker, one slot per bind
    /// in bind order (`None` for plain binds).
    pub(crate) fn new(
        config: Config,
        tls: FrontendTls,
        workers: usize,
    ) -> (Self, Vec<Vec<Option<TlsSlot>>>) {
        let mut senders = Vec::with_capacity(workers);
        let mut slots = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (tx, rx) = watch::channel(worker_copy(&tls));
            let worker_slots = tls
                .iter()
                .flatten()
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
        let summaries = info::summaries_of(&tls);
        let reloader = Self {
            config,
            current: Mutex::new(Installed { tls, summaries }),
            senders,
            counters: Arc::default(),
            openssl: Vec::new(),
        };
        (reloader, slots)
    }

    /// The set in use.
    pub(crate) fn current(&self) -> FrontendTls {
        self.installed().tls.clone()
    }

    /// Adds the descriptions of the OpenSSL binds (in bind order) to what `show tls` reports.
    pub(crate) fn describing_openssl(mut self, openssl: Summaries) -> Self {
        self.openssl = openssl;
        self
    }

    /// `show tls`: every TLS bind as its set was built, aged to now.
    pub(crate) fn tls_info(&self) -> Vec<BindTlsInfo> {
        let mut summaries = self.installed().summaries.clone();
        for (summary, openssl) in summaries.iter_mut().zip(&self.openssl) {
            if summary.is_none() {
                summary.clone_from(openssl);
            }
        }
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
        let Built {
            tls: mut fresh,
            summaries,
            certificates,
        } = match build_counted(&self.config) {
            Ok(built) => built,
            Err(e) => {
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
                warn!(error = %e, "certificate reload failed, keeping the current certificates");
                return Err(e);
            }
        };
        carry_over(&current.tls, &mut fresh);
        for tx in &self.senders {
            tx.send_replace(worker_copy(&fresh));
        }
        let binds = fresh.iter().flatten().flatten().count();
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

/// One worker's own copies of every bind's configuration, each with the certificate probe of
/// the TLS counters (`cert_probe.rs`) around its resolver.
pub(crate) fn worker_copy(tls: &FrontendTls) -> WorkerSet {
    tls.iter()
        .flatten()
        .map(|bind| {
            bind.as_ref().map(|config| {
                let mut copy = ServerConfig::clone(config);
                cert_probe::install(&mut copy);
                Arc::new(copy)
            })
        })
        .collect()
}
