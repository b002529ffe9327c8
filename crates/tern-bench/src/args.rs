//! Command-line options of `tern bench`, and the small parsers behind them.
//!
//! The options are a clap `Args` struct so the `tern` binary mounts them as a subcommand and
//! libraries build them with [`BenchArgs::from_args`]. Every knob that changes what is measured
//! (TLS version, group, suite, signature scheme, resumption, concurrency or arrival rate,
//! requests per connection, CPUs) is an explicit option, because a benchmark figure is only
//! meaningful with its settings named.

mod parse;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

pub use parse::{parse_cpu_list, parse_rate, parse_ratio, parse_secs, CpuList, Target};

const LOAD: &str = "Load";
const TLS: &str = "TLS";
const REFERENCE: &str = "Reference probe";
const OUTPUT: &str = "Output";

/// Options of `tern bench`: an HTTP/1.1 and HTTPS load generator, closed loop (`-c`) or open
/// loop (`--rate`).
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// The target URL: http or https, a host, an optional port and path (help text below).
    // In the `BenchArgs` group by hand: clap's derive leaves the group of a struct with a
    // flattened field (`slo`) empty, and `Option<BenchArgs>` (the `tern` CLI) would be None.
    #[arg(value_name = "URL", value_parser = Target::parse, group = "BenchArgs",
          help = "Target URL: http://host[:port][/path] or https://host[:port][/path]")]
    pub url: Target,

    /// Concurrent connections. Closed loop (no --rate): each sends its next request when the
    /// last one ends. Open loop (--rate): the most connections open at once; arrivals that
    /// find none free wait in a queue and their wait counts in their latency.
    #[arg(short = 'c', long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..),
          help_heading = LOAD)]
    pub connections: u32,

    /// Open loop: start this many requests per second in total, evenly spaced, whatever the
    /// server's speed; latency is measured from each request's intended start time.
    #[arg(long, value_name = "PER_SECOND", value_parser = parse_rate, help_heading = LOAD)]
    pub rate: Option<f64>,

    /// Speak HTTP/2: ALPN h2 over TLS (https://, offered alone unless --alpn says otherwise),
    /// prior knowledge (h2c) on http:// URLs. Closed loop only (no --rate); the reference
    /// probe stays on HTTP/1.1.
    #[arg(long, help_heading = LOAD)]
    pub h2: bool,

    /// With --h2: streams each connection keeps in flight, like h2load -m; the concurrency is
    /// -c × -m requests.
    #[arg(short = 'm', long, default_value_t = 1, requires = "h2",
          value_parser = clap::value_parser!(u32).range(1..=1024), help_heading = LOAD)]
    pub streams: u32,

    /// Requests per connection: 1 = a new connection and full handshake per request,
    /// 0 = keep-alive for the whole run. The last request of a connection says `Connection: close`.
    #[arg(long, default_value_t = 0, help_heading = LOAD)]
    pub requests_per_conn: u64,

    /// Measured duration in seconds (fractions allowed).
    #[arg(short = 'd', long, default_value = "10", value_parser = parse_secs, help_heading = LOAD)]
    pub duration: Duration,

    /// Warm-up in seconds at full load before the measured window (after any ramp); not
    /// reported.
    #[arg(long, default_value = "1", value_parser = parse_secs, help_heading = LOAD)]
    pub warmup: Duration,

    /// Ramp-up in seconds before the warm-up: the rate (or the concurrency) climbs in up to
    /// ten equal stairs to the full value. Not reported.
    #[arg(long, default_value = "0", value_parser = parse_secs, help_heading = LOAD)]
    pub ramp: Duration,

    /// A request (connect, handshake, queueing and response included) slower than this is a
    /// timeout error, never a latency sample.
    #[arg(long, default_value = "2", value_parser = parse_secs, help_heading = LOAD)]
    pub timeout: Duration,

    /// Client threads; each runs its own current-thread event loop with its share of the
    /// connections (and of the rate).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024),
          help_heading = LOAD)]
    pub threads: u32,

    /// CPUs to pin the client threads to, e.g. "1" or "2,3" or "4-7"; thread i gets entry i mod n.
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list, help_heading = LOAD)]
    pub cpus: Option<CpuList>,

    /// Do not verify the server certificate chain or name; handshake signatures are still
    /// checked, as a real client does. This is the default unless --cacert is given.
    #[arg(short = 'k', long, conflicts_with = "cacert", help_heading = TLS)]
    pub insecure: bool,

    /// Do not check the server's handshake signature either (implies --insecure). The server
    /// still signs every full handshake; the client saves the verification (for ECDSA P-256,
    /// about a quarter of its CPU per handshake) but no longer notices a server that sends a
    /// wrong signature. For driving the most handshakes from a core, not for conformance.
    #[arg(long, conflicts_with = "cacert", help_heading = TLS)]
    pub no_signature_check: bool,

    /// Verify the server certificate chain and name against the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE", help_heading = TLS)]
    pub cacert: Option<PathBuf>,

    /// Server name to send in SNI (and verify with --cacert); defaults to the URL's host name.
    #[arg(long, value_name = "NAME", help_heading = TLS)]
    pub sni: Option<String>,

    /// The client TLS library: rustls (aws-lc-rs), or the system OpenSSL, which also speaks
    /// static RSA, DHE and CBC suites and TLS 1.0/1.1 (builds with the `openssl-engine` feature,
    /// the default of the `tern` binary).
    #[arg(long, value_enum, default_value = "rustls", help_heading = TLS)]
    pub tls_engine: TlsEngine,

    /// Offer only this TLS version; default: offer 1.3 and 1.2 and let the server choose. 1.0 and
    /// 1.1 need --tls-engine openssl.
    #[arg(long, value_enum, help_heading = TLS)]
    pub tls_version: Option<TlsVersion>,

    /// Key exchange groups to offer, comma-separated, in preference order (the first gets a key
    /// share).
    #[arg(long = "group", visible_alias = "groups", value_enum, value_delimiter = ',',
          default_value = "x25519", value_name = "LIST", help_heading = TLS)]
    pub groups: Vec<KxGroup>,

    /// Handshakes each client thread makes with one X25519/P-256/P-384 key pair before it
    /// makes a new one. The server's work is the same either way (its own fresh key pair, the
    /// shared secret, the signature); only the client's key generation is saved. 1 = a fresh
    /// key pair per handshake, as a browser does.
    #[arg(long, default_value_t = 100, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..), help_heading = TLS)]
    pub key_share_reuse: u32,

    /// Cipher suites to offer, comma-separated, e.g. TLS_AES_256_GCM_SHA384 (IANA/OpenSSL TLS 1.3
    /// names or rustls names); default: every suite of the provider. With --tls-engine openssl:
    /// OpenSSL cipher strings for TLS 1.2 and below (AES128-SHA, DHE-RSA-AES128-GCM-SHA256,
    /// ECDHE-RSA-AES128-SHA, or a string like AES128-SHA:AES256-SHA) and TLS_* names for TLS 1.3;
    /// as with rustls, TLS 1.3 is offered only if a TLS 1.3 suite is listed.
    #[arg(long = "cipher", visible_alias = "ciphers", value_delimiter = ',', value_name = "LIST",
          help_heading = TLS)]
    pub ciphers: Vec<String>,

    /// Signature schemes to offer (the `signature_algorithms` extension), comma-separated, e.g.
    /// ecdsa_secp256r1_sha256, rsa_pss_rsae_sha256, rsa_pkcs1_sha256, ed25519; default: all
    /// the provider verifies.
    #[arg(long = "sigalg", visible_alias = "sigalgs", value_enum, value_delimiter = ',',
          value_name = "LIST", help_heading = TLS)]
    pub sigalgs: Vec<SigAlg>,

    /// ALPN protocols to offer, comma-separated, e.g. http/1.1; default: no ALPN extension, or
    /// h2 with --h2 (which needs h2 in the list).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = TLS)]
    pub alpn: Vec<String>,

    /// TLS session resumption (off by default: every handshake is full, and a resumed one
    /// aborts the run). `ticket`: TLS 1.3 tickets, and TLS 1.2 tickets (or session IDs if the
    /// server issues no tickets); `id`: TLS 1.2 session IDs only (needs --tls-version 1.2).
    #[arg(long, value_enum, help_heading = TLS)]
    pub resume: Option<ResumeMode>,

    /// Share of new connections that try to resume (0 to 1; default 1 with --resume); the
    /// others do full handshakes. Full and resumed handshakes are counted as they happen.
    #[arg(long, value_name = "SHARE", value_parser = parse_ratio, requires = "resume",
          help_heading = TLS)]
    pub resume_ratio: Option<f64>,

    /// Reference probe: also send a low-rate open-loop stream of requests straight to this URL
    /// (usually the backend behind the balancer), on its own connections and thread, reported
    /// separately, so the latency the balancer adds shows.
    #[arg(long, value_name = "URL", value_parser = Target::parse, help_heading = REFERENCE)]
    pub ref_url: Option<Target>,

    /// Requests per second of the reference probe.
    #[arg(long, default_value = "10", value_name = "PER_SECOND", value_parser = parse_rate,
          requires = "ref_url", help_heading = REFERENCE)]
    pub ref_rate: f64,

    /// CPU to pin the reference probe's thread to; default: not pinned (it inherits the
    /// process's CPU mask).
    #[arg(long, value_name = "CPU", requires = "ref_url", help_heading = REFERENCE)]
    pub ref_cpu: Option<usize>,

    /// Also write the report as JSON to this file (schema: crates/tern-bench/JSON.md).
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub json: Option<PathBuf>,

    /// No live progress on stderr (the report still goes to stdout).
    #[arg(short = 'q', long, help_heading = OUTPUT)]
    pub quiet: bool,

    /// The SLO search (`--find-max` and its options), see [`crate::slo`].
    #[command(flatten)]
    pub slo: crate::slo::SloArgs,
}

