//! Test harness: start the real `tern` binary and `tern term` backends on ephemeral ports, and
//! talk to them with real clients. Each test reads like a scenario:
//!
//! ```ignore
//! let term = Term::start("s1");
//! let tern = Tern::run(&Config::new().backend_servers(&[&term]).toml());
//! let resp = tern.get("/").await;
//! ```
//!
//! Processes are killed when their handle drops, so a failing test leaves nothing running.
//! Readiness is a line on stdout (`ready: ...`), never a sleep.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod client;
pub mod config;
/// Fleet tests only: hosts in network namespaces; not re-exported.
pub mod fabric;
/// HAProxy, hitch, stunnel: tests of interoperation only; not re-exported.
pub mod others;
pub mod process;
/// Frontend TLS feature tests only; not re-exported (see the module docs).
pub mod tls_client;
/// WebSocket tests only; not re-exported.
pub mod ws;

/// BIND 9 and nsupdate: the service discovery tests only; not re-exported.
pub mod dns;

pub use client::*;
// Not every test file builds its configuration with `Config`.
#[allow(unused_imports)]
pub use config::*;
pub use process::*;
