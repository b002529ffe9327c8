//! The client side up to a connection ready to serve: listening sockets, the accept loop and
//! its connection limits, and one session's steps (TLS handshake, then the protocol).
//!
//! The TLS handshake itself is in [`crate::tls`]; what follows it is a protocol's loop
//! ([`crate::http1`] today). [`client::ClientStream`] is what a protocol's loop reads and writes,
//! plain or TLS: HTTP/2 will run over the same streams.

// The accept loop of one listening socket, run by a worker or its handshake offload thread.
pub(crate) mod accept;
// Failed accepts (out of file descriptors): logged once per run, summed up, not per retry.
pub(crate) mod accept_failures;
// A plain HTTP/1.1 client's wait for its first bytes, before its session is built.
pub(crate) mod first_bytes;
// `tcp_request.connection` rules: track, accept, reject before anything is read.
pub(crate) mod conn_rules;
// Caps on new connections per second (`max_conn_rate`, `rate_limit_sessions`, ...).
pub(crate) mod rate_cap;
// What a protocol's loop needs from a client connection, plain or TLS.
pub(crate) mod client;
// Listening sockets: one per bind per worker, sharing the port with SO_REUSEPORT.
pub(crate) mod listener;
// The PROXY protocol header received first on a bind with `accept_proxy`.
pub(crate) mod proxy_in;
// One client connection from accept to close: TLS handshake, then the protocol's loop.
pub(crate) mod session;
