//! In-memory handshakes: the negotiated policy, resumption, client verification, and refusal of
//! clients below the policy.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Resumption, TicketRequest,
    Tls12ClientSessionValue, Tls13ClientSessionValue,
};
use rustls::crypto::aws_lc_rs::{cipher_suite as cs, kx_group};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::ServerName;
use rustls::{CipherSuite, HandshakeKind, NamedGroup, ProtocolVersion, ServerConnection};

use super::{ecdsa, handshake, rsa};
use crate::{
    client_config, client_config_with_provider, describe, provider, server_config_from_keys,
    ClientOptions, SelfSigned, Verify,
};

/// Default client options restricted to `versions`.
fn only(versions: Vec<&'static rustls::SupportedProtocolVersion>) -> ClientOptions {
    ClientOptions {
        versions: Some(versions),
        ..ClientOptions::default()
    }
}

/// A client provider that prefers the AES-256 suites, to show the server's order wins.
fn aes256_first_provider() -> Arc<CryptoProvider> {
    Arc::new(CryptoProvider {
        cipher_suites: vec![
            cs::TLS13_AES_256_GCM_SHA384,
            cs::TLS13_CHACHA20_POLY1305_SHA256,
            cs::TLS13_AES_128_GCM_SHA256,
            cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        ],
        ..(*provider()).clone()
    })
}

fn server_for(cert: &SelfSigned) -> Arc<rustls::ServerConfig> {
    server_config_from_keys(vec![cert.certified_key.clone()]).unwrap()
}

fn check_policy(
    cert: &SelfSigned,
    version: &'static rustls::SupportedProtocolVersion,
    suite: CipherSuite,
) {
    let client =
        client_config_with_provider(&only(vec![version]), aes256_first_provider()).unwrap();
    let (client, server) = handshake(client, server_for(cert), "localhost").unwrap();
    for side in [&*client as &rustls::CommonState, &*server] {
        assert_eq!(side.protocol_version(), Some(version.version));
        assert_eq!(side.negotiated_cipher_suite().unwrap().suite(), suite);
        assert_eq!(
            side.negotiated_key_exchange_group().unwrap().name(),
            NamedGroup::X25519
        );
        assert_eq!(side.alpn_protocol(), Some(&b"http/1.1"[..]));
    }
    assert_eq!(server.server_name(), Some("localhost"));
}

#[test]
fn tls13_rsa_and_ecdsa_negotiate_the_server_policy() {
    for cert in [rsa(), ecdsa()] {
        check_policy(
            cert,
            &rustls::version::TLS13,
            CipherSuite::TLS13_AES_128_GCM_SHA256,
        );
    }
}

#[test]
fn tls12_rsa_and_ecdsa_negotiate_the_server_policy() {
    check_policy(
        rsa(),
        &rustls::version::TLS12,
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    );
    check_policy(
        ecdsa(),
        &rustls::version::TLS12,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    );
}

#[test]
fn describe_names_version_suite_and_group() {
    let (client, server) = handshake(
        client_config(&ClientOptions::default()),
        server_for(ecdsa()),
        "localhost",
    )
    .unwrap();
    assert_eq!(describe(&server), "TLSv1.3 TLS13_AES_128_GCM_SHA256 X25519");
    assert_eq!(describe(&client), describe(&server));
    let fresh = ServerConnection::new(server_for(ecdsa())).unwrap();
    assert_eq!(describe(&fresh), "- - -");
}

/// rustls servers pick the key exchange group by the client's preference, so tern's group
/// order only governs its own clients: a client preferring the post-quantum hybrid gets it.
#[test]
fn server_follows_the_client_group_preference() {
    let hybrid_first = Arc::new(CryptoProvider {
        kx_groups: vec![kx_group::X25519MLKEM768, kx_group::X25519],
        ..(*provider()).clone()
    });
    let client = client_config_with_provider(&ClientOptions::default(), hybrid_first).unwrap();
    let (_, server) = handshake(client, server_for(ecdsa()), "localhost").unwrap();
    let group = server.negotiated_key_exchange_group().unwrap().name();
    assert_eq!(group, NamedGroup::X25519MLKEM768);
}

#[test]
fn tickets_resume_and_can_be_disabled() {
    for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
        let server = server_for(ecdsa());
        let with = client_config(&only(vec![version]));
        let (first, _) = handshake(with.clone(), server.clone(), "localhost").unwrap();
        assert_eq!(first.handshake_kind(), Some(HandshakeKind::Full));
        let (second, _) = handshake(with.clone(), server.clone(), "localhost").unwrap();
        assert_eq!(second.handshake_kind(), Some(HandshakeKind::Resumed));
        // A configuration built later (a reload) shares the ticket key, so tickets survive.
        let (third, _) = handshake(with, server_for(ecdsa()), "localhost").unwrap();
        assert_eq!(third.handshake_kind(), Some(HandshakeKind::Resumed));

        let opts = ClientOptions {
            resumption: false,
            ..only(vec![version])
        };
        let without = client_config(&opts);
        for _ in 0..2 {
            let (conn, _) = handshake(without.clone(), server.clone(), "localhost").unwrap();
            assert_eq!(conn.handshake_kind(), Some(HandshakeKind::Full));
        }
    }
}

