//! The names of the TLS parameters tern supports: every spelling accepted in the configuration
//! (IANA names, and OpenSSL's where they differ), the first being the one tern prints.
//!
//! Matching ignores ASCII case. Only what the provider (aws-lc-rs through rustls) implements and
//! tern's policy allows is listed: no CBC suites, no static RSA key exchange, no TLS below 1.2.

/// A parameter with a fixed set of named values.
pub trait Named: Copy + Sized + 'static {
    /// Every value, in tern's default preference order.
    const ALL: &'static [Self];

    /// Accepted spellings; the first is canonical.
    fn names(self) -> &'static [&'static str];

    /// The canonical name.
    fn name(self) -> &'static str {
        self.names().first().copied().unwrap_or("?")
    }

    /// The value named `text` (any accepted spelling, any ASCII case).
    fn from_name(text: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.names().iter().any(|n| n.eq_ignore_ascii_case(text)))
    }

    /// The canonical names, for error messages.
    fn supported() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|v| v.name()).collect();
        names.join(", ")
    }
}

/// A TLS protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

impl Named for TlsVersion {
    const ALL: &'static [Self] = &[Self::Tls12, Self::Tls13];

    fn names(self) -> &'static [&'static str] {
        match self {
            Self::Tls12 => &["1.2", "TLSv1.2"],
            Self::Tls13 => &["1.3", "TLSv1.3"],
        }
    }
}

/// A TLS 1.2 cipher suite: ECDHE key exchange, AEAD cipher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tls12Cipher {
    EcdheEcdsaAes128Gcm,
    EcdheRsaAes128Gcm,
    EcdheEcdsaAes256Gcm,
    EcdheRsaAes256Gcm,
    EcdheEcdsaChacha20,
    EcdheRsaChacha20,
}

impl Named for Tls12Cipher {
    const ALL: &'static [Self] = &[
        Self::EcdheEcdsaAes128Gcm,
        Self::EcdheRsaAes128Gcm,
        Self::EcdheEcdsaAes256Gcm,
        Self::EcdheRsaAes256Gcm,
        Self::EcdheEcdsaChacha20,
        Self::EcdheRsaChacha20,
    ];

    fn names(self) -> &'static [&'static str] {
        match self {
            Self::EcdheEcdsaAes128Gcm => &[
                "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                "ECDHE-ECDSA-AES128-GCM-SHA256",
            ],
            Self::EcdheRsaAes128Gcm => &[
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256",
            ],
            Self::EcdheEcdsaAes256Gcm => &[
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                "ECDHE-ECDSA-AES256-GCM-SHA384",
            ],
            Self::EcdheRsaAes256Gcm => &[
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                "ECDHE-RSA-AES256-GCM-SHA384",
            ],
            Self::EcdheEcdsaChacha20 => &[
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "ECDHE-ECDSA-CHACHA20-POLY1305",
            ],
            Self::EcdheRsaChacha20 => &[
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                "ECDHE-RSA-CHACHA20-POLY1305",
            ],
        }
    }
}

/// A TLS 1.3 cipher suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tls13Suite {
    Aes128Gcm,
    Aes256Gcm,
    Chacha20,
}

impl Named for Tls13Suite {
    const ALL: &'static [Self] = &[Self::Aes128Gcm, Self::Aes256Gcm, Self::Chacha20];

    fn names(self) -> &'static [&'static str] {
        match self {
            Self::Aes128Gcm => &["TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"],
            Self::Aes256Gcm => &["TLS_AES_256_GCM_SHA384", "TLS13_AES_256_GCM_SHA384"],
            Self::Chacha20 => &[
                "TLS_CHACHA20_POLY1305_SHA256",
                "TLS13_CHACHA20_POLY1305_SHA256",
            ],
        }
    }
}

/// A key exchange group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KxGroup {
    X25519,
    X25519Mlkem768,
    Secp256r1,
    Secp384r1,
}

impl Named for KxGroup {
    const ALL: &'static [Self] = &[
        Self::X25519,
        Self::X25519Mlkem768,
        Self::Secp256r1,
        Self::Secp384r1,
    ];

    fn names(self) -> &'static [&'static str] {
        match self {
            Self::X25519 => &["x25519"],
            Self::X25519Mlkem768 => &["X25519MLKEM768"],
            Self::Secp256r1 => &["secp256r1", "P-256", "prime256v1"],
            Self::Secp384r1 => &["secp384r1", "P-384"],
        }
    }
}

/// A signature scheme the server may sign its handshakes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SigAlg {
    EcdsaP256Sha256,
    EcdsaP384Sha384,
    Ed25519,
    RsaPssSha256,
    RsaPssSha384,
    RsaPssSha512,
    RsaPkcs1Sha256,
    RsaPkcs1Sha384,
    RsaPkcs1Sha512,
}

impl Named for SigAlg {
    const ALL: &'static [Self] = &[
        Self::EcdsaP256Sha256,
        Self::EcdsaP384Sha384,
        Self::Ed25519,
        Self::RsaPssSha256,
        Self::RsaPssSha384,
        Self::RsaPssSha512,
        Self::RsaPkcs1Sha256,
        Self::RsaPkcs1Sha384,
        Self::RsaPkcs1Sha512,
    ];

    fn names(self) -> &'static [&'static str] {
        match self {
            Self::EcdsaP256Sha256 => &["ecdsa_secp256r1_sha256", "ECDSA+SHA256"],
            Self::EcdsaP384Sha384 => &["ecdsa_secp384r1_sha384", "ECDSA+SHA384"],
            Self::Ed25519 => &["ed25519"],
            Self::RsaPssSha256 => &["rsa_pss_rsae_sha256", "RSA-PSS+SHA256"],
            Self::RsaPssSha384 => &["rsa_pss_rsae_sha384", "RSA-PSS+SHA384"],
            Self::RsaPssSha512 => &["rsa_pss_rsae_sha512", "RSA-PSS+SHA512"],
            Self::RsaPkcs1Sha256 => &["rsa_pkcs1_sha256", "RSA+SHA256"],
            Self::RsaPkcs1Sha384 => &["rsa_pkcs1_sha384", "RSA+SHA384"],
            Self::RsaPkcs1Sha512 => &["rsa_pkcs1_sha512", "RSA+SHA512"],
        }
    }
}
