//! Counters of batched key exchanges (`global.crypto_batch`), one block per worker (its offload
//! thread's handshakes count in the same block), summed for `show info`, `show stat` and the
//! metrics.

use std::sync::atomic::{AtomicU64, Ordering};

use super::compute::LANES;
use crate::stats::bump;

/// One worker's counts.
#[derive(Debug, Default)]
pub struct BatchCounters {
    /// Kernel batches run.
    batches: AtomicU64,
    /// Handshakes whose key exchange a batch computed.
    batched: AtomicU64,
    /// Batches by how many handshakes they held (index 2..=8).
    fill: [AtomicU64; LANES + 1],
    /// Handshakes computed alone by aws-lc-rs: the only one waiting when the batch ran.
    alone: AtomicU64,
    /// The same because this CPU lacks AVX-512 IFMA.
    no_ifma: AtomicU64,
    /// The same because the batch's result failed its check (a low-order client share) or the
    /// random generator failed.
    failed: AtomicU64,
    /// Results computed but not used: rustls negotiated otherwise than the ClientHello
    /// suggested, or the handshake failed first.
    unused: AtomicU64,
    /// ECDSA P-256 nonce pairs (tern-tls's `batched_ecdsa`): kernel runs, pairs computed,
    /// signatures made from them, pairs dropped by the fault check, signatures left to
    /// aws-lc-rs (no IFMA, kernel failed).
    ecdsa_batches: AtomicU64,
    ecdsa_pairs: AtomicU64,
    ecdsa_signatures: AtomicU64,
    ecdsa_faults: AtomicU64,
    ecdsa_fallbacks: AtomicU64,
}

/// How one handshake's key exchange was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum How {
    /// In a batch of `fill` handshakes; `first` counts the batch.
    Batched {
        fill: usize,
        first: bool,
    },
    Alone,
    NoIfma,
    Failed,
}

impl BatchCounters {
    pub(crate) fn count(&self, how: How) {
        match how {
            How::Batched { fill, first } => {
                bump(&self.batched);
                if first {
                    bump(&self.batches);
                    bump(&self.fill[fill.min(LANES)]);
                }
            }
            How::Alone => bump(&self.alone),
            How::NoIfma => bump(&self.no_ifma),
            How::Failed => bump(&self.failed),
        }
    }

    pub(crate) fn unused(&self) {
        bump(&self.unused);
    }

    /// Adds one handshake step's ECDSA counts (nothing to do for most steps).
    pub(crate) fn add_ecdsa(&self, c: tern_tls::EcdsaCounts) {
        if c == tern_tls::EcdsaCounts::default() {
            return;
        }
        let add = |counter: &AtomicU64, n: u64| counter.fetch_add(n, Ordering::Relaxed);
        add(&self.ecdsa_batches, c.batches);
        add(&self.ecdsa_pairs, c.pairs);
        add(&self.ecdsa_signatures, c.signatures);
        add(&self.ecdsa_faults, c.faults);
        add(&self.ecdsa_fallbacks, c.fallbacks);
    }

    pub(crate) fn add_to(&self, snap: &mut BatchSnapshot) {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        snap.batches += load(&self.batches);
        snap.batched += load(&self.batched);
        snap.fill.resize(LANES + 1, 0);
        for (d, s) in snap.fill.iter_mut().zip(&self.fill) {
            *d += load(s);
        }
        snap.alone += load(&self.alone);
        snap.no_ifma += load(&self.no_ifma);
        snap.failed += load(&self.failed);
        snap.unused += load(&self.unused);
        snap.ecdsa.batches += load(&self.ecdsa_batches);
        snap.ecdsa.pairs += load(&self.ecdsa_pairs);
        snap.ecdsa.signatures += load(&self.ecdsa_signatures);
        snap.ecdsa.faults += load(&self.ecdsa_faults);
        snap.ecdsa.fallbacks += load(&self.ecdsa_fallbacks);
    }
}

/// Batched key exchanges summed over workers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchSnapshot {
    pub batches: u64,
    pub batched: u64,
    /// Batches by fill: `fill[n]` batches held `n` handshakes.
    pub fill: Vec<u64>,
    pub alone: u64,
    pub no_ifma: u64,
    pub failed: u64,
    pub unused: u64,
    /// ECDSA P-256 signatures from batched nonce pairs.
    pub ecdsa: tern_tls::EcdsaCounts,
}

impl BatchSnapshot {
    /// Handshakes that asked for a batch and were computed by aws-lc-rs instead.
    pub fn fallbacks(&self) -> u64 {
        self.alone + self.no_ifma + self.failed
    }

    /// Handshakes per batch, on average (0 before the first batch).
    pub fn mean_fill(&self) -> f64 {
        if self.batches == 0 {
            return 0.0;
        }
        self.batched as f64 / self.batches as f64
    }

    /// Adds `other`'s counts (a previous generation's) to these.
    pub fn add(&mut self, other: &Self) {
        self.batches += other.batches;
        self.batched += other.batched;
        if self.fill.len() < other.fill.len() {
            self.fill.resize(other.fill.len(), 0);
        }
        for (d, s) in self.fill.iter_mut().zip(&other.fill) {
            *d += s;
        }
        self.alone += other.alone;
        self.no_ifma += other.no_ifma;
        self.failed += other.failed;
        self.unused += other.unused;
        self.ecdsa.batches += other.ecdsa.batches;
        self.ecdsa.pairs += other.ecdsa.pairs;
        self.ecdsa.signatures += other.ecdsa.signatures;
        self.ecdsa.faults += other.ecdsa.faults;
        self.ecdsa.fallbacks += other.ecdsa.fallbacks;
    }

    /// The counters by name (the exit summary's `crypto_batch` line, `show stat`'s JSON).
    pub fn fields(&self) -> Vec<(String, u64)> {
        let mut fields = vec![
            ("batches".to_owned(), self.batches),
            ("batched".to_owned(), self.batched),
            ("fallback_alone".to_owned(), self.alone),
            ("fallback_no_ifma".to_owned(), self.no_ifma),
            ("fallback_failed".to_owned(), self.failed),
            ("unused".to_owned(), self.unused),
        ];
        let fill = |n: usize| self.fill.get(n).copied().unwrap_or(0);
        fields.extend((2..=LANES).map(|n| (format!("fill_{n}"), fill(n))));
        let e = &self.ecdsa;
        fields.extend([
            ("ecdsa_batches".to_owned(), e.batches),
            ("ecdsa_pairs".to_owned(), e.pairs),
            ("ecdsa_signatures".to_owned(), e.signatures),
            ("ecdsa_faults".to_owned(), e.faults),
            ("ecdsa_fallbacks".to_owned(), e.fallbacks),
        ]);
        fields
    }
}
