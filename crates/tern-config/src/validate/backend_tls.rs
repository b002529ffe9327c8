//! TLS to servers (`tls`): the backend's `tls` is the default of its servers, a server's own
//! `tls` is `false` (plain TCP), `true` (the backend's settings, or the defaults) or a table
//! overriding single keys — the same rule as `check`.
//!
//! As in HAProxy, verification is on by default and needs a CA bundle: `verify = "required"`
//! without `ca` is an error that suggests `verify = "none"`, rather than a silent fallback to a
//! system store that a server machine may not have. The files (`ca`, `cert`) are read here and
//! their PEM blocks counted, so an unreadable file or a bundle without certificates is reported
//! with the line of its key; tern-tls loads them again when the configuration is built, and
//! checks what needs the crypto provider (the key matches the certificate).
//!
//! A server with TLS is health-checked over TLS too, like HAProxy's `ssl` on a server line: an
//! `http` check on the server's own address becomes `https`, and a TLS check without its own
//! `sni` sends the server's fixed SNI. (The checker uses the server's TLS configuration, so
//! checks verify the certificate the same way and resume sessions.)

#[cfg(test)]
mod tests;

use std::net::IpAddr;
use std::path::PathBuf;

use rustls_pki_types::pem::{PemObject, SectionKind};
use rustls_pki_types::DnsName;

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{CheckKind, Server, ServerSni, ServerTls, ServerVerify};
use crate::raw::{RawBackend, RawServerTls, RawTlsClient};

/// The keys of one `tls` table, each checked on its own.
#[derive(Debug, Clone, Default)]
struct TlsFields {
    path: KeyPath,
    /// `Some(true)`: `verify = "required"`.
    verify: Option<bool>,
    ca: Option<PathBuf>,
    /// `ca` is written (even if the file was refused, which was reported).
    ca_written: bool,
    sni: Option<ServerSni>,
    alpn: Option<Vec<String>>,
    cert: Option<PathBuf>,
    session_reuse: Option<bool>,
}

/// ALPN protocols tern can speak to a server: HTTP/1.1, and HTTP/2 (see `server_proto.rs`).
const ALPN_SUPPORTED: [&str; 3] = ["h2", "http/1.1", "http/1.0"];

