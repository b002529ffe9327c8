//! TLS against in-process `tern term` backends: full handshakes counted on both ends, resumption
//! (tickets and session IDs) for a chosen share of connections, counted on both ends, and the
//! offered version, group, signature schemes and ALPN taking effect.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use tern_bench::stats::ErrorKind;
use tern_tls::KeyKind;

/// Client and server counts may differ by the handshakes in flight at the deadline, finished
/// on one side only (a TLS 1.3 client finishes before the server reads its Finished): at most
/// one per connection.
fn close_to_server(client: u64, server: u64, connections: u64) {
    assert!(
        client.abs_diff(server) <= connections,
        "client {client} vs server {server}"
    );
}

#[test]
fn every_handshake_is_full_and_the_server_agrees() {
    let (term, addr) = tls_term(KeyKind::EcdsaP256, Resumption::Tickets);
    let url = format!("https://{addr}/?s=0");
    let r = bench(&url, &["-c", "2", "--requests-per-conn", "1"]);
    let s = &r.stats;
    assert!(s.full_handshakes > 10, "{s:?}");
    assert_eq!((s.resumed_handshakes, s.resume_attempts), (0, 0));
    assert_eq!(r.error_count(), 0);
    assert_eq!(s.handshake.len(), s.full_handshakes);
    assert!(s.requests.abs_diff(s.connections) <= 2, "{s:?}");
    let server = term.stats();
    close_to_server(s.full_handshakes, server.tls_full, 2);
    assert_eq!(server.tls_resumed, 0);
    let tls = s.tls.as_ref().unwrap();
    assert_eq!(
        (tls.version.as_str(), tls.group.as_str()),
        ("TLSv1_3", "X25519")
    );
    assert_eq!(tls.alpn, None, "no ALPN offered by default");
    assert_eq!(r.settings.sni.as_deref(), Some("127.0.0.1"));
}

#[test]
fn half_of_the_connections_resume_with_tickets() {
    let (term, addr) = tls_term(KeyKind::EcdsaP256, Resumption::Tickets);
    let url = format!("https://{addr}/?s=0");
    let extra = [
        "-c",
        "2",
        "--requests-per-conn",
        "1",
        "--resume",
        "ticket",
        "--resume-ratio",
        "0.5",
        "-d",
        "0.8",
    ];
    let r = bench(&url, &extra);
    let s = &r.stats;
    let handshakes = s.full_handshakes + s.resumed_handshakes;
    assert!(handshakes > 20, "{s:?}");
    // Every other connection offers a ticket (each handshake leaves one), and resumes.
    assert!(s.resume_attempts.abs_diff(handshakes / 2) <= 2, "{s:?}");
    assert!(s.resumed_handshakes + 2 >= s.resume_attempts, "{s:?}");
    assert!(s.resumed_handshakes <= s.resume_attempts);
    assert_eq!(r.error_count(), 0);
    let server = term.stats();
    close_to_server(s.full_handshakes, server.tls_full, 2);
    close_to_server(s.resumed_handshakes, server.tls_resumed, 2);
    assert_eq!(
        r.to_json_value()["handshakes"]["resumed"],
        s.resumed_handshakes
    );
}

#[test]
fn tls12_resumes_with_tickets_or_session_ids() {
    for (resumption, mode) in [
        (Resumption::Tickets, "ticket"),
        (Resumption::SessionIds, "id"),
    ] {
        let (term, addr) = tls_term(KeyKind::EcdsaP256, resumption);
        let url = format!("https://{addr}/");
        let extra = [
            "-c",
            "1",
            "--requests-per-conn",
            "1",
            "--tls-version",
            "1.2",
            "--resume",
            mode,
        ];
        let r = bench(&url, &extra);
        let s = &r.stats;
        assert_eq!(s.tls.as_ref().unwrap().version, "TLSv1_2");
        // The first connection is full; the others resume the stored session.
        assert!(s.resumed_handshakes > 5, "{mode}: {s:?}");
        assert!(s.full_handshakes <= 2, "{mode}: {s:?}");
        let server = term.stats();
        close_to_server(s.resumed_handshakes, server.tls_resumed, 1);
        close_to_server(s.full_handshakes, server.tls_full, 1);
    }
}

