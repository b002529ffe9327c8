//! TLS handshake counters of one frontend: what was negotiated, why handshakes failed, how long
//! they took, and what handshake admission did.
//!
//! Counted per frontend (over all its binds), like the other frontend counters: the frontend is
//! the unit of configuration that operators read stats by, and a per-bind split would multiply
//! the table for the rare frontend with several TLS binds. Like every counter, each worker owns
//! its block and bumps it with relaxed atomics; the tables are fixed arrays indexed by small
//! integers, so a handshake costs a handful of uncontended increments and no allocation.
//!
//! Latency buckets are fixed and log-spaced (1-2-5 steps from 100 µs to 5 s); a handshake counts
//! in the first bucket whose bound it does not exceed. The time runs from the accept to the end
//! of the handshake as the server sees it (so it includes the client's round trips), minus any
//! wait for the handshake rate cap.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rustls::{CipherSuite, HandshakeKind, NamedGroup, ProtocolVersion, SignatureAlgorithm};

use crate::stats::bump;

/// Protocol versions counted (then "other"); TLS 1.0 and 1.1 on OpenSSL binds only.
const VERSIONS: [(ProtocolVersion, &str); 4] = [
    (ProtocolVersion::TLSv1_2, "tls12"),
    (ProtocolVersion::TLSv1_3, "tls13"),
    (ProtocolVersion::TLSv1_0, "tls10"),
    (ProtocolVersion::TLSv1_1, "tls11"),
];

/// Key-exchange groups counted (then "none": a TLS 1.2 resumption or a static-RSA suite
/// exchanges no ephemeral key, and "other"). The last five are OpenSSL binds' only (its
/// default groups, and DHE: TLS 1.2 DHE is counted by the size of the bind's parameters,
/// RFC 7919 ffdhe2048 unless `dh_param_file` says otherwise).
const GROUPS: [(NamedGroup, &str); 12] = [
    (NamedGroup::X25519, "x25519"),
    (NamedGroup::secp256r1, "p256"),
    (NamedGroup::secp384r1, "p384"),
    (NamedGroup::X25519MLKEM768, "x25519mlkem768"),
    (NamedGroup::secp256r1MLKEM768, "p256mlkem768"),
    (NamedGroup::MLKEM768, "mlkem768"),
    (NamedGroup::MLKEM1024, "mlkem1024"),
    (NamedGroup::secp521r1, "p521"),
    (NamedGroup::X448, "x448"),
    (NamedGroup::FFDHE2048, "ffdhe2048"),
    (NamedGroup::FFDHE3072, "ffdhe3072"),
    (NamedGroup::FFDHE4096, "ffdhe4096"),
];

/// Certificate key types counted for full handshakes (then "other").
const CERTS: [(SignatureAlgorithm, &str); 3] = [
    (SignatureAlgorithm::RSA, "rsa"),
    (SignatureAlgorithm::ECDSA, "ecdsa"),
    (SignatureAlgorithm::ED25519, "ed25519"),
];

/// Why a handshake failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// No cipher suite, key-exchange group or signature scheme in common.
    NoSharedCipher,
    /// No protocol version in common.
    Version,
    /// The client refused our certificate (its alert).
    BadCertificate,
    /// No certificate for the requested name (`strict_sni`).
    UnknownSni,
    Timeout,
    /// Not TLS, or TLS out of order (plain HTTP on a TLS port lands here).
    Protocol,
    /// Anything else: the client closed, a reset, other alerts.
    Other,
    /// mTLS (`client_auth`): `required` and the client sent no certificate.
    ClientNoCert,
    /// mTLS: the client's certificate does not chain to the bind's `ca`.
    ClientUnknownCa,
    /// mTLS: the client's certificate is listed in a `crl`.
    ClientRevoked,
    /// mTLS: the client's certificate has expired.
    ClientExpired,
    /// mTLS: the client's certificate was refused for another reason (not yet valid, wrong
    /// key usage, bad signature, revocation status unknown, ...).
    ClientCertOther,
}

const FAILURES: [&str; 12] = [
    "no_shared_cipher",
    "version",
    "bad_certificate",
    "unknown_sni",
    "timeout",
    "protocol",
    "other",
    "client_no_cert",
    "client_unknown_ca",
    "client_revoked",
    "client_expired",
    "client_cert_other",
];

/// Upper bounds of the latency buckets, in microseconds (then one unbounded bucket).
const LATENCY_US: [u64; 15] = [
    100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
    1_000_000, 2_000_000, 5_000_000,
];

const SUITES: usize = 9;

