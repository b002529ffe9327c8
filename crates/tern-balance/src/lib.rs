//! tern's balancing core: which server gets the next stream.
//!
//! This crate does no I/O, reads no clock and draws no entropy: algorithms are plain state
//! machines fed with what they need (the time arrives in [`PickContext::now`], randomness comes
//! from a seeded generator), so they can be unit-tested, property-tested and simulated
//! deterministically. The data path keeps one [`Balancer`] per backend *per worker*, so picking a
//! server takes no lock and touches no shared cache line; each worker passes its own seed, which
//! also offsets the round-robin cycle so that workers do not all start on the same server.
//!
//! One module per algorithm, all behind the [`Algorithm`] trait:
//!
//! | method | module | pick | start / finish | weight or health change |
//! |---|---|---|---|---|
//! | `roundrobin` | [`roundrobin`] | O(log n) | O(1) | O(log n) |
//! | `static-rr` | [`static_rr`] | O(1) | O(1) | O(sum of weights · log n) |
//! | `leastconn` | [`leastconn`] | O(1) | O(log n) | O(log n) |
//! | `first` | [`first`] | O(log n) | O(log n) | O(log n) |
//! | `source`, `uri`, `hdr`, `url_param` (map) | [`hash`] | O(key) + O(1) | O(1) | O(sum of weights · log n) |
//! | the same (consistent) | [`hash::ring`] | O(key) + O(1) expected | O(1) | O(points · log points) |
//! | `random(N)` | [`random`] | O(N log n) | O(1) | O(log n) |
//! | `ewma` | [`ewma`] | O(log n) | O(1) | O(log n) |
//!
//! An algorithm sees only the servers of one tier: the [`Balancer`] runs one instance over the
//! active servers and one over the backups, and asks the backup tier only when no active server is
//! usable. Every algorithm treats weight 0 as drained and never picks an unusable (down) server.
//! In-flight streams are reported with [`Algorithm::on_start`] and [`Algorithm::on_finish`];
//! picking itself never allocates.
//!
//! Around the algorithms sit the state machines of a backend, which the data path drives with
//! real I/O and real time and `tests/simulation.rs` drives with a virtual clock:
//!
//! | module | what it decides | cost per call |
//! |---|---|---|
//! | [`health`] | a server's UP/DOWN state from active checks and passive errors (HAProxy's `rise`/`fall` counter), and when its next check is due | O(1) |
//! | [`slowstart`] | the weight of a server ramping back in after it came UP | O(1) |
//! | [`queue`] | requests waiting for a free slot: first come first served, waiters pinned to one server served only by it, deadlines | O(1) amortised; expiry O(log n) |
//! | [`stick`] | which server a key went to, forgotten after `expire`, least recently used evicted at `size` | O(1) amortised |
//!
//! How they fit: a check result goes to [`Health::on_check`]; a [`Transition`] becomes
//! [`Algorithm::set_usable`]; a server that came UP gets [`slow_start_weight`] through
//! [`Algorithm::set_weight`] every [`slow_start_step`] until its window has passed. A request
//! first looks up its key in a [`StickTable`], else asks [`Balancer::select_with`], whose `take`
//! callback reserves a slot under the server's global `maxconn` (counted over every worker) or
//! refuses the server (full, or the one a retry must avoid). A refused server is left out of that
//! one pick only, through each algorithm's cheap exclusion, which leaves health, weights and the
//! algorithm's position as they were (module `exclude`); when every server refuses, the answer is
//! [`NoServer::Full`] and the request waits in the [`Queue`] until a finishing request hands its
//! slot on with [`Queue::take_for`], its deadline passes, or the backend goes down and the queue
//! is drained.

#![forbid(unsafe_code)]

pub mod balancer;
pub mod context;
pub mod ewma;
mod exclude;
mod fenwick;
pub mod first;
pub mod hash;
pub mod health;
mod heap;
mod keyhash;
pub mod leastconn;
pub mod queue;
pub mod random;
mod rng;
pub mod roundrobin;
mod slots;
pub mod slowstart;
pub mod static_rr;
pub mod stick;

use std::time::Duration;

pub use balancer::{BalanceMethod, Balancer, BuildError, NoServer, ServerSpec, MAX_WEIGHT};
pub use context::{KeySource, Nanos, PickContext};
pub use ewma::Ewma;
pub use first::First;
pub use hash::{Hash, HashKey, HashType};
pub use health::{spread, Cause, Health, HealthSettings, InitState, OnError, Transition};
pub use leastconn::LeastConn;
pub use queue::{Queue, Ticket};
pub use random::Random;
pub use roundrobin::RoundRobin;
pub use slowstart::{slow_start_step, slow_start_weight};
pub use static_rr::StaticRoundRobin;
pub use stick::StickTable;

/// Index of a server within its backend (or within its tier, for a bare algorithm), as listed
/// in the configuration.
pub type ServerId = usize;

/// A load-balancing algorithm over a fixed list of servers.
///
/// Servers start usable with the weights given at construction. Unknown ids are ignored by every
/// method, so a stale id from the data path can never panic the core.
pub trait Algorithm {
    /// Picks a server for the next stream, or `None` when no server can take it (all drained or
    /// down; for `first`, also all at their `maxconn`). Does not count the stream: call
    /// [`Algorithm::on_start`] once it is sent to the server.
    fn pick(&mut self, ctx: &PickContext<'_>) -> Option<ServerId>;

    /// Changes a server's weight; 0 drains it.
    fn set_weight(&mut self, server: ServerId, weight: u32);

    /// Marks a server usable or not (health), without forgetting its weight.
    fn set_usable(&mut self, server: ServerId, usable: bool);

    /// A stream was assigned to `server` (it counts as in flight until `on_finish`).
    fn on_start(&mut self, _server: ServerId) {}

    /// A stream of `server` ended (completed, failed or abandoned).
    fn on_finish(&mut self, _server: ServerId) {}

    /// `server` answered after `latency`, observed at `now` (same clock as [`PickContext::now`]).
    fn on_response(&mut self, _server: ServerId, _latency: Duration, _now: Nanos) {}
}
