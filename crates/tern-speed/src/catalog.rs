//! The algorithms `tern speed` knows, their names on the command line, and the filter.
//!
//! Names follow `openssl speed` where it has one (`rsa2048`, `ecdsap256`, `ed25519`) so the same
//! words select the same rows in both tools; key agreement also accepts openssl's `ecdhx25519`
//! and `ecdhp256`. A few group names (`rsa`, `ecdsa`, `kx`, `ciphers`, `handshake`) select
//! several rows at once, as `openssl speed rsa` does. `aes-128-cbc-hmac-sha1` (or `cbc`,
//! `seed-002`) selects seed 002's whole table: the CBC rows and the AES-128-GCM rows beside them.

use crate::SpeedError;

/// What a row measures, which decides its table and units.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// Sign and verify per second.
    Signature,
    /// Key generation, derivation and the TLS key shares per second.
    KeyAgreement,
    /// AEAD seal, bytes per second per record size.
    Cipher,
    /// Full TLS handshakes per second, client and server in one thread.
    Handshake,
    /// Seed 002's table: AES-128-CBC with HMAC-SHA1 (OpenSSL, stitched where it can) next to
    /// AES-128-GCM (OpenSSL and aws-lc-rs), bytes per second per record size.
    CbcVsGcm,
}

/// One selectable algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Algo {
    Rsa2048,
    Rsa3072,
    Rsa4096,
    EcdsaP256,
    EcdsaP384,
    Ed25519,
    X25519,
    P256,
    MlKem768,
    X25519MlKem768,
    Aes128Gcm,
    Aes256Gcm,
    Chacha20Poly1305,
    HandshakeRsa2048,
    HandshakeEcdsaP256,
    HandshakeEd25519,
    /// Seed 002's table (several rows: see [`Section::CbcVsGcm`]).
    Aes128CbcHmacSha1,
}

impl Algo {
    /// Every algorithm, in the order the tables list them.
    pub const ALL: [Algo; 17] = [
        Algo::Rsa2048,
        Algo::Rsa3072,
        Algo::Rsa4096,
        Algo::EcdsaP256,
        Algo::EcdsaP384,
        Algo::Ed25519,
        Algo::X25519,
        Algo::P256,
        Algo::MlKem768,
        Algo::X25519MlKem768,
        Algo::Aes128Gcm,
        Algo::Aes256Gcm,
        Algo::Chacha20Poly1305,
        Algo::HandshakeRsa2048,
        Algo::HandshakeEcdsaP256,
        Algo::HandshakeEd25519,
        Algo::Aes128CbcHmacSha1,
    ];

