//! The HMAC-based HKDF must give exactly what RFC 5869 and the provider's own HKDF give, and
//! handshakes between it and the provider's stock suites must agree on every secret.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rustls::crypto::aws_lc_rs::{cipher_suite as cs, ALL_CIPHER_SUITES};
use rustls::crypto::tls13::{Hkdf, OkmBlock};
use rustls::crypto::CryptoProvider;
use rustls::sign::SingleCertAndKey;
use rustls::{HandshakeKind, ServerConfig, SupportedCipherSuite, Tls13CipherSuite};

use super::*;
use crate::tests::{ecdsa, handshake, rsa};
use crate::{
    client_config_with_provider, provider, server_config_from_keys, ClientOptions, SelfSigned,
};

/// Whether `suite` runs the HMAC-based HKDF (our statics have one address each: they are
/// statics, not promoted constants).
fn uses_hmac_hkdf(suite: &Tls13CipherSuite) -> bool {
    let ours: [&dyn Hkdf; 2] = [&HKDF_SHA256, &HKDF_SHA384];
    ours.iter()
        .any(|hkdf| std::ptr::addr_eq(*hkdf, suite.hkdf_provider))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every TLS 1.3 suite of the provider, next to its rebuilt copy.
fn pairs() -> Vec<(&'static Tls13CipherSuite, &'static Tls13CipherSuite)> {
    let pairs: Vec<_> = ALL_CIPHER_SUITES
        .iter()
        .filter_map(|suite| suite.tls13())
        .map(
            |theirs| match with_hmac_hkdf(SupportedCipherSuite::Tls13(theirs)) {
                SupportedCipherSuite::Tls13(ours) => (theirs, ours),
                SupportedCipherSuite::Tls12(_) => panic!("a TLS 1.3 suite stays TLS 1.3"),
            },
        )
        .collect();
    assert_eq!(
        pairs.len(),
        3,
        "AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305"
    );
    pairs
}

/// One test case of RFC 5869 appendix A.
struct Vector {
    ikm: Vec<u8>,
    salt: Option<Vec<u8>>,
    info: Vec<u8>,
    prk: &'static str,
    okm: &'static str,
}

/// RFC 5869 appendix A, test cases 1 to 3 (the SHA-256 ones): PRK and OKM.
#[test]
fn matches_rfc5869_vectors() {
    let long = |from: u8| (from..=from.wrapping_add(79)).collect::<Vec<u8>>();
    let cases = [
        Vector {
            ikm: vec![0x0b; 22],
            salt: Some((0x00..=0x0c).collect()),
            info: (0xf0..=0xf9).collect(),
            prk: "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
            okm: "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf\
                  34007208d5b887185865",
        },
        Vector {
            ikm: long(0x00),
            salt: Some(long(0x60)),
            info: long(0xb0),
            prk: "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
            okm: "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c\
                  59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71\
                  cc30c58179ec3e87c14c01d5c1f3434f1d87",
        },
        Vector {
            ikm: vec![0x0b; 22],
            salt: None,
            info: Vec::new(),
            prk: "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
            okm: "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d\
                  9d201395faa4b61a96c8",
        },
    ];
    for case in cases {
        let expander = HKDF_SHA256.extract_from_secret(case.salt.as_deref(), &case.ikm);
        let mut out = vec![0u8; case.okm.len() / 2];
        expander.expand_slice(&[&case.info], &mut out).unwrap();
        assert_eq!(hex(&out), case.okm);
        // The PRK is the key of that expander: one keyed with it gives the same output.
        let keyed = HKDF_SHA256.expander_for_okm(&OkmBlock::new(&unhex(case.prk)));
        let mut again = vec![0u8; out.len()];
        keyed.expand_slice(&[&case.info], &mut again).unwrap();
        assert_eq!(again, out);
    }
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// rustls' HkdfLabel parts for `label` with `context`, as its key schedule passes them.
fn label_parts<'a>(
    len: &'a [u8; 2],
    label: &'a [u8],
    context: &'a [u8],
    lens: &'a [u8; 2],
) -> [&'a [u8]; 6] {
    [len, &lens[..1], b"tls13 ", label, &lens[1..], context]
}

/// RFC 8448 (example TLS 1.3 handshakes, SHA-256): the Early Secret of a handshake without PSK
/// and the salt derived from it are the folded constants, and they match the provider's.
#[test]
fn folds_the_no_psk_early_secret() {
    let early = "33ad0a1c607ec03b09e6cd9893680ce210adf300aa1f2660e1b22e10f170f92a";
    let derived = "6f2615a108c702c5678f54fc9dbab69716c076189c48250cebeac3576c3611ba";
    let no_psk = HKDF_SHA256.no_psk();
    assert_eq!(hex(&no_psk.derived), derived);
    let keyed_early = HKDF_SHA256.expander_for_okm(&OkmBlock::new(&unhex(early)));
    let info: [&[u8]; 1] = [b"any label"];
    assert_eq!(
        keyed_early.expand_block(&info).as_ref(),
        HKDF_SHA256
            .extract_from_zero_ikm(None)
            .expand_block(&info)
            .as_ref()
    );

    for (theirs, ours) in pairs() {
        let (a, b) = (theirs.hkdf_provider, ours.hkdf_provider);
        let len = theirs.common.hash_provider.output_len();
        let empty = theirs.common.hash_provider.hash(&[]);
        let len16 = (len as u16).to_be_bytes();
        let lens = [13, len as u8];
        let derived_info = label_parts(&len16, b"derived", empty.as_ref(), &lens);
        // The folded output, by block and by slice, and a near miss that must not take it.
        let (x, y) = (a.extract_from_zero_ikm(None), b.extract_from_zero_ikm(None));
        let salt = x.expand_block(&derived_info);
        assert_eq!(salt.as_ref(), y.expand_block(&derived_info).as_ref());
        let mut slice = vec![0u8; len];
        y.expand_slice(&derived_info, &mut slice).unwrap();
        assert_eq!(slice, salt.as_ref());
        let near = label_parts(&len16, b"derivef", empty.as_ref(), &lens);
        assert_eq!(
            x.expand_block(&near).as_ref(),
            y.expand_block(&near).as_ref()
        );
        assert_ne!(y.expand_block(&near).as_ref(), salt.as_ref());
        let mut longer = vec![0u8; len + 1];
        let mut longer_theirs = vec![1u8; len + 1];
        y.expand_slice(&derived_info, &mut longer).unwrap();
        x.expand_slice(&derived_info, &mut longer_theirs).unwrap();
        assert_eq!(longer, longer_theirs);
        // The Handshake Secret extracted with that salt (the folded key) or another one.
        let shared = [0x42u8; 32];
        for salt in [salt.as_ref(), &[7u8; 48][..len]] {
            let info: [&[u8]; 2] = [b"c hs traffic", &[1, 2, 3]];
            assert_eq!(
                a.extract_from_secret(Some(salt), &shared)
                    .expand_block(&info)
                    .as_ref(),
                b.extract_from_secret(Some(salt), &shared)
                    .expand_block(&info)
                    .as_ref()
            );
        }
        // A PSK's Early Secret is not the folded one.
        let psk = [9u8; 48];
        let (x, y) = (
            a.extract_from_secret(None, &psk[..len]),
            b.extract_from_secret(None, &psk[..len]),
        );
        assert_eq!(
            x.expand_block(&derived_info).as_ref(),
            y.expand_block(&derived_info).as_ref()
        );
        assert_ne!(y.expand_block(&derived_info).as_ref(), salt.as_ref());
    }
}

/// Every entry point of the `Hkdf` trait gives the provider's bytes, for both hashes, for
/// outputs shorter than, equal to and longer than one hash block.
#[test]
fn matches_the_providers_hkdf() {
    let salt: Vec<u8> = (0u8..48).collect();
    let secret: Vec<u8> = (100u8..148).collect();
    let info: [&[u8]; 3] = [b"\x00\x20", b"tls13 c hs traffic", &[0x55; 32]];
    for (theirs, ours) in pairs() {
        let (a, b) = (theirs.hkdf_provider, ours.hkdf_provider);
        let hash_len = theirs.common.hash_provider.output_len();
        for salt in [None, Some(&salt[..hash_len])] {
            let expanders = [
                (
                    a.extract_from_secret(salt, &secret),
                    b.extract_from_secret(salt, &secret),
                ),
                (a.extract_from_zero_ikm(salt), b.extract_from_zero_ikm(salt)),
            ];
            for (x, y) in expanders {
                assert_eq!(x.hash_len(), y.hash_len());
                assert_eq!(
                    x.expand_block(&info).as_ref(),
                    y.expand_block(&info).as_ref()
                );
                for len in [12, 16, 32, hash_len, 2 * hash_len + 7] {
                    let (mut p, mut q) = (vec![0u8; len], vec![1u8; len]);
                    x.expand_slice(&info, &mut p).unwrap();
                    y.expand_slice(&info, &mut q).unwrap();
                    assert_eq!(p, q, "{:?} length {len}", theirs.common.suite);
                }
                assert!(y
                    .expand_slice(&info, &mut vec![0; 255 * hash_len + 1])
                    .is_err());
            }
        }
        let okm = OkmBlock::new(&secret[..hash_len]);
        assert_eq!(
            a.expander_for_okm(&okm).expand_block(&info).as_ref(),
            b.expander_for_okm(&okm).expand_block(&info).as_ref()
        );
        assert_eq!(
            a.hmac_sign(&okm, b"finished").as_ref(),
            b.hmac_sign(&okm, b"finished").as_ref()
        );
        assert_eq!(a.fips(), b.fips());
    }
}

/// The rebuilt suites differ from the provider's only in their HKDF.
#[test]
fn only_the_hkdf_changes() {
    for (theirs, ours) in pairs() {
        assert!(!std::ptr::eq(theirs, ours));
        assert!(uses_hmac_hkdf(ours) && !uses_hmac_hkdf(theirs));
        assert_eq!(ours.common.suite, theirs.common.suite);
        assert_eq!(
            ours.common.confidentiality_limit,
            theirs.common.confidentiality_limit
        );
        assert!(std::ptr::addr_eq(
            ours.common.hash_provider,
            theirs.common.hash_provider
        ));
        assert!(std::ptr::addr_eq(ours.aead_alg, theirs.aead_alg));
        // Mapping twice is mapping once.
        let again = with_hmac_hkdf(SupportedCipherSuite::Tls13(ours));
        assert!(std::ptr::eq(again.tls13().unwrap(), ours));
    }
    let tls12 = cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256;
    assert!(with_hmac_hkdf(tls12).tls13().is_none());
}

/// tern's provider offers the rebuilt suites, every one of them.
#[test]
fn provider_uses_it_for_every_tls13_suite() {
    let tls13: Vec<_> = provider()
        .cipher_suites
        .iter()
        .filter_map(|suite| suite.tls13())
        .collect();
    assert_eq!(tls13.len(), 3);
    assert!(tls13.iter().all(|suite| uses_hmac_hkdf(suite)));
}

/// A client on the provider's stock suites and a server on tern's (and the reverse) complete
/// handshakes in every TLS 1.3 suite, full and resumed, and derive the same exporter secrets.
#[test]
fn interoperates_with_the_stock_key_schedule() {
    for (theirs, ours) in pairs() {
        for cert in [ecdsa(), rsa()] {
            let tern_server = server_config_from_keys(vec![cert.certified_key.clone()]).unwrap();
            let stock_server = stock_server(theirs, cert);
            let stock_client = client_on(theirs);
            let tern_client = client_on(ours);
            for (client, server) in [(stock_client, tern_server), (tern_client, stock_server)] {
                for kind in [HandshakeKind::Full, HandshakeKind::Resumed] {
                    let (client_conn, server_conn) =
                        handshake(client.clone(), server.clone(), "localhost").unwrap();
                    assert_eq!(server_conn.handshake_kind(), Some(kind));
                    assert_eq!(client_conn.handshake_kind(), Some(kind));
                    let suite = server_conn.negotiated_cipher_suite().unwrap();
                    assert_eq!(suite.suite(), theirs.common.suite);
                    let client_suite = client_conn.negotiated_cipher_suite().unwrap();
                    // Exactly one side runs the HMAC-based HKDF.
                    assert_ne!(
                        uses_hmac_hkdf(suite.tls13().unwrap()),
                        uses_hmac_hkdf(client_suite.tls13().unwrap())
                    );
                    let (mut x, mut y) = ([0u8; 48], [1u8; 48]);
                    client_conn
                        .export_keying_material(&mut x, b"EXPORTER-tern", Some(b"ctx"))
                        .unwrap();
                    server_conn
                        .export_keying_material(&mut y, b"EXPORTER-tern", Some(b"ctx"))
                        .unwrap();
                    assert_eq!(x, y);
                }
            }
        }
    }
}

/// A TLS 1.3 client (with resumption) offering only `suite`.
fn client_on(suite: &'static Tls13CipherSuite) -> Arc<rustls::ClientConfig> {
    let only = Arc::new(CryptoProvider {
        cipher_suites: vec![SupportedCipherSuite::Tls13(suite)],
        ..(*provider()).clone()
    });
    let options = ClientOptions {
        versions: Some(vec![&rustls::version::TLS13]),
        ..ClientOptions::default()
    };
    client_config_with_provider(&options, only).unwrap()
}

/// A TLS 1.3 server on the provider's stock `suite`, issuing tickets.
fn stock_server(suite: &'static Tls13CipherSuite, cert: &SelfSigned) -> Arc<ServerConfig> {
    let only = Arc::new(CryptoProvider {
        cipher_suites: vec![SupportedCipherSuite::Tls13(suite)],
        ..(*provider()).clone()
    });
    let mut config = ServerConfig::builder_with_provider(only)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(SingleCertAndKey::from(cert.certified_key.clone())));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().unwrap();
    Arc::new(config)
}
