//! The TLS keys of a workload: certificate, version, suite and group, checked against each
//! other (a TLS 1.2 ECDHE-RSA suite needs an RSA certificate and TLS 1.2).

use super::{Ctx, Pick};
use crate::scenario::locate::KeyPath;
use crate::scenario::suites::{self, Auth, KeyExchange, Suite};
use crate::scenario::{CertKind, Group, TlsSpec, TlsVersion};

impl Ctx<'_> {
    /// The TLS side of a workload; `None` when `tls = false`.
    pub(super) fn tls(&mut self, p: &Pick<'_>) -> Option<TlsSpec> {
        let enabled = p.get(|r| &r.tls, "tls").is_none_or(|(v, _)| *v);
        if !enabled {
            for (key, set) in [
                ("cert", p.w.cert.is_some()),
                ("version", p.w.version.is_some()),
                ("suite", p.w.suite.is_some()),
                ("group", p.w.group.is_some()),
            ] {
                if set {
                    self.issue(
                        &p.wp.key(key),
                        "tls is false: this key has no effect, remove it",
                    );
                }
            }
            return None;
        }
        let cert = self.cert(p);
        let version = self.version(p);
        let suite = self.suite(p, cert, version);
        Some(TlsSpec {
            cert,
            version: version.unwrap_or(suite.version),
            suite,
            group: self.group(p),
        })
    }

    fn cert(&mut self, p: &Pick<'_>) -> CertKind {
        let Some((v, at)) = p.get(|r| &r.cert, "cert") else {
            return CertKind::Rsa2048;
        };
        match v.to_ascii_lowercase().as_str() {
            "rsa" | "rsa2048" | "rsa-2048" => CertKind::Rsa2048,
            "ecdsa" | "ecdsa-p256" | "p256" => CertKind::EcdsaP256,
            _ => {
                self.issue(
                    &at,
                    format!("unknown certificate {v:?}: expected \"rsa\" (RSA-2048) or \"ecdsa\" (P-256)"),
                );
                CertKind::Rsa2048
            }
        }
    }

    fn version(&mut self, p: &Pick<'_>) -> Option<TlsVersion> {
        let (v, at) = p.get(|r| &r.version, "version")?;
        match v
            .trim()
            .trim_start_matches("TLSv")
            .trim_start_matches("tls")
        {
            "1.2" => Some(TlsVersion::Tls12),
            "1.3" => Some(TlsVersion::Tls13),
            _ => {
                self.issue(
                    &at,
                    format!("unknown TLS version {v:?}: expected \"1.2\" or \"1.3\""),
                );
                None
            }
        }
    }

    fn suite(
        &mut self,
        p: &Pick<'_>,
        cert: CertKind,
        version: Option<TlsVersion>,
    ) -> &'static Suite {
        let Some((v, at)) = p.get(|r| &r.suite, "suite") else {
            return suites::default_for(
                version.unwrap_or(TlsVersion::Tls13),
                cert == CertKind::Rsa2048,
            );
        };
        match suites::find(v) {
            Some(s) => {
                self.check_suite(s, cert, version, &at);
                s
            }
            None => {
                self.issue(
                    &at,
                    format!(
                        "unknown cipher suite {v:?}: expected one of {}",
                        suites::names()
                    ),
                );
                suites::default_for(TlsVersion::Tls13, true)
            }
        }
    }

    fn group(&mut self, p: &Pick<'_>) -> Group {
        let Some((v, at)) = p.get(|r| &r.group, "group") else {
            return Group::X25519;
        };
        match v.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "x25519" => Group::X25519,
            "p256" | "secp256r1" | "prime256v1" => Group::P256,
            "p384" | "secp384r1" => Group::P384,
            "x25519mlkem768" => Group::X25519Mlkem768,
            _ => {
                self.issue(
                    &at,
                    format!("unknown group {v:?}: expected x25519, p256, p384 or x25519mlkem768"),
                );
                Group::X25519
            }
        }
    }

    fn check_suite(
        &mut self,
        s: &Suite,
        cert: CertKind,
        version: Option<TlsVersion>,
        at: &KeyPath,
    ) {
        if let Some(v) = version.filter(|&v| v != s.version) {
            let message = format!(
                "{} is a TLS {} suite, but version is {}",
                s.iana,
                s.version.number(),
                v.number()
            );
            self.issue(at, message);
        }
        let needs = match s.auth {
            Auth::Rsa => Some(CertKind::Rsa2048),
            Auth::Ecdsa => Some(CertKind::EcdsaP256),
            Auth::Any => None,
        };
        if let Some(needs) = needs.filter(|&n| n != cert) {
            let message = format!(
                "{} needs an {} certificate, but cert is {}",
                s.iana,
                needs.label(),
                cert.label()
            );
            self.issue(at, message);
        }
        if s.kx == KeyExchange::Rsa && s.auth == Auth::Ecdsa {
            self.issue(at, "RSA key transport needs an RSA certificate");
        }
    }
}
