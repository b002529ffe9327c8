//! The exchange with servers, once a request has its backend: picking a server, getting a
//! connection to it, retrying a failed connect, and what all workers share about servers.
//!
//! - **Server.** Persistence ([`persist`]) names a server, or the worker's balancer
//!   ([`balance`]) picks one, taking a slot under its `maxconn`; when every usable server is
//!   full the request waits in the backend queue (503 when the queue is full or
//!   `queue.timeout` passes): [`pick`].
//! - **Connection.** An idle pooled connection to the server is taken ([`pool`]) or a new one
//!   opened under the `connect` timeout ([`upstream`], with TLS and the PROXY header):
//!   [`connect`].
//! - **Retries.** A failed connect is retried up to `retries` times (nothing was sent, so this
//!   is safe for every method): on another server when `redispatch` is on (the failed ones are
//!   avoided), else on the same one; then the answer is 503: [`attempt`].
//! - **Passive checks.** With `observe`, each exchange tells the server's shared state whether
//!   it failed (connection errors; at layer 7 also invalid responses and 5xx), and the health
//!   checker acts when `error_limit` consecutive errors are reached: [`observe`].
//!
//! None of this drives a client connection: a protocol's loop (`http1/forward.rs`) calls these
//! steps, sends the request and relays the response, so HTTP/2 can call the same ones. What
//! still reads HTTP/1.1 types is said in each module (hashing keys come from the parsed
//! HTTP/1.1 head; a server connection is read and written as HTTP/1.1, and [`h2`] makes a stream
//! of an HTTP/2 connection look like one).

// One request's way to a server across its connection attempts: retries, redispatch.
pub(crate) mod attempt;
// The worker's balancers: one per backend, built from the configuration.
pub(crate) mod balance;
// A connection to the picked server: from the pool, or opened.
pub(crate) mod connect;
// HTTP/2 to servers: requests as streams on shared connections.
pub(crate) mod h2;
// Passive checks: what live traffic showed of a server.
pub(crate) mod observe;
// Persistence: the cookie and the stickiness table name a server.
pub(crate) mod persist;
// Picking the server of a request: persistence, the balancer, the queue.
pub(crate) mod pick;
// Idle keep-alive connections to servers, one pool per worker.
pub(crate) mod pool;
// The PROXY protocol header sent to servers with `proxy_protocol`.
pub(crate) mod proxy_header;
// What all workers share about a backend's servers: health, weights, slots, queue.
pub(crate) mod servers;
// Connections to servers: TCP, TLS, the PROXY header, idle checks.
pub(crate) mod upstream;
// Which HTTP version a WebSocket to a server goes over (`ws`).
pub(crate) mod websocket;