    /// The name on the command line and in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Rsa2048 => "rsa2048",
            Algo::Rsa3072 => "rsa3072",
            Algo::Rsa4096 => "rsa4096",
            Algo::EcdsaP256 => "ecdsap256",
            Algo::EcdsaP384 => "ecdsap384",
            Algo::Ed25519 => "ed25519",
            Algo::X25519 => "x25519",
            Algo::P256 => "p256",
            Algo::MlKem768 => "mlkem768",
            Algo::X25519MlKem768 => "x25519mlkem768",
            Algo::Aes128Gcm => "aes-128-gcm",
            Algo::Aes256Gcm => "aes-256-gcm",
            Algo::Chacha20Poly1305 => "chacha20-poly1305",
            Algo::HandshakeRsa2048 => "handshake-rsa2048",
            Algo::HandshakeEcdsaP256 => "handshake-ecdsap256",
            Algo::HandshakeEd25519 => "handshake-ed25519",
            Algo::Aes128CbcHmacSha1 => "aes-128-cbc-hmac-sha1",
        }
    }

    /// The table this algorithm's rows go in.
    pub fn section(self) -> Section {
        match self {
            Algo::Rsa2048
            | Algo::Rsa3072
            | Algo::Rsa4096
            | Algo::EcdsaP256
            | Algo::EcdsaP384
            | Algo::Ed25519 => Section::Signature,
            Algo::X25519 | Algo::P256 | Algo::MlKem768 | Algo::X25519MlKem768 => {
                Section::KeyAgreement
            }
            Algo::Aes128Gcm | Algo::Aes256Gcm | Algo::Chacha20Poly1305 => Section::Cipher,
            Algo::HandshakeRsa2048 | Algo::HandshakeEcdsaP256 | Algo::HandshakeEd25519 => {
                Section::Handshake
            }
            Algo::Aes128CbcHmacSha1 => Section::CbcVsGcm,
        }
    }

    /// The algorithm's argument to `openssl speed` (`-evp NAME` for ciphers), if it has one
    /// in OpenSSL 3.0 (which has no ML-KEM, and nothing like an in-memory handshake). Seed 002's
    /// table has none: its OpenSSL rows are measured in process (`cbc.rs`).
    pub fn openssl_name(self) -> Option<&'static str> {
        match self {
            Algo::Rsa2048 | Algo::Rsa3072 | Algo::Rsa4096 | Algo::EcdsaP256 => Some(self.name()),
            Algo::EcdsaP384 | Algo::Ed25519 => Some(self.name()),
            Algo::X25519 => Some("ecdhx25519"),
            Algo::P256 => Some("ecdhp256"),
            Algo::Aes128Gcm | Algo::Aes256Gcm | Algo::Chacha20Poly1305 => Some(self.name()),
            Algo::MlKem768
            | Algo::X25519MlKem768
            | Algo::HandshakeRsa2048
            | Algo::HandshakeEcdsaP256
            | Algo::HandshakeEd25519
            | Algo::Aes128CbcHmacSha1 => None,
        }
    }
}

/// Group names and aliases, each with the algorithms it selects.
fn group(name: &str) -> Option<Vec<Algo>> {
    let of = |section: Section| {
        Algo::ALL
            .into_iter()
            .filter(|algo| algo.section() == section)
            .collect::<Vec<_>>()
    };
    let algos = match name {
        "rsa" => vec![Algo::Rsa2048, Algo::Rsa3072, Algo::Rsa4096],
        "ecdsa" => vec![Algo::EcdsaP256, Algo::EcdsaP384],
        "signatures" => of(Section::Signature),
        "kx" => of(Section::KeyAgreement),
        "ciphers" => of(Section::Cipher),
        "handshake" | "handshakes" => of(Section::Handshake),
        "ecdhx25519" => vec![Algo::X25519],
        "ecdhp256" => vec![Algo::P256],
        "cbc" | "seed-002" | "cbc-vs-gcm" => vec![Algo::Aes128CbcHmacSha1],
        _ => return None,
    };
    Some(algos)
}

/// The algorithms selected by the positional arguments: all of them when there are none,
/// otherwise the union of the names (case-insensitive), in table order, each once.
pub fn select(names: &[String]) -> Result<Vec<Algo>, SpeedError> {
    if names.is_empty() {
        return Ok(Algo::ALL.to_vec());
    }
    let mut selected = Vec::new();
    for raw in names {
        let name = raw.trim().to_ascii_lowercase();
        let algos = match Algo::ALL.into_iter().find(|algo| algo.name() == name) {
            Some(algo) => vec![algo],
            None => group(&name).ok_or_else(|| SpeedError::UnknownAlgorithm {
                name: raw.clone(),
                known: known_names(),
            })?,
        };
        selected.extend(algos);
    }
    selected.sort();
    selected.dedup();
    Ok(selected)
}

/// Every accepted name, for error messages and `--list`.
pub fn known_names() -> String {
    let mut names: Vec<&str> = Algo::ALL.iter().map(|algo| algo.name()).collect();
    names.extend([
        "rsa",
        "ecdsa",
        "signatures",
        "kx",
        "ciphers",
        "handshake",
        "ecdhx25519",
        "ecdhp256",
        "cbc",
        "seed-002",
    ]);
    names.join(", ")
}