#[test]
fn session_ids_do_not_resume_on_a_tickets_only_server() {
    // tern's server policy keeps no session-ID cache: asking for IDs gives full handshakes,
    // and the report says so instead of assuming resumption happened.
    let (term, addr) = tls_term(KeyKind::EcdsaP256, Resumption::Tickets);
    let url = format!("https://{addr}/");
    let extra = [
        "-c",
        "1",
        "--requests-per-conn",
        "1",
        "--tls-version",
        "1.2",
        "--resume",
        "id",
    ];
    let r = bench(&url, &extra);
    assert_eq!(r.stats.resumed_handshakes, 0);
    assert!(r.stats.full_handshakes > 5);
    assert_eq!(term.stats().tls_resumed, 0);
}

#[test]
fn signature_schemes_offered_decide_what_the_server_can_sign() {
    let (_term, addr) = tls_term(KeyKind::EcdsaP256, Resumption::Tickets);
    let url = format!("https://{addr}/");
    let ok = bench(&url, &["-c", "1", "--sigalg", "ecdsa_secp256r1_sha256"]);
    assert!(ok.stats.requests > 0 && ok.error_count() == 0);
    let bad = bench(
        &url,
        &["-c", "1", "--sigalg", "rsa_pss_rsae_sha256,ed25519"],
    );
    assert_eq!(bad.stats.requests, 0);
    assert!(
        bad.stats.errors_of(ErrorKind::Tls) > 0,
        "{:?}",
        bad.stats.errors
    );

    let (_term, addr) = tls_term(KeyKind::Rsa2048, Resumption::Tickets);
    let url = format!("https://{addr}/");
    // PKCS#1 v1.5 signs TLS 1.2 handshakes, but TLS 1.3 allows only PSS.
    let v12 = [
        "-c",
        "1",
        "--sigalg",
        "rsa_pkcs1_sha256",
        "--tls-version",
        "1.2",
    ];
    assert!(bench(&url, &v12).stats.requests > 0);
    let v13 = [
        "-c",
        "1",
        "--sigalg",
        "rsa_pkcs1_sha256",
        "--tls-version",
        "1.3",
    ];
    let r = bench(&url, &v13);
    assert_eq!(r.stats.requests, 0);
    assert!(r.stats.errors_of(ErrorKind::Tls) > 0);
}

#[test]
fn groups_suites_and_alpn_are_what_was_offered() {
    let (_term, addr) = tls_term(KeyKind::EcdsaP256, Resumption::Tickets);
    let url = format!("https://{addr}/");
    let extra = [
        "-c",
        "1",
        "-d",
        "0.2",
        "--group",
        "x25519mlkem768",
        "--cipher",
        "TLS_AES_128_GCM_SHA256",
        "--alpn",
        "http/1.1",
    ];
    let r = bench(&url, &extra);
    let tls = r.stats.tls.as_ref().unwrap();
    assert_eq!(tls.group, "X25519MLKEM768");
    assert_eq!(tls.suite, "TLS13_AES_128_GCM_SHA256");
    assert_eq!(tls.alpn.as_deref(), Some("http/1.1"));

    let extra = [
        "-c",
        "1",
        "-d",
        "0.2",
        "--groups",
        "p384",
        "--tls-version",
        "1.2",
    ];
    let r = bench(&url, &extra);
    let tls = r.stats.tls.as_ref().unwrap();
    assert_eq!(
        (tls.version.as_str(), tls.group.as_str()),
        ("TLSv1_2", "secp384r1")
    );
}

