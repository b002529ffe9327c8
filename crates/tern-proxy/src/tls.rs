//! TLS termination on the client side: the handshake of an accepted connection and everything
//! around it, up to an established TLS stream (`stream.rs`) that a protocol serves.
//!
//! Nothing here knows HTTP: the handshake hands over a byte stream, so any protocol served over
//! TLS can reuse all of it. The TLS of connections to servers is on the other side, in
//! `exchange/upstream.rs`.

// How a handshake may wait: the full-handshake rate cap and the per-source budget.
pub(crate) mod admission;
// Batched key exchanges (`global.crypto_batch`): a thread's handshakes share IFMA batches.
pub mod batch;
// Which kind of certificate key a handshake used, noted by the certificate resolver.
pub(crate) mod cert_probe;
// A look at the ClientHello before the handshake: does the client offer to resume? Which
// server name does a relayed one ask for? Public only for the fuzz targets (crates/tern-fuzz).
#[doc(hidden)]
pub mod client_hello;
// The two engines (rustls, OpenSSL) behind one type per stage: a bind's TLS, a connection
// handshaken, one on its way from the offload thread.
pub(crate) mod engines;
// The handshake of one connection, under the bind's `handshake` timeout, and its counting.
pub(crate) mod handshake;
// `show tls`: the certificates the handshakes use, as loaded.
pub mod info;
// The OpenSSL engine of a bind (`engine = "openssl"`): its handshake and stream, or, built
// without the `openssl-engine` feature, the refusal of such binds at start-up.
pub mod ossl;
// Handshake offload: a worker's TLS listeners served by a low-priority thread of their own.
pub(crate) mod offload;
// Certificate reload within a generation, and each worker's copy of a bind's configuration.
pub(crate) mod reload;
// Handshake counters per frontend: negotiated parameters, failures, latency, admission.
pub(crate) mod stats;
// tern's own TLS server stream over rustls, written for the fewest system calls.
pub(crate) mod stream;
