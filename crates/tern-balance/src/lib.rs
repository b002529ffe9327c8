//! tern's balancing core: which server gets the next stream.
//!
//! This crate does no I/O and reads no clock: algorithms are plain state machines fed with what
//! they need, so they can be unit-tested, property-tested and simulated deterministically. The data
//! path keeps one instance per backend *per worker*, so picking a server takes no lock and touches
//! no shared cache line; each worker's sequence is offset (see [`RoundRobin::with_offset`]) so
//! that workers do not all start on the same server.
//!
//! One module per algorithm, all behind the [`Algorithm`] trait. The foundation ships smooth
//! weighted round-robin; the full HAProxy set arrives later behind the same trait.

#![forbid(unsafe_code)]

pub mod roundrobin;

pub use roundrobin::RoundRobin;

/// Index of a server within its backend, as listed in the configuration.
pub type ServerId = usize;

/// What an algorithm may look at when picking. Grows with the algorithms that need more
/// (client address for `source`, URI for `uri`, ...); round-robin needs nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct PickContext {}

/// A load-balancing algorithm over a fixed list of servers.
pub trait Algorithm {
    /// Picks a server for the next stream, or `None` when no server can take traffic (all
    /// drained or down).
    fn pick(&mut self, ctx: &PickContext) -> Option<ServerId>;

    /// Changes a server's weight; 0 drains it. Unknown ids are ignored.
    fn set_weight(&mut self, server: ServerId, weight: u32);

    /// Marks a server usable or not (health), without forgetting its weight.
    fn set_usable(&mut self, server: ServerId, usable: bool);
}
