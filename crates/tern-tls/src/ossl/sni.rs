//! Certificate selection on the OpenSSL engine: which certificates share a context, and the
//! servername callback that switches a connection to the context serving its name.
//!
//! Names are indexed as the rustls engine's `SniResolver` does (exact names first, then a `*.`
//! wildcard over the name's parent; each name lists its certificates in configuration order).
//! Where rustls picks among a name's certificates per handshake, OpenSSL keeps one certificate
//! per key type in a context and picks among those itself, by the negotiated suite and the
//! client's signature algorithms. So each name is served by a context holding, of its
//! certificates, the first of each key type (RSA, ECDSA, Ed25519): an ECDSA and an RSA
//! certificate for the same names share one context, and an RSA-only client (a static-RSA or
//! `ECDHE-RSA` suite, or RSA signature algorithms only) gets the RSA one. Names with the same
//! certificates share their context.
//!
//! A client without SNI, or with a name no certificate serves, is served as if it had asked for
//! the first certificate's first name (the first certificate, with its partners of other key
//! types); with `strict_sni` it is refused with an `unrecognized_name` alert.

use std::collections::HashMap;

use openssl::ssl::{NameType, SniError, SslAlert, SslContext, SslContextBuilder};
use rustls::SignatureAlgorithm;

/// Names to a value (certificate indices, then a context), exact and `*.` wildcards apart.
#[derive(Debug)]
struct Names<T> {
    exact: HashMap<String, T>,
    wildcard: HashMap<String, T>,
}

impl<T> Default for Names<T> {
    fn default() -> Self {
        Self {
            exact: HashMap::new(),
            wildcard: HashMap::new(),
        }
    }
}

impl<T> Names<T> {
    fn entry(&mut self, name: &str) -> &mut T
    where
        T: Default,
    {
        match name.strip_prefix("*.") {
            Some(parent) => self.wildcard.entry(parent.to_owned()).or_default(),
            None => self.exact.entry(name.to_owned()).or_default(),
        }
    }

    fn find(&self, name: &str) -> Option<&T> {
        let name = name.to_ascii_lowercase();
        let name = name.trim_end_matches('.');
        if let Some(found) = self.exact.get(name) {
            return Some(found);
        }
        let (_, parent) = name.split_once('.')?;
        self.wildcard.get(parent)
    }
}

/// The contexts a bind needs and which one serves each name.
#[derive(Debug)]
pub(super) struct Plan {
    /// The certificates of each context (indices into the bind's list, configuration order);
    /// the first context is the default, and holds the first certificate.
    pub contexts: Vec<Vec<usize>>,
    /// The context serving each name.
    names: Names<usize>,
}

/// Groups the certificates (their names and key types, in configuration order) into contexts.
pub(super) fn plan(names: &[Vec<String>], kinds: &[SignatureAlgorithm]) -> Plan {
    let mut serving: Names<Vec<usize>> = Names::default();
    for (i, list) in names.iter().enumerate() {
        for name in list {
            let indices = serving.entry(name);
            if indices.last() != Some(&i) {
                indices.push(i);
            }
        }
    }
    let default = names
        .first()
        .and_then(|list| list.first())
        .and_then(|name| serving.find(name))
        .map(|indices| one_per_kind(indices, kinds))
        .filter(|set| set.first() == Some(&0))
        .unwrap_or_else(|| vec![0]);
    let mut ids: HashMap<Vec<usize>, usize> = HashMap::from([(default.clone(), 0)]);
    let mut contexts = vec![default];
    let mut context_of = |indices: &Vec<usize>| {
        let set = one_per_kind(indices, kinds);
        *ids.entry(set).or_insert_with_key(|set| {
            contexts.push(set.clone());
            contexts.len() - 1
        })
    };
    let mut by_name = Names::default();
    for (name, indices) in &serving.exact {
        by_name.exact.insert(name.clone(), context_of(indices));
    }
    for (parent, indices) in &serving.wildcard {
        by_name.wildcard.insert(parent.clone(), context_of(indices));
    }
    Plan {
        contexts,
        names: by_name,
    }
}

/// Of `indices` (configuration order), the first certificate of each key type.
fn one_per_kind(indices: &[usize], kinds: &[SignatureAlgorithm]) -> Vec<usize> {
    let mut seen = Vec::with_capacity(3);
    let mut set = Vec::with_capacity(3);
    for &i in indices {
        let kind = kinds.get(i).copied();
        if !seen.contains(&kind) {
            seen.push(kind);
            set.push(i);
        }
    }
    set
}

/// The default context (`first`, a builder, the plan's first context) with the servername
/// callback switching to `others[i - 1]` for a name served by the plan's context `i`.
pub(super) fn with_selection(
    plan: Plan,
    strict: bool,
    mut first: SslContextBuilder,
    others: Vec<SslContext>,
) -> SslContext {
    let names = plan.names;
    first.set_servername_callback(move |ssl, alert| {
        let chosen = ssl
            .servername(NameType::HOST_NAME)
            .and_then(|n| names.find(n))
            .copied();
        match (chosen, strict) {
            // The default context is the one the handshake started on.
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

    fn names(lists: &[&[&str]]) -> Vec<Vec<String>> {
        lists
            .iter()
            .map(|l| l.iter().map(|n| (*n).to_owned()).collect())
            .collect()
    }

    #[test]
    fn exact_names_win_over_wildcards_and_case_is_ignored() {
        use SignatureAlgorithm::RSA;
        let list = names(&[
            &["*.example.com"],
            &["www.example.com"],
            &["www.example.com"],
        ]);
        let p = plan(&list, &[RSA, RSA, RSA]);
        let served = |name: &str| p.names.find(name).map(|&c| p.contexts[c].clone());
        assert_eq!(served("WWW.Example.com"), Some(vec![1]));
        assert_eq!(served("api.example.com"), Some(vec![0]));
        assert_eq!(served("a.b.example.com"), None);
        assert_eq!(served("example.com"), None);
    }

    #[test]
    fn key_types_of_the_same_names_share_a_context() {
        use SignatureAlgorithm::{ECDSA, RSA};
        let list = names(&[
            &["a.test", "b.test"],
            &["a.test", "b.test"],
            &["a.test"],
            &["c.test"],
        ]);
        let p = plan(&list, &[ECDSA, RSA, RSA, ECDSA]);
        // The default: the first certificate with its RSA partner; the second RSA one of
        // a.test never serves (the first of its type wins).
        assert_eq!(p.contexts[0], [0, 1]);
        let served = |name: &str| p.names.find(name).map(|&c| p.contexts[c].clone());
        assert_eq!(served("a.test"), Some(vec![0, 1]));
        assert_eq!(served("b.test"), Some(vec![0, 1]));
        assert_eq!(served("c.test"), Some(vec![3]));
        assert_eq!(p.contexts.len(), 2);
    }
}