#[test]
fn cacert_verifies_and_a_wrong_name_fails() {
    let cert = tern_tls::self_signed(&["localhost".to_owned()], KeyKind::EcdsaP256).unwrap();
    let config = tern_tls::server_config_from_keys(vec![cert.certified_key.clone()]).unwrap();
    let term = tern_term::start(tern_term::TermOptions {
        tls: Some(config),
        ..tern_term::TermOptions::new("127.0.0.1:0".parse().unwrap())
    })
    .unwrap();
    let addr = term.local_addrs()[0];
    let dir = std::env::temp_dir().join(format!("tern-bench-ca-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &cert.cert_pem).unwrap();
    let ca = ca.to_str().unwrap();
    let url = format!("https://{addr}/");
    let good = bench(
        &url,
        &["-c", "1", "-d", "0.2", "--cacert", ca, "--sni", "localhost"],
    );
    assert!(good.stats.requests > 0 && good.error_count() == 0);
    assert_eq!(good.settings.verify, "verified against --cacert");
    let wrong = bench(
        &url,
        &[
            "-c",
            "1",
            "-d",
            "0.2",
            "--cacert",
            ca,
            "--sni",
            "other.test",
        ],
    );
    assert_eq!(wrong.stats.requests, 0);
    assert!(wrong.stats.errors_of(ErrorKind::Tls) > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Signs with the real key, then spoils one byte of every signature.
#[derive(Debug)]
struct SpoiledKey(std::sync::Arc<dyn rustls::sign::SigningKey>);

#[derive(Debug)]
struct SpoiledSigner(Box<dyn rustls::sign::Signer>);

impl rustls::sign::SigningKey for SpoiledKey {
    fn choose_scheme(
        &self,
        offered: &[rustls::SignatureScheme],
    ) -> Option<Box<dyn rustls::sign::Signer>> {
        let inner = self.0.choose_scheme(offered)?;
        Some(Box::new(SpoiledSigner(inner)))
    }

    fn algorithm(&self) -> rustls::SignatureAlgorithm {
        self.0.algorithm()
    }
}

impl rustls::sign::Signer for SpoiledSigner {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, rustls::Error> {
        let mut signature = self.0.sign(message)?;
        let last = signature.len() - 1;
        signature[last] ^= 1;
        Ok(signature)
    }

    fn scheme(&self) -> rustls::SignatureScheme {
        self.0.scheme()
    }
}

/// Handshake signatures are checked by default (a server that signs wrongly fails every
/// handshake) and not with --no-signature-check, which then still completes the requests; key
/// pairs reused or not, every handshake is full on the server.
#[test]
fn signatures_are_checked_unless_told_not_to() {
    let cert = tern_tls::self_signed(&["localhost".to_owned()], KeyKind::EcdsaP256).unwrap();
    let real = cert.certified_key.clone();
    let spoiled = rustls::sign::CertifiedKey::new(
        real.cert.clone(),
        std::sync::Arc::new(SpoiledKey(real.key.clone())),
    );
    let config = tern_tls::server_config_from_keys(vec![std::sync::Arc::new(spoiled)]).unwrap();
    let term = tern_term::start(tern_term::TermOptions {
        tls: Some(config),
        ..tern_term::TermOptions::new("127.0.0.1:0".parse().unwrap())
    })
    .unwrap();
    let url = format!("https://{}/", term.local_addrs()[0]);
    let once = ["-c", "1", "-d", "0.2", "--requests-per-conn", "1"];

    let checked = bench(&url, &once);
    assert_eq!(checked.stats.requests, 0);
    assert!(checked.stats.errors_of(ErrorKind::Tls) > 0);

    for reuse in ["1", "100"] {
        let extra = [
            &once[..],
            &["--no-signature-check", "--key-share-reuse", reuse],
        ]
        .concat();
        let unchecked = bench(&url, &extra);
        let s = &unchecked.stats;
        assert!(s.full_handshakes > 5, "{s:?}");
        assert_eq!(unchecked.error_count(), 0, "{:?}", s.errors);
        assert_eq!(
            unchecked.settings.verify,
            "not verified (handshake signatures not checked either)"
        );
        assert_eq!(
            unchecked.settings.key_share_reuse,
            reuse.parse::<u32>().unwrap()
        );
    }
    let server = term.stats();
    assert_eq!(server.tls_resumed, 0);
}
