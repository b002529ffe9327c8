//! The negotiation policy of a `tls` table: versions, cipher suites, groups, signature schemes,
//! ALPN and cipher preference.
//!
//! Every list keeps the operator's order (the preference order) and drops repeated entries. An
//! unknown name is reported with the names tern supports, so the fix is in the message; a list
//! that leaves an enabled protocol version nothing to negotiate with is refused here rather than
//! found as failed handshakes later.

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{Named, TlsPolicy, TlsVersion};
use crate::raw::RawTls;

/// The application protocols tern speaks to clients.
const ALPN_SUPPORTED: [&str; 3] = ["h2", "http/1.1", "http/1.0"];

impl Checker<'_> {
    pub(super) fn tls_policy(&mut self, raw: &RawTls, path: &KeyPath) -> TlsPolicy {
        let default = TlsPolicy::default();
        let (min_version, max_version) =
            self.version_range(raw, path, (default.min_version, default.max_version), "");
        let tls12 = min_version <= TlsVersion::Tls12;
        let tls13 = max_version >= TlsVersion::Tls13;
        let ciphers = self.named_list(raw.ciphers.as_deref(), &path.key("ciphers"), tls12);
        let suites = self.named_list(raw.suites.as_deref(), &path.key("suites"), tls13);
        TlsPolicy {
            min_version,
            max_version,
            ciphers: ciphers.unwrap_or(default.ciphers),
            suites: suites.unwrap_or(default.suites),
            groups: self
                .named_list(raw.groups.as_deref(), &path.key("groups"), true)
                .unwrap_or(default.groups),
            sigalgs: self.named_list(raw.sigalgs.as_deref(), &path.key("sigalgs"), true),
            alpn: raw
                .alpn
                .as_ref()
                .map_or(default.alpn, |alpn| self.alpn(alpn, &path.key("alpn"))),
            prefer_server_ciphers: raw
                .prefer_server_ciphers
                .unwrap_or(default.prefer_server_ciphers),
        }
    }

    /// The `min_version` and `max_version` of a `tls` table among the versions `V` an engine
    /// negotiates (`engine`: how an error names it, empty for rustls), each `defaults` when
    /// absent; a minimum above the maximum is refused.
    pub(super) fn version_range<V: Named + Ord>(
        &mut self,
        raw: &RawTls,
        path: &KeyPath,
        defaults: (V, V),
        engine: &str,
    ) -> (V, V) {
        let min = self.version(raw.min_version.as_deref(), &path.key("min_version"), engine);
        let max = self.version(raw.max_version.as_deref(), &path.key("max_version"), engine);
        let (min, max) = (min.unwrap_or(defaults.0), max.unwrap_or(defaults.1));
        if min > max {
            self.issue(
                &path.key("min_version"),
                format!(
                    "min_version {} is above max_version {}",
                    min.name(),
                    max.name()
                ),
            );
        }
        (min, max)
    }

    fn version<V: Named>(&mut self, raw: Option<&str>, path: &KeyPath, engine: &str) -> Option<V> {
        let text = raw?;
        let version = V::from_name(text);
        if version.is_none() {
            self.issue(
                path,
                format!(
                    "unsupported TLS version `{text}` ({engine}supported: {})",
                    V::supported()
                ),
            );
        }
        version
    }

    /// A list of names of `T`, deduplicated; `None` when absent. An empty list is an error when
    /// `needed` (the protocol version it serves is enabled).
    pub(super) fn named_list<T: Named + PartialEq>(
        &mut self,
        raw: Option<&[String]>,
        path: &KeyPath,
        needed: bool,
    ) -> Option<Vec<T>> {
        let raw = raw?;
        if raw.is_empty() && needed {
            self.issue(
                path,
                format!("must list at least one of: {}", T::supported()),
            );
        }
        let mut values = Vec::with_capacity(raw.len());
        for (i, text) in raw.iter().enumerate() {
            match T::from_name(text) {
                Some(v) if values.contains(&v) => {}
                Some(v) => values.push(v),
                None => self.issue(
                    &path.index(i),
                    format!("unsupported name `{text}` (supported: {})", T::supported()),
                ),
            }
        }
        Some(values)
    }

    pub(super) fn alpn(&mut self, raw: &[String], path: &KeyPath) -> Vec<String> {
        let mut alpn: Vec<String> = Vec::with_capacity(raw.len());
        for (i, protocol) in raw.iter().enumerate() {
            if !ALPN_SUPPORTED.contains(&protocol.as_str()) {
                self.issue(
                    &path.index(i),
                    format!(
                        "unsupported ALPN protocol `{protocol}`: tern speaks {} to clients",
                        ALPN_SUPPORTED.join(", ")
                    ),
                );
            } else if !alpn.contains(protocol) {
                alpn.push(protocol.clone());
            }
        }
        alpn
    }
}