/// The TLS 1.2-and-below suites only OpenSSL binds negotiate, counted after the provider's:
/// those OpenSSL offers with an RSA or ECDSA certificate once tern's exclusions apply (no RC4,
/// 3DES, NULL, export, anonymous or MD5), CAMELLIA, ARIA and CCM aside ("other").
const LEGACY_SUITES: [CipherSuite; 21] = [
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
    CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384,
    CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
    CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
    CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
    CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384,
    CipherSuite::TLS_DHE_RSA_WITH_AES_128_GCM_SHA256,
    CipherSuite::TLS_DHE_RSA_WITH_AES_256_GCM_SHA384,
    CipherSuite::TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    CipherSuite::TLS_DHE_RSA_WITH_AES_128_CBC_SHA,
    CipherSuite::TLS_DHE_RSA_WITH_AES_256_CBC_SHA,
    CipherSuite::TLS_DHE_RSA_WITH_AES_128_CBC_SHA256,
    CipherSuite::TLS_DHE_RSA_WITH_AES_256_CBC_SHA256,
    CipherSuite::TLS_RSA_WITH_AES_128_GCM_SHA256,
    CipherSuite::TLS_RSA_WITH_AES_256_GCM_SHA384,
    CipherSuite::TLS_RSA_WITH_AES_128_CBC_SHA,
    CipherSuite::TLS_RSA_WITH_AES_256_CBC_SHA,
    CipherSuite::TLS_RSA_WITH_AES_128_CBC_SHA256,
    CipherSuite::TLS_RSA_WITH_AES_256_CBC_SHA256,
];

/// What admission did (see `admission.rs`).
const ADMISSION: [&str; 6] = [
    "rate_delayed",
    "rate_expired",
    "source_refused",
    "resume_offers",
    "resume_fallbacks",
    "rate_abandoned",
];

/// What admission did to one connection.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AdmissionEvent {
    /// A full handshake waited for the rate cap.
    RateDelayed = 0,
    /// Closed after waiting for the rate cap past the handshake timeout.
    RateExpired = 1,
    /// Refused at once: the source was over its budget.
    SourceRefused = 2,
    /// Let through without a token: the ClientHello offered resumption.
    ResumeOffer = 3,
    /// Offered resumption but the handshake was full (charged after the fact).
    ResumeFallback = 4,
    /// The client closed while waiting for the rate cap: no token spent, no handshake.
    RateAbandoned = 5,
}

/// The cipher suites counted, in a fixed order: the provider's, then [`LEGACY_SUITES`].
fn suites() -> impl Iterator<Item = CipherSuite> {
    rustls::crypto::aws_lc_rs::ALL_CIPHER_SUITES
        .iter()
        .map(|s| s.suite())
        .take(SUITES)
        .chain(LEGACY_SUITES)
}

fn index_of<T: PartialEq>(table: impl IntoIterator<Item = T>, value: T) -> Option<usize> {
    table.into_iter().position(|t| t == value)
}

/// One handshake's outcome, as the connection reports it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Negotiated {
    pub kind: Option<HandshakeKind>,
    pub version: Option<ProtocolVersion>,
    pub suite: Option<CipherSuite>,
    pub group: Option<NamedGroup>,
    pub cert: Option<SignatureAlgorithm>,
    pub latency: Duration,
}

/// The TLS counters of one frontend in one worker. Index 0 of the first dimension is full
/// handshakes, 1 resumed ones; the last entry of each table is "other" (and "none" before it
/// for groups).
#[derive(Debug, Default)]
pub struct TlsCounters {
    versions: [[AtomicU64; VERSIONS.len() + 1]; 2],
    suites: [[AtomicU64; SUITES + LEGACY_SUITES.len() + 1]; 2],
    groups: [[AtomicU64; GROUPS.len() + 2]; 2],
    certs: [AtomicU64; CERTS.len() + 1],
    failures: [AtomicU64; FAILURES.len()],
    latency: [AtomicU64; LATENCY_US.len() + 1],
    admission: [AtomicU64; ADMISSION.len()],
}

impl TlsCounters {
    /// Counts a completed handshake.
    pub(crate) fn completed(&self, n: &Negotiated) {
        let resumed = usize::from(n.kind == Some(HandshakeKind::Resumed));
        let other = |len: usize, i: Option<usize>| i.unwrap_or(len - 1);
        let v = &self.versions[resumed];
        bump(
            &v[other(
                v.len(),
                n.version.and_then(|x| index_of(VERSIONS.map(|e| e.0), x)),
            )],
        );
        let s = &self.suites[resumed];
        bump(&s[other(s.len(), n.suite.and_then(|x| index_of(suites(), x)))]);
        let g = &self.groups[resumed];
        let gi = match n.group {
            None => GROUPS.len(),
            Some(x) => index_of(GROUPS.map(|e| e.0), x).unwrap_or(GROUPS.len() + 1),
        };
        bump(&g[gi]);
        if resumed == 0 {
            let c = &self.certs;
            bump(
                &c[other(
                    c.len(),
                    n.cert.and_then(|x| index_of(CERTS.map(|e| e.0), x)),
                )],
            );
        }
        let us = u64::try_from(n.latency.as_micros()).unwrap_or(u64::MAX);
        let bucket = LATENCY_US.partition_point(|&bound| bound < us);
        bump(&self.latency[bucket]);
    }

