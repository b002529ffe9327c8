//! Task profiling, HAProxy's `show profiling`: per kind of work, how often the workers polled
//! it, how much time those polls took, and how long it waited between being woken and being
//! polled (scheduling latency).
//!
//! **Kinds are phases, not tasks.** tern runs one task per client connection for its whole
//! life (TLS handshake, then request after request), so a per-task profile would lump
//! everything together. Instead the futures of each phase are wrapped in a [`Profiled`] with
//! their [`Kind`] where the phase starts (`listen/session.rs`, `tls/handshake.rs`,
//! `http1/forward.rs`, `exchange/connect.rs`, `exchange/balance.rs`, the spawns of `worker.rs`
//! and the health checker). Phases nest (a request's relay runs inside its request phase):
//! each poll's time is charged to the innermost phase being polled (exclusive time, the outer
//! one gets only what ran outside the inner), and every poll counts one call of each phase it
//! went through.
//!
//! **Time.** A poll is timed with a wall clock, not the thread CPU clock: on Linux
//! `CLOCK_THREAD_CPUTIME_ID` is a system call (~250-300 ns a read on the machine this was
//! written on), and a keep-alive request costs tern ~10-13 µs of CPU over two task polls, each
//! through two nested phases: the four reads per poll would alone cost ~15% of it, far beyond
//! the 2% budget. Even `CLOCK_MONOTONIC` (~25 ns, read in user space) came to ~2.2% with
//! everything else, so the clock is the CPU's time-stamp counter (~11 ns, `profiling/clock.rs`).
//! Polls never block (the workers are pinned and do no blocking I/O), so the wall time of a
//! poll is its CPU time unless the kernel preempts the worker mid-poll; HAProxy measures its
//! `cpu_tot` the same way. `profiling/tests.rs` has the measurements (`clock_costs`,
//! `poll_costs`, ignored by default).
//!
//! **Latency.** While profiling is on, the outermost [`Profiled`] of a task polls its future
//! with a waker of its own that stamps the time of the first wake-up and then wakes the task.
//! The next poll charges the stamp's age to the phase the task was suspended in (the
//! innermost one that returned `Pending`), once per wake-up.
//!
//! **Cost.** Off: one relaxed atomic load per poll of a phase. On: two clock reads per poll of
//! each phase, one per wake-up, and the counters of the worker's own block (`WorkerStats`),
//! which only that worker's thread writes: no cache line shared between workers is written.
//! In isolation (`poll_costs`) a wake-up and poll through two nested phases costs ~75 ns more
//! with profiling on (~5 ns off); a plain keep-alive request makes two of them, ~150 ns on
//! ~13-17 µs. Through the proxy (`bench/profiling-cost.sh`, BENCHMARKS.md) the difference
//! measured 1.5-3% on that cheapest request, against ±1% for the same measurement with
//! profiling never on.

mod clock;
mod counters;
mod future;
mod report;

use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) use counters::{attach, Table};
pub use counters::{Counters, KindCounters};
pub(crate) use future::Profiled;
pub use report::{absorb, report, ProfileReport, ProfileRow};

/// Whether phases are measured (process-wide; `global.profiling`, `set profiling on|off`).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns profiling on or off for every worker from their next poll on. Counters are kept
/// across switches (they add up over every period profiling was on).
/// Switching on the first time calibrates the clock (up to 200 ms, see `profiling/clock.rs`).
pub fn set_enabled(on: bool) {
    if on {
        clock::prepare();
    }
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether profiling is on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// A kind of work the workers (and the health checker) run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A listener's loop: accepting connections, waiting for connection slots, picking up
    /// reloaded certificates.
    Accept,
    /// A client connection's TLS handshake (ClientHello peek, admission, handshake).
    TlsHandshake,
    /// A client connection's proxy loop but its nested phases: reading and parsing request
    /// heads, local answers, choosing a server, judging the outcome, keep-alive waits, closing.
    Request,
    /// A request waiting in a backend queue for a server slot.
    Queue,
    /// Opening a connection to a server (and its TLS handshake, with `tls`).
    Connect,
    /// An exchange in flight (`http1/relay.rs`): the request head and body going up, the response
    /// coming down.
    Response,
    /// A tunnel after a `101` (`tunnel.rs`): bytes relayed both ways.
    Tunnel,
    /// An HTTP/2 connection's own task, client or server side: framing, HPACK, flow control,
    /// taking streams in (each stream's exchange is `request`, `response`, ...).
    Http2,
    /// The once-a-second sweep of idle server connections.
    PoolSweep,
    /// Active and passive health checks (the health checker's thread).
    HealthCheck,
}

impl Kind {
    /// Every kind, in the order of reports.
    pub const ALL: [Kind; 10] = [
        Kind::Accept,
        Kind::TlsHandshake,
        Kind::Request,
        Kind::Queue,
        Kind::Connect,
        Kind::Response,
        Kind::Tunnel,
        Kind::Http2,
        Kind::PoolSweep,
        Kind::HealthCheck,
    ];

    /// The name used in reports and in the `stats: profile` exit lines.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Accept => "accept",
            Kind::TlsHandshake => "tls_handshake",
            Kind::Request => "request",
            Kind::Queue => "queue",
            Kind::Connect => "connect",
            Kind::Response => "response",
            Kind::Tunnel => "tunnel",
            Kind::Http2 => "http2",
            Kind::PoolSweep => "pool_sweep",
            Kind::HealthCheck => "health_check",
        }
    }

    /// Position in [`Kind::ALL`] and in the counter tables.
    fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests;
