//! Helpers shared by the test files: each declares `mod support;` and uses what it needs.
//!
//! - `fake`: a fake proxy behind the `Control` trait, and blocking clients for the control API.
//! - `promcheck`: a strict reader of the Prometheus text format.
//! - `view`: a synthetic `View` for the renderers.

#![allow(dead_code)]

pub mod fake;
pub mod promcheck;
pub mod view;
