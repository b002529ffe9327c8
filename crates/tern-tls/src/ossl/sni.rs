//! Certificate selection by SNI on the OpenSSL engine: the servername callback of the default
//! context switches the connection to the context of the certificate serving the name (exact
//! names first, then a `*.` wildcard over the name's parent), as the rustls engine's
//! `SniResolver` does; with `strict_sni`, a name no certificate serves (or none) is refused
//! with an `unrecognized_name` alert.

use std::collections::HashMap;

use openssl::ssl::{NameType, SniError, SslAlert, SslContext, SslContextBuilder};
use tern_config::model::TlsSettings;

/// Index of the certificate serving each name (the first listed wins).
#[derive(Debug, Default)]
struct Names {
    exact: HashMap<String, usize>,
    wildcard: HashMap<String, usize>,
}

impl Names {
    fn insert(&mut self, name: &str, index: usize) {
        match name.strip_prefix("*.") {
            Some(parent) => self.wildcard.entry(parent.to_owned()).or_insert(index),
            None => self.exact.entry(name.to_owned()).or_insert(index),
        };
    }

    fn find(&self, name: &str) -> Option<usize> {
        let name = name.to_ascii_lowercase();
        let name = name.trim_end_matches('.');
        if let Some(&i) = self.exact.get(name) {
            return Some(i);
        }
        let (_, parent) = name.split_once('.')?;
        self.wildcard.get(parent).copied()
    }
}

/// The default context: the first certificate's (`first`, a builder), with the servername
/// callback switching to the context of another certificate (`others[i - 1]` for certificate
/// `i`) when the name is its.
pub(super) fn with_selection(
    settings: &TlsSettings,
    mut first: SslContextBuilder,
    others: Vec<SslContext>,
    names: &[Vec<String>],
) -> SslContext {
    let mut index = Names::default();
    for (i, list) in names.iter().enumerate() {
        for name in list {
            index.insert(name, i);
        }
    }
    let strict = settings.strict_sni;
    first.set_servername_callback(move |ssl, alert| {
        let chosen = ssl
            .servername(NameType::HOST_NAME)
            .and_then(|n| index.find(n));
        match (chosen, strict) {
            // The first certificate's context is the one the handshake started on.
            (Some(0), _) | (None, false) => Ok(()),
            (Some(i), _) => {
                let switched = others.get(i - 1).map(|ctx| ssl.set_ssl_context(ctx));
                if let Some(Err(_)) = switched {
                    *alert = SslAlert::INTERNAL_ERROR;
                    return Err(SniError::ALERT_FATAL);
                }
                Ok(())
            }
            (None, true) => {
                *alert = SslAlert::UNRECOGNIZED_NAME;
                Err(SniError::ALERT_FATAL)
            }
        }
    });
    first.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_win_over_wildcards_and_case_is_ignored() {
        let mut n = Names::default();
        n.insert("*.example.com", 0);
        n.insert("www.example.com", 1);
        n.insert("www.example.com", 2);
        assert_eq!(n.find("WWW.Example.com"), Some(1));
        assert_eq!(n.find("api.example.com"), Some(0));
        assert_eq!(n.find("a.b.example.com"), None);
        assert_eq!(n.find("example.com"), None);
    }
}