impl Checker<'_> {
    /// Sets `tls` on each of `servers` (built from `raw.servers`, in the same order), and turns
    /// their HTTP checks into HTTPS ones (see the module docs).
    pub(super) fn server_tls(&mut self, raw: &RawBackend, servers: &mut [Server], path: &KeyPath) {
        let base_path = path.key("tls");
        let base = match &raw.tls {
            None | Some(RawServerTls::Enabled(false)) => None,
            Some(RawServerTls::Enabled(true)) => Some(TlsFields {
                path: base_path,
                ..TlsFields::default()
            }),
            Some(RawServerTls::Table(table)) => Some(self.tls_fields(table, &base_path)),
        };
        let template = base.as_ref().map(|base| self.resolve_tls(None, base));
        let raw_servers = raw.servers.as_deref().unwrap_or_default();
        for (i, (raw_server, server)) in raw_servers.iter().zip(servers.iter_mut()).enumerate() {
            let own_path = path.key("servers").index(i).key("tls");
            server.tls = match (&raw_server.tls, &template) {
                (Some(RawServerTls::Enabled(false)), _) | (None, None) => None,
                (None | Some(RawServerTls::Enabled(true)), Some(template)) => {
                    Some(template.clone())
                }
                (Some(RawServerTls::Enabled(true)), None) => {
                    let own = TlsFields {
                        path: own_path,
                        ..TlsFields::default()
                    };
                    Some(self.resolve_tls(None, &own))
                }
                (Some(RawServerTls::Table(table)), _) => {
                    let own = self.tls_fields(table, &own_path);
                    Some(self.resolve_tls(base.as_ref(), &own))
                }
            };
            upgrade_check(server);
        }
    }

    /// The settings of `own` over `base` over the defaults. Problems of `base` alone were
    /// reported when it was resolved on its own.
    fn resolve_tls(&mut self, base: Option<&TlsFields>, own: &TlsFields) -> ServerTls {
        let empty = TlsFields::default();
        let base_fields = base.unwrap_or(&empty);
        let required = own.verify.or(base_fields.verify).unwrap_or(true);
        let ca = own.ca.clone().or_else(|| base_fields.ca.clone());
        let verify = match (required, ca) {
            (true, Some(ca)) => ServerVerify::Required { ca },
            (true, None) => {
                // Reported here unless `base` (resolved alone) already was, or `ca` was
                // written and its file refused.
                let written = own.ca_written || base_fields.ca_written;
                if !written && (base.is_none() || own.verify.is_some()) {
                    let at = if own.verify.is_some() {
                        own.path.key("verify")
                    } else {
                        own.path.clone()
                    };
                    self.issue(
                        &at,
                        "verify = \"required\" (the default) needs `ca`, a PEM bundle of the CAs \
                         that sign the servers' certificates; on a network where the servers \
                         are trusted, write verify = \"none\"",
                    );
                }
                ServerVerify::None
            }
            (false, ca) => {
                if own.ca.is_some() && ca.is_some() {
                    self.issue(
                        &own.path.key("ca"),
                        "only applies with verify = \"required\" (this one is \"none\")",
                    );
                }
                ServerVerify::None
            }
        };
        ServerTls {
            verify,
            sni: own
                .sni
                .clone()
                .or_else(|| base_fields.sni.clone())
                .unwrap_or(ServerSni::None),
            alpn: own
                .alpn
                .clone()
                .or_else(|| base_fields.alpn.clone())
                .unwrap_or_default(),
            cert: own.cert.clone().or_else(|| base_fields.cert.clone()),
            session_reuse: own
                .session_reuse
                .or(base_fields.session_reuse)
                .unwrap_or(true),
        }
    }

    fn tls_fields(&mut self, raw: &RawTlsClient, path: &KeyPath) -> TlsFields {
        let verify = match raw.verify.as_deref() {
            None => None,
            Some("required") => Some(true),
            Some("none") => Some(false),
            Some(other) => {
                self.issue(
                    &path.key("verify"),
                    format!("unknown value `{other}`; supported: `required`, `none`"),
                );
                None
            }
        };
        TlsFields {
            path: path.clone(),
            verify,
            ca_written: raw.ca.is_some(),
            ca: raw
                .ca
                .as_deref()
                .and_then(|ca| self.server_pem_file(ca, &path.key("ca"), PemWanted::Bundle)),
            sni: raw
                .sni
                .as_deref()
                .and_then(|sni| self.server_sni(sni, &path.key("sni"))),
            alpn: raw
                .alpn
                .as_deref()
                .map(|alpn| self.server_alpn(alpn, &path.key("alpn"))),
            cert: raw.cert.as_deref().and_then(|cert| {
                self.server_pem_file(cert, &path.key("cert"), PemWanted::ChainAndKey)
            }),
            session_reuse: raw.session_reuse,
        }
    }

    fn server_sni(&mut self, raw: &str, path: &KeyPath) -> Option<ServerSni> {
        if raw == "host" {
            return Some(ServerSni::Host);
        }
        if raw.parse::<IpAddr>().is_ok() {
            self.issue(
                path,
                format!(
                    "`{raw}` is an IP address, which TLS does not send as SNI; leave `sni` out \
                     to verify the certificate against the server's address"
                ),
            );
            return None;
        }
        match DnsName::try_from(raw) {
            Ok(_) => Some(ServerSni::Fixed(raw.to_owned())),
            Err(_) => {
                self.issue(
                    path,
                    format!(
                        "`{raw}` is not a DNS name; write a name like \"api.example.com\", or \
                         \"host\" to send the host of each request's Host header"
                    ),
                );
                None
            }
        }
    }

    fn server_alpn(&mut self, raw: &[String], path: &KeyPath) -> Vec<String> {
        for (i, protocol) in raw.iter().enumerate() {
            if !ALPN_SUPPORTED.contains(&protocol.as_str()) {
                self.issue(
                    &path.index(i),
                    format!(
                        "unsupported protocol `{protocol}`; supported: {}",
                        ALPN_SUPPORTED.join(", ")
                    ),
                );
            }
        }
        raw.to_vec()
    }

    /// Resolves `raw` against the configuration's directory, reads it and checks that it holds
    /// what `wanted` says.
    fn server_pem_file(&mut self, raw: &str, path: &KeyPath, wanted: PemWanted) -> Option<PathBuf> {
        if raw.is_empty() {
            self.issue(path, "file path must not be empty");
            return None;
        }
        let joined = self.base_dir.join(raw);
        let file = std::path::absolute(&joined).unwrap_or(joined);
        let bytes = match crate::files::read(&file) {
            Ok(bytes) => bytes,
            Err(e) => {
                self.issue(path, format!("cannot read {}: {e}", file.display()));
                return None;
            }
        };
        match pem_counts(&bytes) {
            Err(e) => {
                self.issue(path, format!("{}: malformed PEM: {e}", file.display()));
                None
            }
            Ok(counts) => match wanted.problem(counts) {
                Some(problem) => {
                    self.issue(path, format!("{}: {problem}", file.display()));
                    None
                }
                None => Some(file),
            },
        }
    }
}

