//! The `tls` table of a frontend or bind: certificates, `cert_dir`, `strict_sni` and
//! resumption (the negotiation policy is in `tls_policy.rs`).
//!
//! Files are not opened here: paths are only resolved against the configuration file's
//! directory, and the TLS crate reports what is wrong with a file when it loads it. That keeps
//! `tern check` usable on a machine that does not hold the certificates.

use std::time::Duration;

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{CertSource, Certificate, Resumption, TlsSettings};
use crate::raw::{RawCert, RawResumption, RawTls};

/// Longest `ticket_rotation`: a ticket lives up to two periods, and RFC 8446 caps a ticket's
/// lifetime at 7 days.
const MAX_ROTATION: Duration = Duration::from_secs(3 * 24 * 3600);
const MAX_CACHE_SIZE: i64 = 10_000_000;

impl Checker<'_> {
    pub(super) fn tls(&mut self, raw: &RawTls, path: &KeyPath) -> Option<TlsSettings> {
        let certs_path = path.key("certs");
        let cert_dir = raw
            .cert_dir
            .as_deref()
            .map(|dir| self.file_path(dir, &path.key("cert_dir")));
        let certs: Vec<Certificate> = raw
            .certs
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, cert)| self.cert(cert, &certs_path.index(i)))
            .collect();
        if certs.is_empty() && cert_dir.is_none() {
            let message = match raw.certs {
                None => "missing key `certs`: list at least one certificate (or give `cert_dir`)",
                Some(_) => "must list at least one certificate (or give `cert_dir`)",
            };
            self.issue(&certs_path, message);
            return None;
        }
        let resumption = match &raw.resumption {
            Some(r) => self.resumption(r, &path.key("resumption")),
            None => Resumption::default(),
        };
        let (policy, engine) = self.tls_engine(raw, path);
        Some(TlsSettings {
            certs,
            cert_dir,
            strict_sni: raw.strict_sni.unwrap_or(false),
            policy,
            resumption,
            client_auth: raw
                .client_auth
                .as_ref()
                .map(|c| self.client_auth(c, &path.key("client_auth")))
                .unwrap_or_default(),
            engine,
        })
    }

    fn cert(&mut self, raw: &RawCert, path: &KeyPath) -> Certificate {
        match raw {
            RawCert::Combined(file) => {
                Certificate::from(CertSource::Combined(self.file_path(file, path)))
            }
            RawCert::Split(table) => {
                let cert = self.file_path(&table.cert, &path.key("cert"));
                let source = match &table.key {
                    Some(key) => CertSource::Split {
                        cert,
                        key: self.file_path(key, &path.key("key")),
                    },
                    None => CertSource::Combined(cert),
                };
                let names_path = path.key("names");
                let names = table
                    .names
                    .iter()
                    .flatten()
                    .enumerate()
                    .filter_map(|(i, name)| self.sni_name(name, &names_path.index(i)))
                    .collect();
                let ocsp = table
                    .ocsp
                    .as_deref()
                    .map(|file| self.file_path(file, &path.key("ocsp")));
                Certificate {
                    source,
                    names,
                    ocsp,
                }
            }
        }
    }

    /// A DNS name or `*.` wildcard for SNI selection, lowercased.
    fn sni_name(&mut self, raw: &str, path: &KeyPath) -> Option<String> {
        let name = raw.strip_prefix("*.").unwrap_or(raw);
        let valid = !name.is_empty()
            && name.len() <= 253
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !valid {
            self.issue(
                path,
                format!("`{raw}` is not a DNS name (or a `*.` wildcard over one)"),
            );
            return None;
        }
        Some(raw.to_ascii_lowercase())
    }

    fn resumption(&mut self, raw: &RawResumption, path: &KeyPath) -> Resumption {
        let default = Resumption::default();
        let rotation_path = path.key("ticket_rotation");
        let mut ticket_rotation = self.duration(
            &rotation_path,
            raw.ticket_rotation.as_ref(),
            default.ticket_rotation,
        );
        if ticket_rotation < Duration::from_secs(1) || ticket_rotation > MAX_ROTATION {
            self.issue(&rotation_path, "must be between 1s and 3d");
            ticket_rotation = default.ticket_rotation;
        }
        let tickets = raw.tickets.unwrap_or(default.tickets);
        let ticket_key_file = raw.ticket_key_file.as_deref().map(|file| {
            let key_path = path.key("ticket_key_file");
            if !tickets {
                self.issue(
                    &key_path,
                    "a ticket key file needs `tickets = true` (tickets are off)",
                );
            }
            self.file_path(file, &key_path)
        });
        let cache_size = self.int_in(
            &path.key("cache_size"),
            raw.cache_size,
            0..=MAX_CACHE_SIZE,
            0,
        );
        Resumption {
            tickets,
            ticket_rotation,
            ticket_key_file,
            // In range 0..=10M, so it fits any usize tern runs on.
            cache_size: usize::try_from(cache_size).unwrap_or(0),
        }
    }
}