    pub(crate) fn failed(&self, why: Failure) {
        bump(&self.failures[why as usize]);
    }

    pub(crate) fn admission(&self, what: AdmissionEvent) {
        bump(&self.admission[what as usize]);
    }

    pub(crate) fn add_to(&self, snap: &mut TlsSnapshot) {
        let add = |dst: &mut Vec<u64>, src: &[AtomicU64]| {
            dst.resize(src.len(), 0);
            for (d, s) in dst.iter_mut().zip(src) {
                *d += s.load(Ordering::Relaxed);
            }
        };
        add(&mut snap.full.versions, &self.versions[0]);
        add(&mut snap.resumed.versions, &self.versions[1]);
        add(&mut snap.full.suites, &self.suites[0]);
        add(&mut snap.resumed.suites, &self.suites[1]);
        add(&mut snap.full.groups, &self.groups[0]);
        add(&mut snap.resumed.groups, &self.groups[1]);
        add(&mut snap.certs, &self.certs);
        add(&mut snap.failures, &self.failures);
        add(&mut snap.latency, &self.latency);
        add(&mut snap.admission, &self.admission);
    }
}

fn add_all(dst: &mut Vec<u64>, src: &[u64]) {
    if dst.len() < src.len() {
        dst.resize(src.len(), 0);
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d += s;
    }
}

impl KindSnapshot {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Self) {
        add_all(&mut self.versions, &other.versions);
        add_all(&mut self.suites, &other.suites);
        add_all(&mut self.groups, &other.groups);
    }
}

impl TlsSnapshot {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Self) {
        self.full.add(&other.full);
        self.resumed.add(&other.resumed);
        add_all(&mut self.certs, &other.certs);
        add_all(&mut self.failures, &other.failures);
        add_all(&mut self.latency, &other.latency);
        add_all(&mut self.admission, &other.admission);
    }
}

/// One handshake kind's counts, summed over workers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindSnapshot {
    pub versions: Vec<u64>,
    pub suites: Vec<u64>,
    pub groups: Vec<u64>,
}

/// A frontend's TLS counters summed over workers; [`TlsSnapshot::lines`] names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsSnapshot {
    pub full: KindSnapshot,
    pub resumed: KindSnapshot,
    pub certs: Vec<u64>,
    pub failures: Vec<u64>,
    pub latency: Vec<u64>,
    pub admission: Vec<u64>,
}

type Fields = Vec<(String, u64)>;

fn named(prefix: &str, names: impl IntoIterator<Item = String>, values: &[u64]) -> Fields {
    names
        .into_iter()
        .zip(values)
        .map(|(n, &v)| (format!("{prefix}{n}"), v))
        .collect()
}

impl TlsSnapshot {
    /// The `name=value` pairs of the exit summary, in three lines: `tls` (versions, groups,
    /// certificate types, failures, admission), `tls_suites` and `tls_latency`.
    pub fn lines(&self) -> [(&'static str, Fields); 3] {
        let versions = || {
            VERSIONS
                .iter()
                .map(|v| v.1.to_owned())
                .chain(["other".into()])
        };
        let groups = || {
            GROUPS
                .iter()
                .map(|g| g.1.to_owned())
                .chain(["none".into(), "other".into()])
        };
        let suite_names = || {
            suites()
                .map(|s| s.as_str().unwrap_or("unknown").to_owned())
                .chain(["other".into()])
        };
        let mut tls = named("full_", versions(), &self.full.versions);
        tls.extend(named("resumed_", versions(), &self.resumed.versions));
        tls.extend(named("full_", groups(), &self.full.groups));
        tls.extend(named("resumed_", groups(), &self.resumed.groups));
        let certs = CERTS.iter().map(|c| c.1.to_owned()).chain(["other".into()]);
        tls.extend(named("cert_", certs, &self.certs));
        tls.extend(named("fail_", FAILURES.map(str::to_owned), &self.failures));
        tls.extend(named("", ADMISSION.map(str::to_owned), &self.admission));
        let mut suites = named("full_", suite_names(), &self.full.suites);
        suites.extend(named("resumed_", suite_names(), &self.resumed.suites));
        let bounds = LATENCY_US
            .iter()
            .map(|&us| match us {
                us if us >= 1_000_000 => format!("le_{}s", us / 1_000_000),
                us if us >= 1_000 => format!("le_{}ms", us / 1_000),
                us => format!("le_{us}us"),
            })
            .chain(["gt_5s".to_owned()]);
        let latency = named("", bounds, &self.latency);
        [
            ("tls", tls),
            ("tls_suites", suites),
            ("tls_latency", latency),
        ]
    }
}

#[cfg(test)]
mod tests;
