//! The raw `compression` table of a frontend or backend (checked in `validate/compression.rs`).

use serde::Deserialize;

use super::RawSize;

/// `compression = { algos = ["br", "gzip"], types = ["text/html"], offload = false, ... }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCompression {
    pub algos: Option<Vec<String>>,
    pub types: Option<Vec<String>>,
    pub offload: Option<bool>,
    pub min_size: Option<RawSize>,
    pub gzip_level: Option<i64>,
    pub br_level: Option<i64>,
    pub zstd_level: Option<i64>,
}