/// Parses `tern bench`'s own arguments (without the program or subcommand name).
#[derive(Debug, Parser)]
#[command(name = "tern bench", no_binary_name = true)]
struct Standalone {
    #[command(flatten)]
    args: BenchArgs,
}

impl BenchArgs {
    /// Parses options as written on the command line after `tern bench`, e.g.
    /// `["https://127.0.0.1:8443/", "-c", "32"]`.
    pub fn from_args<I, T>(args: I) -> Result<BenchArgs, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Standalone::try_parse_from(args).map(|s| s.args)
    }

    /// The ALPN protocols the main load offers: `--alpn`, or `h2` alone with `--h2`.
    pub fn offered_alpn(&self) -> Vec<String> {
        if self.h2 && self.alpn.is_empty() {
            vec!["h2".to_owned()]
        } else {
            self.alpn.clone()
        }
    }

    /// The resumption share in effect: 0 without `--resume`, else `--resume-ratio` or 1.
    pub fn resume_share(&self) -> f64 {
        match self.resume {
            None => 0.0,
            Some(_) => self.resume_ratio.unwrap_or(1.0),
        }
    }
}

/// The TLS library of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TlsEngine {
    /// rustls on aws-lc-rs (TLS 1.2 with ECDHE and AEAD suites, TLS 1.3).
    Rustls,
    /// The system OpenSSL (feature `openssl-engine`): also static RSA, DHE, CBC, TLS 1.0/1.1.
    Openssl,
}

