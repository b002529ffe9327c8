//! Serde structs that mirror the scenario file one to one.
//!
//! Every table is `deny_unknown_fields`: a misspelt `duraton` must be an error, not a workload
//! silently run with the default duration. Values stay loose here (integers as `i64`, numbers
//! that may be written either way as [`RawNumber`], everything optional) so that the validation
//! stage can check ranges and report every problem at once with its key path.

use std::fmt;

use serde::de::{Deserializer, Visitor};
use serde::Deserialize;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario {
    pub scenario: Option<RawHead>,
    #[serde(default)]
    pub cpus: RawCpus,
    #[serde(default)]
    pub backends: RawBackends,
    pub speed: Option<RawSpeed>,
    #[serde(default)]
    pub defaults: RawWorkload,
    #[serde(default)]
    pub workload: Vec<RawWorkload>,
}

/// `[scenario]`: what is compared.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHead {
    pub name: Option<String>,
    pub title: Option<String>,
    pub about: Option<String>,
    pub targets: Option<Vec<String>>,
    pub optional: Option<Vec<String>>,
    pub monitor_uri: Option<String>,
}

/// `[cpus]`: where each process runs.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCpus {
    pub target: Option<Vec<i64>>,
    pub client: Option<Vec<i64>>,
    pub backends: Option<Vec<i64>>,
}

/// `[backends]`: the `tern term` servers behind every target.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBackends {
    pub count: Option<i64>,
    pub threads: Option<i64>,
}

/// `[speed]`: run `tern speed` and include its tables.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpeed {
    pub args: Option<Vec<String>>,
}

/// One `[[workload]]`, or `[defaults]` (the same keys, applied to every workload).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkload {
    pub name: Option<String>,
    pub about: Option<String>,
    pub path: Option<String>,
    pub mode: Option<String>,
    pub tls: Option<bool>,
    pub h2: Option<bool>,
    pub streams: Option<i64>,
    pub cert: Option<String>,
    pub version: Option<String>,
    pub suite: Option<String>,
    pub group: Option<String>,
    pub requests_per_conn: Option<i64>,
    pub concurrency: Option<i64>,
    pub rate: Option<RawNumber>,
    pub duration: Option<String>,
    pub warmup: Option<String>,
    pub ramp: Option<String>,
    pub runs: Option<i64>,
    pub find_max: Option<bool>,
    pub slo_max: Option<String>,
    pub find_max_time: Option<String>,
    pub start_rate: Option<RawNumber>,
    pub trial_duration: Option<String>,
    pub resolution: Option<String>,
    pub reference: Option<bool>,
    pub reference_rate: Option<RawNumber>,
    pub target_cpus: Option<Vec<i64>>,
    pub client_threads: Option<i64>,
    pub timeout: Option<String>,
    pub response_bytes: Option<i64>,
}

/// A number written as a TOML integer or float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RawNumber(pub f64);

impl<'de> Deserialize<'de> for RawNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawNumber;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E>(self, v: i64) -> Result<RawNumber, E> {
                Ok(RawNumber(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<RawNumber, E> {
                Ok(RawNumber(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<RawNumber, E> {
                Ok(RawNumber(v))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Where serde stopped: the key path, its message and the byte span it knew.
#[derive(Debug)]
pub(crate) struct SerdeFailure {
    pub path: super::locate::KeyPath,
    pub message: String,
    pub span: Option<std::ops::Range<usize>>,
}

/// Parses the text into raw structs, tracking the key path of the first error.
pub(crate) fn from_str(text: &str) -> Result<RawScenario, SerdeFailure> {
    let deserializer = toml::Deserializer::parse(text).map_err(|e| SerdeFailure {
        path: super::locate::KeyPath::root(),
        message: e.message().to_owned(),
        span: e.span(),
    })?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let path = super::locate::KeyPath::from_serde(e.path());
        let inner = e.into_inner();
        SerdeFailure {
            path,
            message: inner.message().to_owned(),
            span: inner.span(),
        }
    })
}
