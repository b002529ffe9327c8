//! What every client thread of a run shares, read-only: the target, the request bytes, the
//! load model, the timeline, and the run's stop controls.
//!
//! The timeline is `start → ramp → warm-up → measured window → end`. During the ramp the load
//! climbs in stairs ([`Timeline::level`]); nothing before the window is reported.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::http2::H2Plan;
use crate::tls::ClientTls;

/// Most stairs of a ramp.
pub const MAX_STAIRS: u32 = 10;

/// How the load is generated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Fixed concurrency: each connection sends its next request when the last one ends.
    Closed,
    /// Fixed arrival rate (requests per second, over all threads), latency from the intended
    /// start; the thread's connections are capped by its share of `-c`.
    Open {
        /// Arrivals per second of the whole run.
        rate: f64,
    },
}

/// The phases of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeline {
    /// When the threads were started.
    pub start: Instant,
    /// Length of the ramp (zero: none).
    pub ramp: Duration,
    /// Stairs of the ramp (at least 1).
    pub stairs: u32,
    /// Start of the measured window.
    pub window_start: Instant,
    /// End of the run.
    pub end: Instant,
}

impl Timeline {
    /// `start`, then `ramp`, `warmup` and the measured `duration`.
    pub fn new(start: Instant, ramp: Duration, warmup: Duration, duration: Duration) -> Self {
        let stairs = (ramp.as_secs_f64().ceil() as u32).clamp(1, MAX_STAIRS);
        let window_start = start + ramp + warmup;
        Self {
            start,
            ramp,
            stairs,
            window_start,
            end: window_start + duration,
        }
    }

    /// The share of the full load in effect at `at`: during the ramp, stair `k` (0-based) of `n`
    /// runs at `(k + 1) / (n + 1)`; after it, 1.
    pub fn level(&self, at: Instant) -> f64 {
        let into = at.saturating_duration_since(self.start);
        if into >= self.ramp {
            return 1.0;
        }
        let stair = (into.as_secs_f64() / self.ramp.as_secs_f64() * f64::from(self.stairs))
            .floor()
            .min(f64::from(self.stairs - 1));
        (stair + 1.0) / (f64::from(self.stairs) + 1.0)
    }

    /// When stair `k` begins (`k == stairs` is the end of the ramp).
    pub fn stair_start(&self, k: u32) -> Instant {
        self.start
            + self
                .ramp
                .mul_f64(f64::from(k.min(self.stairs)) / f64::from(self.stairs))
    }

    /// When closed-loop connection `j` of `n` starts: at the first stair whose level covers it.
    pub fn client_start(&self, j: u32, n: u32) -> Instant {
        if self.ramp.is_zero() || n == 0 {
            return self.start;
        }
        let wanted = f64::from(j + 1) / f64::from(n);
        (0..self.stairs)
            .find(|&k| f64::from(k + 1) / f64::from(self.stairs + 1) >= wanted - 1e-9)
            .map_or_else(|| self.stair_start(self.stairs), |k| self.stair_start(k))
    }

    /// The first once-a-second tick at or after `start`, aligned to whole seconds from the
    /// window's start.
    pub fn first_tick(&self) -> Instant {
        let before = self.window_start.saturating_duration_since(self.start);
        self.window_start - Duration::from_secs(before.as_secs())
    }
}

/// The run's stop controls, shared by every thread and the supervising thread.
#[derive(Debug)]
pub struct Control {
    /// Becomes true to end every thread now (deadline, Ctrl-C, a failed thread).
    stop: watch::Sender<bool>,
    /// Set when a handshake was resumed although resumption is off.
    pub resumed: AtomicBool,
    /// The supervising thread, woken when a thread asks to stop.
    main: Thread,
}

impl Control {
    /// Controls whose stop wakes the calling thread.
    pub fn new() -> Self {
        Self {
            stop: watch::Sender::new(false),
            resumed: AtomicBool::new(false),
            main: std::thread::current(),
        }
    }

    /// Whether the run was asked to stop.
    pub fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Ends the run early and wakes the supervisor.
    pub fn request_stop(&self) {
        self.stop.send_replace(true);
        self.main.unpark();
    }

    /// Ends the run because a handshake resumed against the settings.
    pub fn abort_resumed(&self) {
        self.resumed.store(true, Ordering::Relaxed);
        self.request_stop();
    }

    /// A receiver that sees the stop.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }
}

/// What the client threads of one stream of load (the main load or the reference probe) need.
#[derive(Debug)]
pub struct Plan {
    /// Where to connect.
    pub addr: SocketAddr,
    /// TLS setup for https targets.
    pub tls: Option<ClientTls>,
    /// The request for all but the last request of a connection.
    pub keep_alive_request: Vec<u8>,
    /// The last request of a connection (`Connection: close`).
    pub close_request: Vec<u8>,
    /// Requests per connection (0: unlimited).
    pub requests_per_conn: u64,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Closed or open loop.
    pub load: Load,
    /// The run's phases.
    pub timeline: Timeline,
    /// Stop controls.
    pub control: Arc<Control>,
    /// Whether a resumed handshake is expected (`--resume`) or aborts the run.
    pub resumption: bool,
    /// HTTP/2 (`--h2`): the request and the streams per connection; `None` for HTTP/1.1.
    pub h2: Option<Arc<H2Plan>>,
}

#[cfg(test)]
mod tests;