impl TlsEngine {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            TlsEngine::Rustls => "rustls",
            TlsEngine::Openssl => "openssl",
        }
    }
}

/// TLS protocol version to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TlsVersion {
    /// TLS 1.0 only (--tls-engine openssl).
    #[value(name = "1.0")]
    Tls10,
    /// TLS 1.1 only (--tls-engine openssl).
    #[value(name = "1.1")]
    Tls11,
    /// TLS 1.2 only.
    #[value(name = "1.2")]
    Tls12,
    /// TLS 1.3 only.
    #[value(name = "1.3")]
    Tls13,
}

impl TlsVersion {
    /// The name used in reports: "1.0" … "1.3".
    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::Tls10 => "1.0",
            TlsVersion::Tls11 => "1.1",
            TlsVersion::Tls12 => "1.2",
            TlsVersion::Tls13 => "1.3",
        }
    }
}

/// A key exchange group the client can offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KxGroup {
    /// X25519 (the usual default).
    X25519,
    /// NIST P-256 (secp256r1).
    #[value(alias = "secp256r1")]
    P256,
    /// NIST P-384 (secp384r1).
    #[value(alias = "secp384r1")]
    P384,
    /// The X25519 + ML-KEM-768 post-quantum hybrid (TLS 1.3 only).
    #[value(name = "x25519mlkem768")]
    X25519mlkem768,
    /// The P-256 + ML-KEM-768 post-quantum hybrid (TLS 1.3 only).
    #[value(name = "secp256r1mlkem768")]
    P256mlkem768,
    /// ML-KEM-768 alone (TLS 1.3 only).
    #[value(name = "mlkem768")]
    Mlkem768,
}

/// A signature scheme the client can offer (names as in RFC 8446, lower case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SigAlg {
    #[value(name = "ecdsa_secp256r1_sha256")]
    EcdsaSecp256r1Sha256,
    #[value(name = "ecdsa_secp384r1_sha384")]
    EcdsaSecp384r1Sha384,
    #[value(name = "ecdsa_secp521r1_sha512")]
    EcdsaSecp521r1Sha512,
    #[value(name = "rsa_pss_rsae_sha256")]
    RsaPssRsaeSha256,
    #[value(name = "rsa_pss_rsae_sha384")]
    RsaPssRsaeSha384,
    #[value(name = "rsa_pss_rsae_sha512")]
    RsaPssRsaeSha512,
    #[value(name = "rsa_pkcs1_sha256")]
    RsaPkcs1Sha256,
    #[value(name = "rsa_pkcs1_sha384")]
    RsaPkcs1Sha384,
    #[value(name = "rsa_pkcs1_sha512")]
    RsaPkcs1Sha512,
    #[value(name = "ed25519")]
    Ed25519,
}

/// How `--resume` resumes sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResumeMode {
    /// TLS 1.3 tickets (PSK); TLS 1.2 tickets, or session IDs when the server sends no ticket.
    Ticket,
    /// TLS 1.2 session IDs only (TLS 1.3 has no session IDs).
    Id,
}

impl ResumeMode {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ResumeMode::Ticket => "ticket",
            ResumeMode::Id => "id",
        }
    }
}

/// The name clap uses for a value of a `ValueEnum` (for reports).
pub fn value_name<T: ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
