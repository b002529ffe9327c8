//! `tls.engine` and the OpenSSL engine's policy: versions down to TLS 1.0, OpenSSL cipher
//! strings checked against the refused families, DH parameters.
//!
//! What the OpenSSL engine does not do yet is refused here by name (shared ticket keys),
//! rather than silently ignored: a bind never runs with less than its file says. ALPN,
//! `groups` and `sigalgs` take the names, and have the meaning, they have on rustls binds.

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{banned_cipher, Named, OpensslPolicy, OsslVersion, TlsEngine, TlsPolicy};
use crate::raw::RawTls;

impl Checker<'_> {
    /// The bind's engine and the policy of the rustls engine (ALPN and cipher preference for
    /// both).
    pub(super) fn tls_engine(&mut self, raw: &RawTls, path: &KeyPath) -> (TlsPolicy, TlsEngine) {
        match raw.engine.as_deref() {
            Some("openssl") => {
                let (policy, openssl) = self.openssl_policy(raw, path);
                (policy, TlsEngine::OpenSsl(openssl))
            }
            engine => {
                if let Some(other) = engine.filter(|e| *e != "rustls") {
                    self.issue(
                        &path.key("engine"),
                        format!("unknown TLS engine `{other}` (rustls or openssl)"),
                    );
                }
                if raw.dh_param_file.is_some() {
                    self.issue(
                        &path.key("dh_param_file"),
                        "DH parameters serve DHE suites, which only engine = \"openssl\" offers",
                    );
                }
                (self.tls_policy(raw, path), TlsEngine::Rustls)
            }
        }
    }

    fn openssl_policy(&mut self, raw: &RawTls, path: &KeyPath) -> (TlsPolicy, OpensslPolicy) {
        let default = OpensslPolicy::default();
        let (min_version, max_version) = self.version_range(
            raw,
            path,
            (default.min_version, default.max_version),
            "engine = \"openssl\" ",
        );
        let below13 = min_version <= OsslVersion::Tls12;
        let ciphers = self.cipher_string(raw.ciphers.as_deref(), &path.key("ciphers"), below13);
        let tls13 = max_version == OsslVersion::Tls13;
        let suites = self.cipher_string(raw.suites.as_deref(), &path.key("suites"), tls13);
        let groups = self.named_list(raw.groups.as_deref(), &path.key("groups"), true);
        let sigalgs = self.named_list(raw.sigalgs.as_deref(), &path.key("sigalgs"), true);
        let ticket_file = raw
            .resumption
            .as_ref()
            .and_then(|r| r.ticket_key_file.as_ref());
        if ticket_file.is_some() {
            self.issue(
                &path.key("resumption").key("ticket_key_file"),
                "not supported with engine = \"openssl\" yet (its ticket key is per process)",
            );
        }
        let dh_param_file = raw
            .dh_param_file
            .as_deref()
            .map(|file| self.file_path(file, &path.key("dh_param_file")));
        let rustls = TlsPolicy::default();
        let alpn = match &raw.alpn {
            None => rustls.alpn.clone(),
            Some(list) => self.alpn(list, &path.key("alpn")),
        };
        let policy = TlsPolicy {
            alpn,
            prefer_server_ciphers: raw
                .prefer_server_ciphers
                .unwrap_or(rustls.prefer_server_ciphers),
            ..rustls
        };
        let openssl = OpensslPolicy {
            min_version,
            max_version,
            ciphers,
            suites,
            dh_param_file,
            groups,
            sigalgs,
        };
        (policy, openssl)
    }

    /// A list of OpenSSL cipher-string elements joined with `:`, every element that enables
    /// suites checked against the refused families; `None` when absent.
    fn cipher_string(
        &mut self,
        raw: Option<&[String]>,
        path: &KeyPath,
        needed: bool,
    ) -> Option<String> {
        let raw = raw?;
        if raw.is_empty() && needed {
            self.issue(
                path,
                "must list at least one cipher (an OpenSSL name or rule)",
            );
        }
        let mut elements = Vec::with_capacity(raw.len());
        for (i, entry) in raw.iter().enumerate() {
            for element in entry.split([':', ',', ' ']).filter(|e| !e.is_empty()) {
                match banned_cipher(element) {
                    Some(why) => self.issue(
                        &path.index(i),
                        format!("`{element}`: {why}; tern never offers it (docs/security.md)"),
                    ),
                    None => elements.push(element),
                }
            }
        }
        Some(elements.join(":"))
    }
}

impl crate::model::Config {
    /// One line per bind on the OpenSSL engine, for `tern check` to print: the engine, and a
    /// warning when the bind accepts versions below TLS 1.2.
    pub fn openssl_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for fe in &self.frontends {
            for bind in &fe.binds {
                let Some(TlsEngine::OpenSsl(p)) = bind.tls.as_ref().map(|t| &t.engine) else {
                    continue;
                };
                let at = format!("frontend '{}' bind {}", fe.name, bind.address);
                notes.push(format!(
                    "note: {at}: TLS on the OpenSSL engine (engine = \"openssl\"; ciphers: {})",
                    p.ciphers.as_deref().unwrap_or("OpenSSL's DEFAULT")
                ));
                if p.below_tls12() {
                    notes.push(format!(
                        "warning: {at}: accepts TLS {} (below 1.2: deprecated by RFC 8996); \
                         OpenSSL's security level is 0 on this bind",
                        p.min_version.name()
                    ));
                }
            }
        }
        notes
    }
}