/// What a PEM file must hold.
#[derive(Debug, Clone, Copy)]
enum PemWanted {
    /// At least one certificate (a CA bundle).
    Bundle,
    /// A certificate chain and exactly one private key (a client certificate).
    ChainAndKey,
}

/// Certificates and private keys found in a PEM file.
#[derive(Debug, Clone, Copy, Default)]
struct PemCounts {
    certs: usize,
    keys: usize,
}

impl PemWanted {
    fn problem(self, found: PemCounts) -> Option<&'static str> {
        match self {
            _ if found.certs == 0 => {
                Some("no certificate found (expected a PEM \"CERTIFICATE\" block)")
            }
            PemWanted::ChainAndKey if found.keys == 0 => Some(
                "no private key found (expected the certificate chain and its unencrypted key \
                 in one PEM file)",
            ),
            PemWanted::ChainAndKey if found.keys > 1 => {
                Some("several private keys found, expected exactly one")
            }
            _ => None,
        }
    }
}

fn pem_counts(bytes: &[u8]) -> Result<PemCounts, rustls_pki_types::pem::Error> {
    let mut counts = PemCounts::default();
    for section in <(SectionKind, Vec<u8>) as PemObject>::pem_slice_iter(bytes) {
        match section?.0 {
            SectionKind::Certificate => counts.certs += 1,
            SectionKind::PrivateKey | SectionKind::RsaPrivateKey | SectionKind::EcPrivateKey => {
                counts.keys += 1;
            }
            _ => {}
        }
    }
    Ok(counts)
}

/// A server with TLS is checked over TLS (see the module docs).
fn upgrade_check(server: &mut Server) {
    let (Some(tls), Some(check)) = (&server.tls, &mut server.check) else {
        return;
    };
    let fixed = match &tls.sni {
        ServerSni::Fixed(name) => Some(name.clone()),
        ServerSni::None | ServerSni::Host => None,
    };
    match &mut check.kind {
        CheckKind::Http(req) if check.address == server.address => {
            check.kind = CheckKind::Tls {
                sni: fixed,
                http: Some(req.clone()),
            };
        }
        CheckKind::Tls { sni, .. } if sni.is_none() => *sni = fixed,
        _ => {}
    }
}
