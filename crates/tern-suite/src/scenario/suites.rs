//! The cipher suites a scenario may name, with what each needs and who can do it.
//!
//! A scenario names a suite once, but four programs read it: the client (rustls, IANA names),
//! HAProxy, nginx, stunnel and hitch (OpenSSL names). This table is the single translation, and
//! it records the facts that decide whether a target can run a workload at all: the key exchange
//! (rustls has no static-RSA and no finite-field DHE key exchange, and no CBC suites: those run on
//! the OpenSSL engines of tern and `tern bench`), the certificate type the suite needs, and the
//! protocol version.

use super::TlsVersion;

/// How a suite agrees on keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyExchange {
    /// TLS 1.3: (EC)DHE chosen by the group, independent of the suite.
    Tls13,
    /// TLS 1.2 elliptic-curve Diffie-Hellman.
    Ecdhe,
    /// TLS 1.2 finite-field Diffie-Hellman (DHE-RSA).
    Dhe,
    /// TLS 1.2 static RSA key transport (no forward secrecy).
    Rsa,
}

impl KeyExchange {
    /// Short label used in reports ("ECDHE", "RSA" …).
    pub fn label(self) -> &'static str {
        match self {
            KeyExchange::Tls13 => "TLS 1.3",
            KeyExchange::Ecdhe => "ECDHE",
            KeyExchange::Dhe => "DHE",
            KeyExchange::Rsa => "RSA",
        }
    }
}

/// Which certificate key a TLS 1.2 suite authenticates with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// TLS 1.3 suites work with any certificate.
    Any,
    Rsa,
    Ecdsa,
}

/// One cipher suite.
#[derive(Debug, PartialEq, Eq)]
pub struct Suite {
    /// IANA name (rustls uses these, minus the `TLS13_` spelling).
    pub iana: &'static str,
    /// OpenSSL name, for HAProxy, nginx, stunnel and hitch.
    pub openssl: &'static str,
    pub version: TlsVersion,
    pub kx: KeyExchange,
    pub auth: Auth,
    /// Whether rustls (and so tern and `tern bench`) implements it.
    pub rustls: bool,
}

const fn suite(
    iana: &'static str,
    openssl: &'static str,
    kx: KeyExchange,
    auth: Auth,
    rustls: bool,
) -> Suite {
    let version = match kx {
        KeyExchange::Tls13 => TlsVersion::Tls13,
        _ => TlsVersion::Tls12,
    };
    Suite {
        iana,
        openssl,
        version,
        kx,
        auth,
        rustls,
    }
}

use Auth::{Any, Ecdsa as E, Rsa as R};
use KeyExchange::{Dhe, Ecdhe, Rsa, Tls13};

/// Every suite a scenario may name.
#[rustfmt::skip]
pub static SUITES: &[Suite] = &[
    suite("TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", Tls13, Any, true),
    suite("TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", Tls13, Any, true),
    suite("TLS_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256", Tls13, Any, true),
    suite("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", Ecdhe, R, true),
    suite("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", Ecdhe, R, true),
    suite("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305", Ecdhe, R, true),
    suite("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", Ecdhe, E, true),
    suite("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", Ecdhe, E, true),
    suite("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", Ecdhe, E, true),
    suite("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA", Ecdhe, R, false),
    suite("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA", Ecdhe, R, false),
    suite("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA", Ecdhe, E, false),
    suite("TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "DHE-RSA-AES128-GCM-SHA256", Dhe, R, false),
    suite("TLS_DHE_RSA_WITH_AES_128_CBC_SHA", "DHE-RSA-AES128-SHA", Dhe, R, false),
    suite("TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256", Rsa, R, false),
    suite("TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA", Rsa, R, false),
];

/// Finds a suite by IANA or OpenSSL name (case-insensitive; `TLS13_` accepted for `TLS_`).
pub fn find(name: &str) -> Option<&'static Suite> {
    let name = name.trim();
    let iana = match name.get(..6) {
        Some(p) if p.eq_ignore_ascii_case("TLS13_") => format!("TLS_{}", &name[6..]),
        _ => name.to_owned(),
    };
    SUITES
        .iter()
        .find(|s| s.iana.eq_ignore_ascii_case(&iana) || s.openssl.eq_ignore_ascii_case(name))
}

/// The suite used when a workload names none: what the seed papers used where rustls can.
pub fn default_for(version: TlsVersion, cert_is_rsa: bool) -> &'static Suite {
    let name = match (version, cert_is_rsa) {
        (TlsVersion::Tls13, _) => "TLS_AES_256_GCM_SHA384",
        (TlsVersion::Tls12, true) => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        (TlsVersion::Tls12, false) => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    };
    // The names above are entries of SUITES.
    find(name).unwrap_or(&SUITES[0])
}

/// Names accepted, for error messages.
pub fn names() -> String {
    SUITES.iter().map(|s| s.iana).collect::<Vec<_>>().join(", ")
}
