//! TLS settings of a `bind` line and of `ssl-default-bind-*` (HAProxy's OpenSSL vocabulary →
//! tern's `tls` keys).
//!
//! HAProxy passes cipher strings to OpenSSL; tern's default engine (rustls) implements a fixed
//! set (ECDHE with AES-GCM or ChaCha20, TLS 1.2 and 1.3, the groups and signature schemes of
//! docs/configuration.md). A list is therefore filtered: names rustls implements are kept in
//! order, the others are dropped with a warning. OpenSSL *rules* (`HIGH:!aNULL`,
//! `EECDH+AESGCM`) select suites by property and cannot be evaluated here; a list made only of
//! rules keeps tern's default suites (all strong), with a warning.
//!
//! Legacy binds run as written on the OpenSSL engine (`engine = "openssl"`, chosen in
//! `bind.rs`): a list naming only suites rustls lacks (`AES128-SHA`, `DHE-RSA-...`, CBC), or
//! a version below TLS 1.2 (`ssl-min-ver TLSv1.0`, `force-tlsv10`). The whole list is kept as
//! written for OpenSSL ([`TlsOpts::cipher_string`]); a list mixing modern and legacy suites
//! stays on rustls with the legacy ones dropped, so such a bind keeps HTTP/2 and client
//! certificates. `no-sslv3`, `no-tlsv10`, `no-tlsv11` need nothing: no engine offers SSLv3,
//! and versions below 1.2 are only ever enabled by `ssl-min-ver`/`force-*`.

use super::diag::Diag;
use crate::model::{KxGroup, Named, SigAlg, Tls12Cipher, Tls13Suite};

/// A bind's TLS negotiation settings, as far as written (`None`: tern's default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsOpts {
    pub ciphers: Option<Vec<String>>,
    /// The `ciphers` string's elements as written, for the OpenSSL engine.
    pub cipher_string: Option<Vec<String>>,
    /// `ciphers` names only suites rustls lacks: the bind needs the OpenSSL engine.
    pub legacy_ciphers: bool,
    pub suites: Option<Vec<String>>,
    pub groups: Option<Vec<String>>,
    pub sigalgs: Option<Vec<String>>,
    pub min_version: Option<&'static str>,
    pub max_version: Option<&'static str>,
    pub tickets: Option<bool>,
    pub prefer_server_ciphers: Option<bool>,
    pub strict_sni: Option<bool>,
}

impl TlsOpts {
    /// `self` with the settings `own` writes replacing these.
    pub fn overridden_by(&self, own: &TlsOpts) -> TlsOpts {
        // A bind's own `ciphers` replaces all three cipher fields together.
        let ciphers_from = if own.cipher_string.is_some() {
            own
        } else {
            self
        };
        TlsOpts {
            ciphers: ciphers_from.ciphers.clone(),
            cipher_string: ciphers_from.cipher_string.clone(),
            legacy_ciphers: ciphers_from.legacy_ciphers,
            suites: own.suites.clone().or_else(|| self.suites.clone()),
            groups: own.groups.clone().or_else(|| self.groups.clone()),
            sigalgs: own.sigalgs.clone().or_else(|| self.sigalgs.clone()),
            min_version: own.min_version.or(self.min_version),
            max_version: own.max_version.or(self.max_version),
            tickets: own.tickets.or(self.tickets),
            prefer_server_ciphers: own.prefer_server_ciphers.or(self.prefer_server_ciphers),
            strict_sni: own.strict_sni.or(self.strict_sni),
        }
    }
}

/// Where a TLS keyword was written, for messages.
pub(crate) struct At<'a> {
    pub line: usize,
    pub context: &'a str,
}

