//! The results: one [`Row`] per measurement, collected in a [`Report`] written as JSON
//! (`--json FILE`) for scripts and the benchmark pages, and printed as tables ([`crate::table`]).

use std::path::Path;

use crate::catalog::Section;
use crate::measure::{Basis, Measured};
use crate::SpeedError;

/// Everything one `tern speed` run measured.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub tern_version: String,
    /// The TLS provider measured.
    pub provider: String,
    /// `--seconds` per measurement.
    pub seconds: f64,
    /// `--multi`: threads per measurement, rates summed.
    pub multi: usize,
    /// `--cpus`, empty if not pinned.
    pub cpus: Vec<usize>,
    /// What rates are divided by: the threads' CPU time, or wall-clock time (`--elapsed`).
    pub rate_basis: Basis,
    /// `openssl version` of the side-by-side runs, if any.
    pub openssl: Option<String>,
    /// The system's load averages (1, 5, 15 minutes) before and after the run, when readable:
    /// a load above the number of CPUs means the figures were taken on a busy machine.
    pub load_before: Option<String>,
    pub load_after: Option<String>,
    pub rows: Vec<Row>,
    /// What could not be measured or compared, and why.
    pub notes: Vec<String>,
}

impl Report {
    /// The first three fields of `/proc/loadavg`, if the system has it.
    pub fn load_average() -> Option<String> {
        let text = std::fs::read_to_string("/proc/loadavg").ok()?;
        let fields: Vec<&str> = text.split_whitespace().take(3).collect();
        (fields.len() == 3).then(|| fields.join(" "))
    }

    /// Writes the report as pretty-printed JSON.
    pub fn write_json(&self, path: &Path) -> Result<(), SpeedError> {
        let write_error = |source| SpeedError::WriteJson {
            path: path.to_path_buf(),
            source,
        };
        let text = serde_json::to_string_pretty(self)
            .map_err(|err| write_error(std::io::Error::other(err)))?;
        std::fs::write(path, text + "\n").map_err(write_error)
    }
}

/// One measurement.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub section: Section,
    /// `rsa2048`, `x25519`, `aes-128-gcm`, ...; for handshakes, the certificate's key.
    pub algorithm: String,
    /// `sign`, `verify`, `keygen`, `derive`, `encapsulate`, `decapsulate`,
    /// `tls_key_exchange`, `seal`, `handshake`; in seed 002's table `stitched` (OpenSSL's
    /// AES-128-CBC-HMAC-SHA1 cipher) or `composed` (AES-128-CBC, then HMAC-SHA1).
    pub operation: String,
    /// Record size of a cipher row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<usize>,
    /// The library measured when it is not the provider of the report (seed 002's table:
    /// `openssl` or `aws-lc-rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Operations counted (all threads).
    pub ops: u64,
    pub wall_seconds: f64,
    /// CPU time of the measuring threads.
    pub cpu_seconds: f64,
    pub ops_per_sec: f64,
    /// Cipher rows: `ops_per_sec` × `bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_sec: Option<f64>,
    /// openssl's figure in the row's headline unit (bytes/s for ciphers, else ops/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openssl: Option<f64>,
    /// tern ÷ openssl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// Operations whose two sides were timed apart (handshakes, TLS key exchanges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitDetail>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake: Option<HandshakeDetail>,
}

/// Client and server of one operation, timed apart.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SplitDetail {
    /// Fraction of the CPU time spent on the client side.
    pub client_share: f64,
    /// Fraction of the CPU time spent on the server side.
    pub server_share: f64,
    /// Operations per second of client-side time.
    pub client_ops_per_sec: f64,
    /// Operations per second of server-side time: the server's ceiling per core.
    pub server_ops_per_sec: f64,
}

/// What a handshake row negotiated.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HandshakeDetail {
    /// `TLSv1.3` or `TLSv1.2`.
    pub version: String,
    /// The key exchange group offered, e.g. `X25519`.
    pub group: String,
    /// As negotiated, e.g. `TLSv1.3 TLS13_AES_128_GCM_SHA256 X25519`.
    pub negotiated: String,
}

impl Row {
    /// A row from a measurement.
    pub fn new(section: Section, algorithm: &str, operation: &str, measured: &Measured) -> Self {
        let split = (measured.part_shares.iter().sum::<f64>() > 0.0).then(|| SplitDetail {
            client_share: measured.part_shares[0],
            server_share: measured.part_shares[1],
            client_ops_per_sec: measured.part_rates[0],
            server_ops_per_sec: measured.part_rates[1],
        });
        Self {
            section,
            algorithm: algorithm.to_owned(),
            operation: operation.to_owned(),
            bytes: None,
            library: None,
            ops: measured.ops,
            wall_seconds: measured.wall_seconds,
            cpu_seconds: measured.cpu_seconds,
            ops_per_sec: measured.rate,
            bytes_per_sec: None,
            openssl: None,
            ratio: None,
            split,
            handshake: None,
        }
    }

    /// Makes this a cipher row over records of `bytes`.
    pub fn set_bytes(&mut self, bytes: usize) {
        self.bytes = Some(bytes);
        self.bytes_per_sec = Some(self.ops_per_sec * bytes as f64);
    }

    /// The row's headline figure: bytes/s for ciphers, operations/s otherwise.
    pub fn headline(&self) -> f64 {
        self.bytes_per_sec.unwrap_or(self.ops_per_sec)
    }

    /// Records openssl's figure (same unit as [`Row::headline`]) and the ratio.
    pub fn set_openssl(&mut self, theirs: f64) {
        self.openssl = Some(theirs);
        self.ratio = (theirs > 0.0).then(|| self.headline() / theirs);
    }
}
