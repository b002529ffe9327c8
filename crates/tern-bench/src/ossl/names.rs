//! What an OpenSSL connection negotiated, in the names the rustls engine reports, so a report's
//! `tls` object reads the same whichever engine made it: versions as `TLSv1_2`, suites by IANA
//! name (TLS 1.3 ones as `TLS13_…`), groups as `X25519` / `secp256r1`, finite-field groups as
//! `DH2048` (their size: OpenSSL does not say which named group the prime was).

use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::ssl::SslRef;

use crate::stats::TlsParams;

/// The parameters of an established connection.
pub(super) fn params(ssl: &SslRef) -> TlsParams {
    let cipher = ssl.current_cipher();
    let suite = cipher
        .and_then(|c| c.standard_name())
        .map(suite_name)
        .or_else(|| cipher.map(|c| c.name().to_owned()))
        .unwrap_or_else(|| "unknown".to_owned());
    let group = group(ssl);
    let kx = cipher.map(|c| c.description()).unwrap_or_default();
    TlsParams {
        engine: "openssl",
        version: version_name(ssl.version_str()),
        suite,
        key_exchange: key_exchange(&kx, group.as_deref()),
        group: group.unwrap_or_else(|| "none".to_owned()),
        alpn: ssl
            .selected_alpn_protocol()
            .map(|p| String::from_utf8_lossy(p).into_owned()),
    }
}

/// `TLSv1.2` → `TLSv1_2`, `TLSv1` → `TLSv1_0`.
pub(super) fn version_name(openssl: &str) -> String {
    match openssl {
        "TLSv1" => "TLSv1_0".to_owned(),
        other => other.replace('.', "_"),
    }
}

/// IANA names; TLS 1.3 suites (no key exchange in the name) with rustls' `TLS13_` prefix.
pub(super) fn suite_name(iana: &str) -> String {
    let tls13 = ["TLS_AES_", "TLS_CHACHA20_"];
    match tls13.iter().any(|p| iana.starts_with(p)) {
        true => iana.replacen("TLS_", "TLS13_", 1),
        false => iana.to_owned(),
    }
}

/// The server's ephemeral key's group, if the key exchange had one.
fn group(ssl: &SslRef) -> Option<String> {
    let key = ssl.peer_tmp_key().ok()?;
    let name = match key.id() {
        Id::X25519 => "X25519".to_owned(),
        Id::X448 => "X448".to_owned(),
        Id::DH | Id::DHX => format!("DH{}", key.bits()),
        Id::EC => {
            let nid = key.ec_key().ok()?.group().curve_name()?;
            match nid {
                Nid::X9_62_PRIME256V1 => "secp256r1".to_owned(),
                Nid::SECP384R1 => "secp384r1".to_owned(),
                Nid::SECP521R1 => "secp521r1".to_owned(),
                other => other.short_name().unwrap_or("EC").to_owned(),
            }
        }
        _ => "unknown".to_owned(),
    };
    Some(name)
}

/// The key exchange from `SSL_CIPHER_description`'s `Kx=` field (TLS 1.2 and below), or from
/// the group (TLS 1.3, whose suites say `Kx=any`).
pub(super) fn key_exchange(description: &str, group: Option<&str>) -> String {
    let kx = description
        .split_whitespace()
        .find_map(|f| f.strip_prefix("Kx="))
        .unwrap_or("any");
    match kx {
        "RSA" => "RSA".to_owned(),
        "DH" => "DHE".to_owned(),
        "ECDH" => "ECDHE".to_owned(),
        _ => match group {
            Some(g) if g.starts_with("DH") => "DHE".to_owned(),
            Some(g) if g.contains("MLKEM") => "ML-KEM".to_owned(),
            Some(_) => "ECDHE".to_owned(),
            None => kx.to_owned(),
        },
    }
}