/// Applies the TLS option at `words[0]` (with its arguments) to `opts`. Returns how many words
/// it used, or `None` when `words[0]` is not a TLS option. Errors and warnings go to `diag`.
pub(crate) fn option(
    words: &[String],
    opts: &mut TlsOpts,
    at: &At<'_>,
    diag: &mut Diag,
) -> Option<usize> {
    let keyword = words.first()?.as_str();
    let arg = words.get(1).map(String::as_str);
    let need = |diag: &mut Diag| {
        diag.error(
            at.line,
            at.context,
            format!("'{keyword}' needs an argument"),
        );
        Some(1)
    };
    match keyword {
        "ciphers" | "ciphersuites" | "curves" | "sigalgs" | "ecdhe" | "ssl-min-ver"
        | "ssl-max-ver" => {
            let Some(arg) = arg else { return need(diag) };
            match keyword {
                "ciphers" => set_ciphers(opts, arg, at, diag),
                "ciphersuites" => {
                    opts.suites = Some(named::<Tls13Suite>(arg, ':', keyword, at, diag))
                }
                "curves" => opts.groups = Some(named::<KxGroup>(arg, ':', keyword, at, diag)),
                "ecdhe" => opts.groups = Some(named::<KxGroup>(arg, ':', keyword, at, diag)),
                "sigalgs" => opts.sigalgs = Some(named::<SigAlg>(arg, ':', keyword, at, diag)),
                "ssl-min-ver" => opts.min_version = min_version(arg, at, diag),
                _ => opts.max_version = max_version(arg, at, diag),
            }
            Some(2)
        }
        // tern never negotiates these versions: exact as written.
        "no-sslv3" | "no-tlsv10" | "no-tlsv11" => Some(1),
        "no-tlsv12" => {
            opts.min_version = Some("1.3");
            Some(1)
        }
        "no-tlsv13" => {
            opts.max_version = Some("1.2");
            Some(1)
        }
        "force-tlsv12" | "force-tlsv13" => {
            let v = if keyword == "force-tlsv12" {
                "1.2"
            } else {
                "1.3"
            };
            opts.min_version = Some(v);
            opts.max_version = Some(v);
            Some(1)
        }
        "force-tlsv10" | "force-tlsv11" => {
            // The OpenSSL engine (`bind.rs`).
            let v = if keyword == "force-tlsv10" {
                "1.0"
            } else {
                "1.1"
            };
            opts.min_version = Some(v);
            opts.max_version = Some(v);
            Some(1)
        }
        "force-sslv3" => {
            diag.unsupported_because(at.line, at.context, keyword, "tern never offers SSLv3");
            Some(1)
        }
        "no-tls-tickets" | "tls-tickets" => {
            opts.tickets = Some(keyword == "tls-tickets");
            Some(1)
        }
        "prefer-client-ciphers" => {
            opts.prefer_server_ciphers = Some(false);
            Some(1)
        }
        "strict-sni" => {
            opts.strict_sni = Some(true);
            Some(1)
        }
        _ => None,
    }
}

/// Whether a version (as written in the TOML) needs the OpenSSL engine.
pub(crate) fn legacy_version(v: &str) -> bool {
    matches!(v, "1.0" | "1.1")
}

