//! Batched key exchanges and ECDSA P-256 signatures (`global.crypto_batch`) through the real
//! binary: rustls and `openssl s_client` handshakes with X25519 and an ECDSA certificate
//! succeed (TLS 1.3 and 1.2), and the batch counters of the exit summary account for every
//! one of them: in batches on a CPU with AVX-512 IFMA, as fallbacks without it.

#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::{s_client, CLOSE_REQUEST};
use support::*;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::ClientConnection;
use tern_tls::{ClientOptions, KeyKind, Verify};

const WAIT: Duration = Duration::from_secs(10);
const HANDSHAKES: usize = 16;

/// Whether tern's kernels run on this CPU (the test then expects batches, else fallbacks).
fn ifma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A client offering X25519 first, never resuming.
fn client() -> Arc<rustls::ClientConfig> {
    let opts = ClientOptions {
        verify: Verify::Insecure,
        resumption: false,
        ..ClientOptions::default()
    };
    tern_tls::client_config(&opts)
}

/// `n` handshakes whose ClientHellos reach tern together (each made, then all sent, then
/// each handshake finished with one request), as a burst of clients would: the worker sees
/// them in the same turns of its event loop, so they share batches.
fn burst(addr: SocketAddr, n: usize) -> usize {
    let config = client();
    let mut conns: Vec<(ClientConnection, TcpStream)> = (0..n)
        .map(|_| {
            let name = ServerName::try_from("localhost").unwrap();
            let conn = ClientConnection::new(Arc::clone(&config), name).unwrap();
            let tcp = TcpStream::connect(addr).unwrap();
            tcp.set_read_timeout(Some(WAIT)).unwrap();
            (conn, tcp)
        })
        .collect();
    // The ClientHellos, back to back.
    for (conn, tcp) in &mut conns {
        while conn.wants_write() {
            conn.write_tls(tcp).unwrap();
        }
    }
    let mut ok = 0;
    for (mut conn, mut tcp) in conns {
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp).unwrap();
        }
        let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
        tls.write_all(CLOSE_REQUEST).unwrap();
        let mut out = Vec::new();
        let _ = tls.read_to_end(&mut out);
        ok += usize::from(String::from_utf8_lossy(&out).starts_with("HTTP/1.1 200"));
    }
    ok
}

#[test]
fn batched_handshakes_succeed_and_are_counted() {
    let dir = temp_dir("cryptobatch");
    let cert = write_cert(&dir, "ecdsa", KeyKind::EcdsaP256);
    let toml = Config::new()
        .global("crypto_batch = { size = 8, deadline = \"5ms\" }")
        .tls(&[&format!("{cert:?}")])
        .toml();
    let tern = Tern::run_in(dir, &toml);
    let addr = tern.addr();

    assert_eq!(burst(addr, HANDSHAKES), HANDSHAKES);
    let mut x25519 = HANDSHAKES as u64;
    if have("openssl") {
        for _ in 0..2 {
            let run = s_client(addr, None, &["-groups", "X25519"], Some(CLOSE_REQUEST));
            assert!(run.ok && run.out.contains("HTTP/1.1 200"), "{}", run.out);
        }
        x25519 += 2;
    }

    let c = tern.stop_clean();
    let batch = |k: &str| c.get("crypto_batch all", k);
    assert_eq!(c.get("tls web", "full_x25519"), x25519);
    let fallbacks = batch("fallback_alone") + batch("fallback_no_ifma") + batch("fallback_failed");
    assert_eq!(batch("batched") + fallbacks, x25519, "{c:?}");
    assert_eq!(batch("unused"), 0);
    // Every full handshake signed once with the P-256 key, from a batched nonce pair.
    let signed = batch("ecdsa_signatures") + batch("ecdsa_fallbacks");
    assert_eq!(signed, x25519, "{c:?}");
    if ifma() {
        assert_eq!(batch("ecdsa_signatures"), x25519, "{c:?}");
        assert_eq!(batch("ecdsa_faults"), 0);
        assert_eq!(batch("ecdsa_pairs"), 8 * batch("ecdsa_batches"), "{c:?}");
        assert!(batch("ecdsa_pairs") >= x25519, "{c:?}");
    } else {
        assert_eq!(batch("ecdsa_batches"), 0);
    }
    if ifma() {
        assert!(batch("batches") >= 1, "{c:?}");
        assert!(batch("batched") >= 2, "{c:?}");
        let fills: u64 = (2..=8).map(|n| batch(&format!("fill_{n}"))).sum();
        assert_eq!(fills, batch("batches"));
        assert_eq!(batch("fallback_no_ifma"), 0);
    } else {
        assert_eq!(batch("fallback_no_ifma"), x25519);
        assert_eq!(batch("batches"), 0);
    }
}

/// Groups other than X25519, and TLS 1.2 (whose ECDSA certificate needs P-256 listed too),
/// never ask for a key exchange batch: nothing counted, nothing wasted. Their signatures
/// still take batched nonce pairs (no waiting involved).
#[test]
fn other_groups_do_not_ask_for_a_batch() {
    let dir = temp_dir("cryptobatch-p256");
    let cert = write_cert(&dir, "ecdsa", KeyKind::EcdsaP256);
    let toml = Config::new()
        .global("crypto_batch = { size = 8 }")
        .tls(&[&format!("{cert:?}")])
        .toml();
    let tern = Tern::run_in(dir, &toml);
    let addr = tern.addr();
    let mut ran = 0;
    if have("openssl") {
        for args in [
            &["-groups", "P-256"][..],
            &["-tls1_2", "-groups", "X25519:P-256"][..],
        ] {
            let run = s_client(addr, None, args, Some(CLOSE_REQUEST));
            assert!(run.ok && run.out.contains("HTTP/1.1 200"), "{}", run.out);
            ran += 1;
        }
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), ran);
    for key in ["batched", "fallback_alone", "fallback_no_ifma", "unused"] {
        assert_eq!(c.get("crypto_batch all", key), 0, "{key}");
    }
    let signed = |k: &str| c.get("crypto_batch all", k);
    assert_eq!(signed("ecdsa_signatures") + signed("ecdsa_fallbacks"), ran);
}

/// Batching is on without a `crypto_batch` table (the default), and `enabled = false` turns
/// it off: no batch line in the exit summary, the handshakes computed one at a time.
#[test]
fn on_by_default_and_off_when_disabled() {
    for (global, on) in [("", true), ("crypto_batch = { enabled = false }", false)] {
        let dir = temp_dir("cryptobatch-default");
        let cert = write_cert(&dir, "ecdsa", KeyKind::EcdsaP256);
        let toml = Config::new()
            .global(global)
            .tls(&[&format!("{cert:?}")])
            .toml();
        let tern = Tern::run_in(dir, &toml);
        assert_eq!(burst(tern.addr(), HANDSHAKES), HANDSHAKES);
        let c = tern.stop_clean();
        assert_eq!(c.get("tls web", "full_x25519"), HANDSHAKES as u64);
        assert_eq!(
            c.0.contains_key("crypto_batch all"),
            on,
            "{global:?}: {c:?}"
        );
        if on {
            let batch = |k: &str| c.get("crypto_batch all", k);
            let x25519 = batch("batched")
                + batch("fallback_alone")
                + batch("fallback_no_ifma")
                + batch("fallback_failed");
            assert_eq!(x25519, HANDSHAKES as u64, "{c:?}");
            let signed = batch("ecdsa_signatures") + batch("ecdsa_fallbacks");
            assert_eq!(signed, HANDSHAKES as u64, "{c:?}");
        }
    }
}
