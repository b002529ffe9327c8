//! tern's runtime surface, off the data path: the control API (a Unix socket and an optional
//! HTTP listener), the `tern ctl` client, and the views rendered from the proxy's counters (the
//! HTML stats page, Prometheus metrics, JSON).
//!
//! The running proxy is reached only through the [`Control`] trait (`control.rs`), which the
//! `tern` binary implements over its current generation of workers. This crate therefore never
//! touches a worker, and its parts can be tested against a fake.

pub mod api;
pub mod control;
pub mod ctl;
pub mod render;
pub mod tls_view;

pub use control::{AdminState, Control, ControlError, Info, ServerSpec, View};