fn min_version(arg: &str, at: &At<'_>, diag: &mut Diag) -> Option<&'static str> {
    match arg {
        "SSLv3" => {
            diag.approx(
                at.line,
                at.context,
                "ssl-min-ver",
                "tern never offers SSLv3: min_version = \"1.0\" (the OpenSSL engine)",
            );
            Some("1.0")
        }
        // Served by the OpenSSL engine (`bind.rs`).
        "TLSv1.0" => Some("1.0"),
        "TLSv1.1" => Some("1.1"),
        "TLSv1.2" => Some("1.2"),
        "TLSv1.3" => Some("1.3"),
        _ => {
            bad_version(arg, at, diag);
            None
        }
    }
}

fn max_version(arg: &str, at: &At<'_>, diag: &mut Diag) -> Option<&'static str> {
    match arg {
        "SSLv3" => {
            diag.unsupported_because(
                at.line,
                at.context,
                "ssl-max-ver SSLv3",
                "tern never offers SSLv3",
            );
            None
        }
        "TLSv1.0" => Some("1.0"),
        "TLSv1.1" => Some("1.1"),
        "TLSv1.2" => Some("1.2"),
        "TLSv1.3" => Some("1.3"),
        _ => {
            bad_version(arg, at, diag);
            None
        }
    }
}

fn bad_version(arg: &str, at: &At<'_>, diag: &mut Diag) {
    diag.error(
        at.line,
        at.context,
        format!("unknown TLS version '{arg}' (SSLv3, TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3)"),
    );
}

/// `ciphers LIST` (a bind's, or `ssl-default-bind-ciphers`): the list for rustls, and the
/// string as written for the OpenSSL engine, which a list of legacy suites only selects.
pub(crate) fn set_ciphers(opts: &mut TlsOpts, list: &str, at: &At<'_>, diag: &mut Diag) {
    let elements: Vec<String> = list
        .split(':')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let named = elements.iter().filter(|e| !is_rule(e));
    let (modern, legacy): (Vec<&String>, Vec<&String>) =
        named.partition(|e| Tls12Cipher::from_name(e).is_some());
    opts.legacy_ciphers = modern.is_empty() && !legacy.is_empty();
    opts.ciphers = if opts.legacy_ciphers {
        None
    } else {
        ciphers(list, at, diag)
    };
    opts.cipher_string = Some(elements);
}

/// An OpenSSL rule (`HIGH`, `!aNULL`, `EECDH+AESGCM`, `@SECLEVEL=0`) rather than a suite name.
fn is_rule(item: &str) -> bool {
    item.starts_with(['!', '-', '+', '@']) || item.contains('+') || !item.contains('-')
}

/// An OpenSSL TLS 1.2 cipher list, filtered for rustls. `None`: only rules, tern's defaults
/// apply.
pub(crate) fn ciphers(list: &str, at: &At<'_>, diag: &mut Diag) -> Option<Vec<String>> {
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    let mut rules = Vec::new();
    for item in list.split(':').filter(|s| !s.is_empty()) {
        if is_rule(item) {
            rules.push(item);
        } else if Tls12Cipher::from_name(item).is_some() {
            kept.push(item.to_owned());
        } else {
            dropped.push(item);
        }
    }
    if !dropped.is_empty() {
        diag.approx(
            at.line,
            at.context,
            "ciphers",
            &format!(
                "rustls does not implement {} (dropped from the list, which names modern suites too; tern's TLS 1.2 suites are ECDHE with AES-GCM or ChaCha20; a list of legacy suites only runs on the OpenSSL engine)",
                dropped.join(", ")
            ),
        );
    }
    if !rules.is_empty() {
        let what = if kept.is_empty() && dropped.is_empty() {
            "tern's default TLS 1.2 suites are used (ECDHE with AES-GCM or ChaCha20)"
        } else {
            "they are left out; the named suites are kept"
        };
        diag.approx(
            at.line,
            at.context,
            "ciphers",
            &format!(
                "OpenSSL cipher rules ({}) are not evaluated: {what}",
                rules.join(", ")
            ),
        );
        if kept.is_empty() && dropped.is_empty() {
            return None;
        }
    }
    Some(kept)
}

/// A list of names of `T` separated by `sep`, keeping the ones tern implements.
pub(crate) fn named<T: Named>(
    list: &str,
    sep: char,
    keyword: &str,
    at: &At<'_>,
    diag: &mut Diag,
) -> Vec<String> {
    let (kept, dropped): (Vec<&str>, Vec<&str>) = list
        .split(sep)
        .filter(|s| !s.is_empty())
        .partition(|name| T::from_name(name).is_some());
    if !dropped.is_empty() {
        diag.approx(
            at.line,
            at.context,
            keyword,
            &format!(
                "tern does not implement {} (dropped; tern has {})",
                dropped.join(", "),
                T::supported()
            ),
        );
    }
    kept.into_iter().map(str::to_owned).collect()
}

/// An ALPN list of a bind or a server (`h2,http/1.1`): tern speaks HTTP/2 and HTTP/1.x to
/// clients and to servers; others (`h3`, `spdy/3`) are dropped with a warning.
pub(crate) fn alpn(list: &str, at: &At<'_>, diag: &mut Diag) -> Vec<String> {
    let speaks = ["h2", "http/1.1", "http/1.0"];
    let (kept, dropped): (Vec<&str>, Vec<&str>) = list
        .split(',')
        .filter(|s| !s.is_empty())
        .partition(|p| speaks.contains(p));
    if !dropped.is_empty() {
        diag.approx(
            at.line,
            at.context,
            "alpn",
            &format!(
                "tern speaks {} here: {} dropped, alpn = [{}]",
                speaks.join(", "),
                dropped.join(", "),
                kept.iter()
                    .map(|p| format!("\"{p}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    kept.into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;

    use super::*;

    const AT: At<'static> = At {
        line: 4,
        context: "frontend web",
    };

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn apply(s: &str) -> (TlsOpts, Diag) {
        let mut diag = Diag::new(Path::new("h.cfg"));
        let mut opts = TlsOpts::default();
        let words = words(s);
        let mut i = 0;
        while i < words.len() {
            i += option(&words[i..], &mut opts, &AT, &mut diag).unwrap();
        }
        (opts, diag)
    }

    #[test]
    fn versions_and_flags() {
        let (opts, diag) = apply("no-sslv3 no-tlsv10 no-tlsv11 ssl-min-ver TLSv1.2 no-tls-tickets prefer-client-ciphers strict-sni");
        assert!(diag.warnings.is_empty() && diag.errors.is_empty());
        assert_eq!(opts.min_version, Some("1.2"));
        assert_eq!(opts.tickets, Some(false));
        assert_eq!(opts.prefer_server_ciphers, Some(false));
        assert_eq!(opts.strict_sni, Some(true));
        let (opts, _) = apply("no-tlsv13");
        assert_eq!(opts.max_version, Some("1.2"));
        let (opts, _) = apply("force-tlsv13");
        assert_eq!(
            (opts.min_version, opts.max_version),
            (Some("1.3"), Some("1.3"))
        );
    }

    #[test]
    fn old_versions_are_kept_for_the_openssl_engine() {
        let (opts, diag) = apply("ssl-min-ver TLSv1.0");
        assert_eq!(opts.min_version, Some("1.0"));
        assert!(diag.warnings.is_empty() && diag.errors.is_empty());
        let (opts, _) = apply("ssl-max-ver TLSv1.1");
        assert_eq!(opts.max_version, Some("1.1"));
        let (opts, _) = apply("force-tlsv10");
        assert_eq!(
            (opts.min_version, opts.max_version),
            (Some("1.0"), Some("1.0"))
        );
        let (_, diag) = apply("force-sslv3");
        assert_eq!(diag.errors.len(), 1);
        let (_, diag) = apply("ssl-min-ver TLS1");
        assert!(diag.errors[0].message.contains("unknown TLS version"));
    }

    #[test]
    fn legacy_only_lists_are_kept_whole_for_openssl() {
        let (opts, diag) = apply("ciphers AES128-SHA:DHE-RSA-AES128-GCM-SHA256:!aNULL");
        assert!(opts.legacy_ciphers);
        assert_eq!(opts.ciphers, None);
        assert_eq!(
            opts.cipher_string.unwrap(),
            ["AES128-SHA", "DHE-RSA-AES128-GCM-SHA256", "!aNULL"]
        );
        assert!(diag.warnings.is_empty());
    }

    #[test]
    fn cipher_lists_keep_what_tern_implements() {
        let (opts, diag) = apply(
            "ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256",
        );
        assert_eq!(
            opts.ciphers.unwrap(),
            [
                "ECDHE-ECDSA-AES128-GCM-SHA256",
                "ECDHE-RSA-AES256-GCM-SHA384"
            ]
        );
        assert_eq!(diag.warnings.len(), 1);
        assert!(diag.warnings[0]
            .message
            .contains("DHE-RSA-AES128-GCM-SHA256"));
        let (opts, diag) = apply("ciphers HIGH:!aNULL:!MD5");
        assert_eq!(opts.ciphers, None);
        assert!(diag.warnings[0].message.contains("default"));
        let (opts, _) = apply("ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256");
        assert_eq!(opts.suites.unwrap(), ["TLS_AES_128_GCM_SHA256"]);
        let (opts, _) = apply("curves X25519:P-256:P-521");
        assert_eq!(opts.groups.unwrap(), ["X25519", "P-256"]);
    }

    #[test]
    fn alpn_drops_what_tern_does_not_speak() {
        let mut diag = Diag::new(Path::new("h.cfg"));
        assert_eq!(alpn("h3,h2,http/1.1", &AT, &mut diag), ["h2", "http/1.1"]);
        assert!(diag.warnings[0]
            .message
            .contains("h3 dropped, alpn = [\"h2\", \"http/1.1\"]"));
        assert_eq!(
            alpn("http/1.1,http/1.0", &AT, &mut diag),
            ["http/1.1", "http/1.0"]
        );
        assert_eq!(diag.warnings.len(), 1);
    }
}
