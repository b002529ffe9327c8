//! HTTP/1.1 on a client connection: the proxy loop, the request's route to a backend, and the
//! relay of one exchange, over any [`crate::listen::client::ClientStream`].
//!
//! One task serves a connection from its first request to its close, the server side included
//! (docs/design/0002-h1-engine.md). Choosing a server and getting a connection to it are not
//! HTTP/1.1 business: they are [`crate::exchange`]'s, which HTTP/2 will share; nor is relaying
//! bytes once a `101` switched protocols: that is [`crate::tunnel`]'s.

// The proxy loop of one client connection: read a head, answer it or forward it, again.
pub(crate) mod conn;
// A configured error page, or tern's own.
mod error_page;
// Forwarding a request once it has a backend: server, connection, head, relay, outcome.
pub(crate) mod forward;
// One exchange in flight: the request body goes up while the response comes down.
pub(crate) mod relay;
// What a request gives its id and log line while routed: id, captures, log samples.
mod request_log;
// Between a parsed head and the exchange: request rules, the backend, rules' own answers.
pub(crate) mod route;
// The memory of ended sessions, kept by the worker for the next ones (HTTP/2 streams).
pub(crate) mod spares;
// After a `101` to an upgrade request: the connection becomes a tunnel to the server.
mod switch;
