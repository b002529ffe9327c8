//! TLS termination settings of a bind: certificates, policy and resumption.
//!
//! The names tern accepts for versions, cipher suites, groups and signature schemes are fixed
//! here, as enums, rather than passed through as strings: the configuration is validated without
//! the TLS crate, an unsupported name is reported with the list of supported ones, and tern-tls
//! maps every variant with an exhaustive `match`, so the two crates cannot drift apart.

use std::path::PathBuf;
use std::time::Duration;

pub use super::tls_names::{KxGroup, Named, SigAlg, Tls12Cipher, Tls13Suite, TlsVersion};

/// TLS termination settings of a bind.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsSettings {
    /// Certificates offered on this bind, in configuration order. The first (else the first of
    /// `cert_dir`) is the default for unknown or absent SNI.
    pub certs: Vec<Certificate>,
    /// Every `*.pem` file of this directory is a certificate too (`cert_dir`), after `certs`.
    pub cert_dir: Option<PathBuf>,
    /// Refuse handshakes whose SNI matches no certificate, or that send none (`strict_sni`).
    pub strict_sni: bool,
    pub policy: TlsPolicy,
    pub resumption: Resumption,
    /// Client certificates (`client_auth`).
    pub client_auth: super::ClientAuth,
    /// The TLS library of the bind (`engine`), with the OpenSSL engine's own policy.
    pub engine: super::TlsEngine,
}

impl TlsSettings {
    /// Settings with these certificates and every other key at its default.
    pub fn new(certs: Vec<CertSource>) -> Self {
        Self {
            certs: certs.into_iter().map(Certificate::from).collect(),
            cert_dir: None,
            strict_sni: false,
            policy: TlsPolicy::default(),
            resumption: Resumption::default(),
            client_auth: super::ClientAuth::default(),
            engine: super::TlsEngine::Rustls,
        }
    }
}

/// One configured certificate and what comes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate {
    pub source: CertSource,
    /// SNI names served with this certificate besides those of its SAN (`names`), lowercased;
    /// `*.example.com` wildcards allowed.
    pub names: Vec<String>,
    /// A DER OCSP response to staple (`ocsp`); when `None`, `<cert file>.ocsp` is used if it
    /// exists.
    pub ocsp: Option<PathBuf>,
}

impl From<CertSource> for Certificate {
    fn from(source: CertSource) -> Self {
        Self {
            source,
            names: Vec::new(),
            ocsp: None,
        }
    }
}

/// Where one certificate chain and its private key come from. Paths are absolute (resolved
/// against the configuration file's directory during validation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertSource {
    /// One PEM file holding the chain (leaf first) and the private key.
    Combined(PathBuf),
    /// The chain and the key in two PEM files.
    Split { cert: PathBuf, key: PathBuf },
}

impl CertSource {
    /// The file holding the certificate chain.
    pub fn cert_path(&self) -> &PathBuf {
        match self {
            Self::Combined(path) | Self::Split { cert: path, .. } => path,
        }
    }
}

/// What a bind negotiates. Lists are in preference order; with `prefer_server_ciphers` the
/// server's order wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsPolicy {
    pub min_version: TlsVersion,
    pub max_version: TlsVersion,
    /// TLS 1.2 cipher suites (`ciphers`).
    pub ciphers: Vec<Tls12Cipher>,
    /// TLS 1.3 cipher suites (`suites`).
    pub suites: Vec<Tls13Suite>,
    /// Key exchange groups (`groups`).
    pub groups: Vec<KxGroup>,
    /// Signature schemes the server signs handshakes with (`sigalgs`); `None`: every scheme the
    /// certificate's key supports.
    pub sigalgs: Option<Vec<SigAlg>>,
    /// ALPN protocols offered (`alpn`); empty: no ALPN extension.
    pub alpn: Vec<String>,
    /// Choose the cipher suite by the server's order rather than the client's.
    pub prefer_server_ciphers: bool,
}

impl Default for TlsPolicy {
    fn default() -> Self {
        Self {
            min_version: TlsVersion::Tls12,
            max_version: TlsVersion::Tls13,
            ciphers: Tls12Cipher::ALL.to_vec(),
            suites: Tls13Suite::ALL.to_vec(),
            groups: KxGroup::ALL.to_vec(),
            sigalgs: None,
            alpn: vec!["h2".to_owned(), "http/1.1".to_owned()],
            prefer_server_ciphers: true,
        }
    }
}

/// Session resumption (`resumption = { ... }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumption {
    /// Stateless session tickets (`tickets`).
    pub tickets: bool,
    /// Without a key file: how often a new ticket key is made; the previous key still decrypts
    /// for one more period (`ticket_rotation`).
    pub ticket_rotation: Duration,
    /// Ticket keys shared with other tern instances (`ticket_key_file`): the first key encrypts,
    /// all decrypt. Read when the configuration is loaded.
    pub ticket_key_file: Option<PathBuf>,
    /// Most sessions in the stateful cache shared by the bind's workers (`cache_size`); 0: off.
    pub cache_size: usize,
}

impl Default for Resumption {
    fn default() -> Self {
        Self {
            tickets: true,
            ticket_rotation: Duration::from_secs(3600),
            ticket_key_file: None,
            cache_size: 0,
        }
    }
}
