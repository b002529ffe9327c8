//! Views of the running proxy rendered from a [`View`](crate::View): Prometheus metrics, the
//! HTML stats page and JSON for the control API.
//!
//! All three are pure functions of one snapshot, so they can be tested from a synthetic view
//! and cost nothing until asked for. They share [`rows`], which pairs the configuration's names
//! with the snapshot's counters, and [`tls`], which names a frontend's TLS counters.

mod exposition;
pub mod html;
pub mod json;
pub mod prometheus;
pub mod rows;
pub mod tls;

pub use exposition::CONTENT_TYPE as PROMETHEUS_CONTENT_TYPE;