/// RFC 9149: a client asking for no tickets gets none; one asking for several gets one, as
/// does one that does not ask.
#[test]
fn ticket_requests_are_honoured_up_to_one() {
    let server = server_for(ecdsa());
    for (request, expected) in [(None, 1), (Some(0), 0), (Some(5), 1)] {
        let store = Arc::new(CountingStore::default());
        let mut config = (*client_config(&only(vec![&rustls::version::TLS13]))).clone();
        config.resumption = Resumption::store(store.clone());
        config.send_ticket_request = request.map(|count| TicketRequest {
            new_session_count: count,
            resumption_count: count,
        });
        let (conn, _) = handshake(Arc::new(config), server.clone(), "localhost").unwrap();
        assert_eq!(conn.handshake_kind(), Some(HandshakeKind::Full));
        assert_eq!(
            store.tickets.load(Ordering::Relaxed),
            expected,
            "{request:?}"
        );
    }
}

/// A client session store that counts the TLS 1.3 tickets it receives.
#[derive(Debug)]
struct CountingStore {
    inner: ClientSessionMemoryCache,
    tickets: AtomicUsize,
}

impl Default for CountingStore {
    fn default() -> Self {
        Self {
            inner: ClientSessionMemoryCache::new(8),
            tickets: AtomicUsize::new(0),
        }
    }
}

impl ClientSessionStore for CountingStore {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(name, group);
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(name)
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.inner.set_tls12_session(name, value);
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.inner.tls12_session(name)
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.inner.remove_tls12_session(name);
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.tickets.fetch_add(1, Ordering::Relaxed);
        self.inner.insert_tls13_ticket(name, value);
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.inner.take_tls13_ticket(name)
    }
}

#[test]
fn insecure_accepts_any_name_roots_verify_for_real() {
    let server = server_for(ecdsa());
    let insecure = client_config(&ClientOptions::default());
    handshake(insecure.clone(), server.clone(), "not-the-name.example").unwrap();
    handshake(insecure, server_for(rsa()), "127.0.0.1").unwrap();

    let trusted = Verify::Roots(ecdsa().certified_key.cert.clone());
    let roots = client_config(&ClientOptions {
        verify: trusted,
        ..ClientOptions::default()
    });
    handshake(roots.clone(), server.clone(), "localhost").unwrap();
    handshake(roots.clone(), server.clone(), "127.0.0.1").unwrap();
    assert!(handshake(roots, server.clone(), "other.example").is_err());
    // A certificate from another issuer is refused. (A fresh client: the one above holds a
    // ticket for "localhost" that any tern server configuration in this process accepts.)
    let trusted = Verify::Roots(ecdsa().certified_key.cert.clone());
    let fresh = client_config(&ClientOptions {
        verify: trusted,
        ..ClientOptions::default()
    });
    assert!(handshake(fresh, server_for(rsa()), "localhost").is_err());
}

/// A TLS 1.1 ClientHello (as an old client would send) is refused with an alert.
#[test]
fn tls11_client_is_refused() {
    let mut server = ServerConnection::new(server_for(rsa())).unwrap();
    let hello = client_hello([0x03, 0x02], &[0xc0, 0x13, 0x00, 0x2f], &[]);
    server.read_tls(&mut hello.as_slice()).unwrap();
    let err = server.process_new_packets().unwrap_err();
    assert!(matches!(err, rustls::Error::PeerIncompatible(_)), "{err:?}");
    let mut alert = Vec::new();
    server.write_tls(&mut alert).unwrap();
    assert_eq!(alert.first(), Some(&0x15), "an alert record is sent");
}

/// A TLS 1.2 client offering only CBC and static-RSA suites finds nothing in common.
#[test]
fn tls12_client_without_aead_ecdhe_is_refused() {
    let mut server = ServerConnection::new(server_for(rsa())).unwrap();
    let extensions = [
        // supported_groups: x25519
        &[0x00, 0x0a, 0x00, 0x04, 0x00, 0x02, 0x00, 0x1d][..],
        // signature_algorithms: rsa_pkcs1_sha256
        &[0x00, 0x0d, 0x00, 0x04, 0x00, 0x02, 0x04, 0x01][..],
    ]
    .concat();
    // ECDHE-RSA-AES128-SHA, ECDHE-RSA-AES128-SHA256, RSA-AES128-GCM-SHA256
    let hello = client_hello(
        [0x03, 0x03],
        &[0xc0, 0x13, 0xc0, 0x27, 0x00, 0x9c],
        &extensions,
    );
    server.read_tls(&mut hello.as_slice()).unwrap();
    let err = server.process_new_packets().unwrap_err();
    assert_eq!(
        err,
        rustls::Error::PeerIncompatible(rustls::PeerIncompatible::NoCipherSuitesInCommon)
    );
}

/// A ClientHello record with the given legacy version, cipher suites and extensions.
fn client_hello(version: [u8; 2], suites: &[u8], extensions: &[u8]) -> Vec<u8> {
    let mut body = version.to_vec();
    body.extend([0x42; 32]); // random
    body.push(0); // empty session id
    body.extend(u16_be(suites.len()));
    body.extend(suites);
    body.extend([1, 0]); // compression: null only
    if !extensions.is_empty() {
        body.extend(u16_be(extensions.len()));
        body.extend(extensions);
    }
    let mut handshake = vec![1, 0]; // client_hello, length (24 bits)
    handshake.extend(u16_be(body.len()));
    handshake.extend(body);
    let mut record = vec![0x16, 0x03, 0x01]; // handshake record, legacy version TLS 1.0
    record.extend(u16_be(handshake.len()));
    record.extend(handshake);
    record
}

fn u16_be(len: usize) -> [u8; 2] {
    u16::try_from(len).unwrap().to_be_bytes()
}

#[test]
fn protocol_version_is_reported_for_tls12() {
    let client = client_config(&only(vec![&rustls::version::TLS12]));
    let (_, server) = handshake(client, server_for(rsa()), "localhost").unwrap();
    assert_eq!(server.protocol_version(), Some(ProtocolVersion::TLSv1_2));
    assert!(describe(&server).starts_with("TLSv1.2 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 "));
}
