//! The per-worker counter table, and the thread-local link from a worker thread to it.
//!
//! Each worker thread (and the health checker's) attaches its own `WorkerStats` once; every
//! [`super::Profiled`] polled on that thread charges that block. A worker's handshake offload
//! thread charges a second table of the same block ([`Table::Offload`]). Only the owning thread
//! writes a table, so an update is a relaxed load and store (no locked read-modify-write);
//! readers sum the tables of all threads ([`super::report`]).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::Kind;
use crate::stats::WorkerStats;

/// The counters of one kind on one worker.
#[derive(Debug, Default)]
pub struct KindCounters {
    /// Polls of a future of this kind.
    pub calls: AtomicU64,
    /// Nanoseconds spent in those polls (exclusive of nested phases).
    pub cpu_ns: AtomicU64,
    /// Nanoseconds from wake-ups to the polls that followed them.
    pub lat_ns: AtomicU64,
    /// Wake-ups measured in `lat_ns`.
    pub wakes: AtomicU64,
}

/// One worker's profiling table, a row per [`Kind`].
#[derive(Debug, Default)]
pub struct Counters {
    kinds: [KindCounters; Kind::ALL.len()],
}

impl Counters {
    /// The row of `kind`.
    pub fn kind(&self, kind: Kind) -> &KindCounters {
        &self.kinds[kind.index()]
    }
}

/// Which of a `WorkerStats` block's two tables a thread charges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    /// The worker's (or the health checker's) own.
    Worker,
    /// The worker's handshake offload thread's.
    Offload,
}

thread_local! {
    /// The counters this thread charges; `None` until [`attach`] (nothing is recorded).
    static TABLE: RefCell<Option<(Arc<WorkerStats>, Table)>> = const { RefCell::new(None) };
}

/// Makes this thread charge its profiled polls to `table` of `stats` (a worker's or the health
/// checker's own block).
pub(crate) fn attach(stats: &Arc<WorkerStats>, table: Table) {
    TABLE.with(|t| *t.borrow_mut() = Some((Arc::clone(stats), table)));
}

/// Adds one poll of `kind` taking `own_ns` to this thread's table, and the latency of the
/// wake-up before it (`woken`: the phase the task was suspended in, and how long it waited).
pub(super) fn charge(kind: Kind, own_ns: u64, woken: Option<(Kind, u64)>) {
    TABLE.with(|t| {
        let Ok(table) = t.try_borrow() else {
            return;
        };
        let Some((stats, which)) = table.as_ref() else {
            return;
        };
        let counters = match which {
            Table::Worker => &stats.profile,
            Table::Offload => &stats.offload_profile,
        };
        let row = counters.kind(kind);
        add(&row.calls, 1);
        add(&row.cpu_ns, own_ns);
        if let Some((waiting, lat)) = woken {
            let row = counters.kind(waiting);
            add(&row.lat_ns, lat);
            add(&row.wakes, 1);
        }
    });
}

/// `counter += n` by its only writer: a plain load and store, no locked instruction.
#[inline]
fn add(counter: &AtomicU64, n: u64) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}
