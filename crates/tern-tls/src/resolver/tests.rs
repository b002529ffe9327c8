//! Name matching rules of [`SniResolver`], checked without handshakes.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rustls::sign::CertifiedKey;
use rustls::SignatureScheme;

use super::SniResolver;
use crate::{self_signed, KeyKind};

const ECDSA_AND_RSA: &[SignatureScheme] = &[
    SignatureScheme::ECDSA_NISTP256_SHA256,
    SignatureScheme::RSA_PSS_SHA256,
    SignatureScheme::RSA_PKCS1_SHA256,
];
const RSA_ONLY: &[SignatureScheme] = &[
    SignatureScheme::RSA_PSS_SHA256,
    SignatureScheme::RSA_PKCS1_SHA256,
];

fn key(names: &[&str], kind: KeyKind) -> Arc<CertifiedKey> {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    self_signed(&names, kind).unwrap().certified_key
}

/// Which of `keys` the resolver serves for `sni`.
fn chosen(resolver: &SniResolver, keys: &[Arc<CertifiedKey>], sni: Option<&str>) -> usize {
    chosen_with(resolver, keys, sni, ECDSA_AND_RSA)
}

fn chosen_with(
    resolver: &SniResolver,
    keys: &[Arc<CertifiedKey>],
    sni: Option<&str>,
    schemes: &[SignatureScheme],
) -> usize {
    let picked = resolver.select(sni, schemes).unwrap();
    keys.iter().position(|k| Arc::ptr_eq(k, picked)).unwrap()
}

#[test]
fn exact_then_wildcard_then_default() {
    let keys = vec![
        key(&["default.test"], KeyKind::EcdsaP256),
        key(&["*.Example.com"], KeyKind::EcdsaP256),
        key(&["www.example.com"], KeyKind::EcdsaP256),
    ];
    let resolver = SniResolver::new(keys.clone()).unwrap();
    let cases = [
        (None, 0),
        (Some("default.test"), 0),
        (Some("www.example.com"), 2),
        (Some("WWW.EXAMPLE.COM"), 2),
        (Some("www.example.com."), 2),
        (Some("api.example.com"), 1),
        (Some("Api.Example.Com"), 1),
        (Some("a.b.example.com"), 0),
        (Some("example.com"), 0),
        (Some("com"), 0),
        (Some(""), 0),
        (Some("unknown.test"), 0),
    ];
    for (sni, expected) in cases {
        assert_eq!(chosen(&resolver, &keys, sni), expected, "{sni:?}");
    }
}

#[test]
fn one_certificate_serves_every_name() {
    let keys = vec![key(&["a.test"], KeyKind::EcdsaP256)];
    let resolver = SniResolver::new(keys.clone()).unwrap();
    for sni in [None, Some("a.test"), Some("b.test")] {
        assert_eq!(chosen(&resolver, &keys, sni), 0);
    }
}

#[test]
fn same_name_picks_a_key_the_client_can_verify() {
    let keys = vec![
        key(&["default.test"], KeyKind::EcdsaP256),
        key(&["dual.test"], KeyKind::EcdsaP256),
        key(&["dual.test"], KeyKind::Rsa2048),
    ];
    let resolver = SniResolver::new(keys.clone()).unwrap();
    assert_eq!(chosen(&resolver, &keys, Some("dual.test")), 1);
    assert_eq!(
        chosen_with(&resolver, &keys, Some("dual.test"), RSA_ONLY),
        2
    );
    // Nothing suits the client: the first candidate, and the handshake fails as it must.
    let ed25519_only = &[SignatureScheme::ED25519];
    assert_eq!(
        chosen_with(&resolver, &keys, Some("dual.test"), ed25519_only),
        1
    );
}

#[test]
fn no_keys_is_an_error() {
    assert!(SniResolver::new(Vec::new()).is_err());
}
