//! A generation: the workers, the health checker and the shared server state started from one
//! configuration snapshot, as a [`crate::ProxyHandle`] — how it hands over to the next
//! generation (reload, binary upgrade) and what the runtime API changes in it.

// What one generation hands to the next: listening sockets, server state, TLS session caches.
pub(crate) mod handover;
// Runtime operations: the operator's server state, weights and addresses.
pub(crate) mod operate;
