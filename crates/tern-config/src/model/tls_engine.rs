//! Which TLS library terminates a bind (`tls.engine`), and what the OpenSSL engine negotiates.
//!
//! rustls is the default and the only engine of the strict policy (TLS 1.2 and 1.3, ECDHE,
//! AEAD suites: `tls_names.rs`). The OpenSSL engine exists for legacy clients rustls cannot
//! serve: static RSA and DHE key exchange, AES-CBC suites, TLS 1.0 and 1.1. Its cipher lists
//! are OpenSSL strings, kept as written (OpenSSL evaluates their rules), but never with a
//! suite of the refused families ([`banned_cipher`]): those are configuration errors, and the
//! TLS crate appends their exclusions to whatever string it hands to OpenSSL.

use std::path::PathBuf;

use super::tls_names::{KxGroup, Named, SigAlg};

/// The TLS library of a bind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TlsEngine {
    /// rustls with aws-lc-rs: the policy of [`super::TlsPolicy`].
    #[default]
    Rustls,
    /// The system's OpenSSL (a cargo feature of the `tern` binary, on by default).
    OpenSsl(OpensslPolicy),
}

/// What a bind with `engine = "openssl"` negotiates (ALPN and cipher preference stay in
/// [`super::TlsPolicy`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpensslPolicy {
    pub min_version: OsslVersion,
    pub max_version: OsslVersion,
    /// The TLS 1.2-and-below cipher string (`ciphers`, joined with `:`); `None`: OpenSSL's
    /// `DEFAULT`. tern's exclusions are appended either way.
    pub ciphers: Option<String>,
    /// The TLS 1.3 suites (`suites`, joined with `:`); `None`: OpenSSL's default.
    pub suites: Option<String>,
    /// DH parameters for DHE suites (`dh_param_file`, PEM); `None`: RFC 7919 ffdhe2048.
    pub dh_param_file: Option<PathBuf>,
    /// Key exchange groups (`groups`, the rustls engine's names); `None`: OpenSSL's default.
    pub groups: Option<Vec<KxGroup>>,
    /// Signature schemes the server signs with (`sigalgs`); `None`: OpenSSL's default.
    pub sigalgs: Option<Vec<SigAlg>>,
}

impl OpensslPolicy {
    /// Whether the bind accepts versions below TLS 1.2 (OpenSSL's security level is lowered
    /// to 0 on it, and `tern check` warns).
    pub fn below_tls12(&self) -> bool {
        self.min_version < OsslVersion::Tls12
    }
}

impl Default for OpensslPolicy {
    fn default() -> Self {
        Self {
            min_version: OsslVersion::Tls12,
            max_version: OsslVersion::Tls13,
            ciphers: None,
            suites: None,
            dh_param_file: None,
            groups: None,
            sigalgs: None,
        }
    }
}

/// A protocol version of the OpenSSL engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OsslVersion {
    Tls10,
    Tls11,
    Tls12,
    Tls13,
}

impl Named for OsslVersion {
    const ALL: &'static [Self] = &[Self::Tls10, Self::Tls11, Self::Tls12, Self::Tls13];

    fn names(self) -> &'static [&'static str] {
        match self {
            Self::Tls10 => &["1.0", "TLSv1.0", "TLSv1"],
            Self::Tls11 => &["1.1", "TLSv1.1"],
            Self::Tls12 => &["1.2", "TLSv1.2"],
            Self::Tls13 => &["1.3", "TLSv1.3"],
        }
    }
}

/// Why a cipher-string element that would enable suites is refused, whatever the engine:
/// `None` when it may be given to OpenSSL. Exclusions (`!RC4`, `-MD5`) are always fine.
///
/// Matching is by substring of the upper-cased element, as OpenSSL's names and aliases carry
/// these words (`RC4-SHA`, `ECDHE-RSA-DES-CBC3-SHA`, `EXP-RC4-MD5`, `ADH-AES128-SHA`, `eNULL`).
pub fn banned_cipher(element: &str) -> Option<&'static str> {
    if element.starts_with(['!', '-']) {
        return None;
    }
    let upper = element.to_ascii_uppercase();
    let has = |word: &str| upper.contains(word);
    if has("RC4") {
        Some("RC4 is prohibited in TLS by RFC 7465")
    } else if has("EXP") {
        Some("export-grade suites are broken by design (FREAK, Logjam; RFC 7568)")
    } else if has("ANULL") || has("ADH") || has("AECDH") || has("ANON") {
        Some("anonymous suites authenticate no server (RFC 7457)")
    } else if has("NULL") {
        Some("NULL suites do not encrypt (RFC 7457)")
    } else if has("DES") {
        Some("DES and 3DES use 64-bit blocks (Sweet32, CVE-2016-2183; RFC 8429)")
    } else if has("MD5") {
        Some("MD5 is broken (RFC 6151)")
    } else {
        None
    }
}

/// The exclusions appended to every cipher string given to OpenSSL, so that no rule
/// (`ALL`, `COMPLEMENTOFALL`, `@SECLEVEL=0`) can bring a refused family back.
pub const CIPHER_EXCLUSIONS: &str = "!aNULL:!eNULL:!EXP:!RC4:!DES:!3DES:!MD5";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_families_are_named_and_exclusions_pass() {
        assert!(banned_cipher("RC4-SHA").is_some_and(|r| r.contains("RFC 7465")));
        assert!(banned_cipher("ECDHE-RSA-RC4-SHA").is_some());
        for name in [
            "NULL-SHA",
            "eNULL",
            "aNULL",
            "ADH-AES128-SHA",
            "AECDH-AES256-SHA",
            "EXP-RC4-MD5",
            "EXPORT",
            "DES-CBC3-SHA",
            "3DES",
            "ECDHE-RSA-DES-CBC3-SHA",
            "NULL-MD5",
            "MD5",
        ] {
            assert!(banned_cipher(name).is_some(), "{name} passed");
        }
        for name in [
            "!RC4",
            "-MD5",
            "!aNULL",
            "AES128-SHA",
            "DHE-RSA-AES128-GCM-SHA256",
            "ECDHE-RSA-AES128-SHA256",
            "HIGH",
            "ALL",
            "@SECLEVEL=0",
        ] {
            assert_eq!(banned_cipher(name), None, "{name} refused");
        }
    }
}
