#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn suite_names_match_both_spellings() {
    assert_eq!(
        suite_key("TLS_AES_256_GCM_SHA384"),
        suite_key("TLS13_AES_256_GCM_SHA384")
    );
    let p = provider(&[KxGroup::X25519], &["tls_aes_128_gcm_sha256".into()], 1).unwrap();
    assert_eq!(p.cipher_suites.len(), 1);
    assert_eq!(p.kx_groups.len(), 1);
    assert!(provider(&[], &["TLS_NOPE".into()], 1).is_err());
}

#[test]
fn sigalgs_restrict_the_offer() {
    let p = provider(&[KxGroup::X25519], &[], 100).unwrap();
    let all = schemes(&[], &p).unwrap();
    assert!(all.len() > 4);
    let some = schemes(&[SigAlg::Ed25519, SigAlg::RsaPkcs1Sha256], &p).unwrap();
    assert_eq!(
        some,
        vec![SignatureScheme::ED25519, SignatureScheme::RSA_PKCS1_SHA256]
    );
    for alg in [
        SigAlg::EcdsaSecp256r1Sha256,
        SigAlg::EcdsaSecp384r1Sha384,
        SigAlg::RsaPssRsaeSha256,
        SigAlg::RsaPssRsaeSha384,
        SigAlg::RsaPssRsaeSha512,
        SigAlg::RsaPkcs1Sha384,
        SigAlg::RsaPkcs1Sha512,
    ] {
        assert!(all.contains(&scheme(alg)), "{alg:?}");
    }
}

#[test]
fn resume_share_is_spread_evenly() {
    let args = BenchArgs::from_args(["https://localhost/", "--resume", "ticket"]).unwrap();
    let setup = TlsSetup::new(&args, "localhost", true).unwrap();
    let t = setup.for_thread();
    assert!((0..10).all(|_| t.next().1.is_some()));

    let args = BenchArgs::from_args([
        "https://localhost/",
        "--resume",
        "ticket",
        "--resume-ratio",
        "0.25",
    ])
    .unwrap();
    let t = TlsSetup::new(&args, "localhost", true)
        .unwrap()
        .for_thread();
    let picks: Vec<bool> = (0..8).map(|_| t.next().1.is_some()).collect();
    assert_eq!(
        picks,
        [false, false, false, true, false, false, false, true]
    );

    // The reference probe never resumes; nor does a run without --resume.
    let t = TlsSetup::new(&args, "localhost", false)
        .unwrap()
        .for_thread();
    assert!((0..4).all(|_| t.next().1.is_none()));
    let args = BenchArgs::from_args(["https://localhost/"]).unwrap();
    let t = TlsSetup::new(&args, "localhost", true)
        .unwrap()
        .for_thread();
    assert!(t.next().1.is_none());
}

#[test]
fn resume_id_needs_tls12_and_names_are_checked() {
    let args = BenchArgs::from_args(["https://h/", "--resume", "id"]).unwrap();
    let err = TlsSetup::new(&args, "h", true).unwrap_err().to_string();
    assert!(err.contains("--tls-version 1.2"), "{err}");
    let args =
        BenchArgs::from_args(["https://h/", "--resume", "id", "--tls-version", "1.2"]).unwrap();
    assert!(TlsSetup::new(&args, "h", true).is_ok());
    assert!(TlsSetup::new(&args, "bad name", true).is_err());
    let args = BenchArgs::from_args(["https://h/", "--cacert", "/nonexistent.pem"]).unwrap();
    assert!(TlsSetup::new(&args, "h", true).is_err());
}

#[test]
fn rustls_refuses_tls10_and_names_the_other_engine() {
    let args = BenchArgs::from_args(["https://h/", "--tls-version", "1.1"]).unwrap();
    assert_eq!(args.tls_engine, crate::args::TlsEngine::Rustls);
    let err = TlsSetup::new(&args, "h", true).unwrap_err().to_string();
    assert!(err.contains("--tls-engine openssl"), "{err}");
}

/// Without the feature, the OpenSSL engine is refused with a message naming it.
#[cfg(not(feature = "openssl-engine"))]
#[test]
fn openssl_engine_needs_its_feature() {
    let args = BenchArgs::from_args(["https://h/", "--tls-engine", "openssl"]).unwrap();
    let err = ClientTls::new(&args, "h", true).unwrap_err().to_string();
    assert!(err.contains("openssl-engine"), "{err}");
}

/// Full handshakes ask the server for no tickets (RFC 9149); resuming connections leave the
/// number to the server.
#[test]
fn only_resuming_clients_ask_for_tickets() {
    let none = Some(TicketRequest {
        new_session_count: 0,
        resumption_count: 0,
    });
    let args = BenchArgs::from_args(["https://localhost/"]).unwrap();
    let setup = TlsSetup::new(&args, "localhost", true).unwrap();
    let (config, _) = setup.for_thread().next();
    assert_eq!(config.send_ticket_request, none);

    let args = BenchArgs::from_args(["https://localhost/", "--resume", "ticket"]).unwrap();
    let setup = TlsSetup::new(&args, "localhost", true).unwrap();
    let thread = setup.for_thread();
    let (config, store) = thread.next();
    assert_eq!(config.send_ticket_request, None);
    assert!(store.is_some());
    assert_eq!(setup.full.send_ticket_request, none);
}
